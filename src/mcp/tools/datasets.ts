/*
 * The datasets tools: the workspace's datasets, and one dataset's change feed (what
 * changed since the cursor an agent kept).
 */

import { z } from 'zod';
import { McpListDatasetsDocument, McpWhatChangedDocument } from '../../generated/operations.js';
import { changesText, datasetsText } from './format.js';
import { afterCursor, cursor, pageOf, pageOutput, pageSize } from './pages.js';
import { dataset, factOutput } from './schemas.js';
import { READS, tool } from './tool.js';

export const whatChanged = tool({
  name: 'what_changed',
  title: 'What changed in a dataset',
  description:
    "The dataset's change feed, oldest first: every change after a cursor (facts recorded, superseded, corrected, deleted, restored; episodes recorded and erased; memories created and changed). Without a cursor it starts at the beginning. Keep the cursor it answers and pass it next time: nothing is missed and nothing is told twice.",
  input: z.object({
    dataset,
    after: cursor('what_changed').optional(),
    limit: pageSize('changes'),
  }),
  output: z.object({
    changes: z.array(
      z.object({
        id: z.string(),
        kind: z.string(),
        at: z.string(),
        cursor: z.string(),
        fact: factOutput.nullable(),
        episode: z
          .object({ episodeId: z.string(), source: z.string(), occurredAt: z.string() })
          .nullable(),
        memory: z
          .object({ memoryId: z.string(), text: z.string(), version: z.number() })
          .nullable(),
        erased: z
          .object({
            episodes: z.number(),
            facts: z.number(),
            entities: z.number(),
            memories: z.number(),
            restoredFacts: z.number(),
          })
          .nullable(),
      }),
    ),
    cursor: z.string().nullable(),
    hasMore: z.boolean(),
  }),
  annotations: READS,
  operation: McpWhatChangedDocument,
  async run(call, { limit, ...args }) {
    const data = await call.execute({ ...args, first: limit });
    const page = data.dataset?.changes;
    const { nodes: changes } = pageOf(page);
    // Where to resume: after the last change told, or where this call began.
    const resume = page?.pageInfo.endCursor ?? args.after ?? null;
    const hasMore = page?.pageInfo.hasNextPage ?? false;
    return {
      structured: { changes, cursor: resume, hasMore },
      text: changesText(changes, resume, hasMore),
    };
  },
});

export const listDatasets = tool({
  name: 'list_datasets',
  title: 'List datasets',
  description:
    "The datasets of this key's workspace, by name, a page at a time (pass nextCursor back as cursor for the next). Each dataset is one memory: a user, an agent, a conversation.",
  input: z.object({
    limit: pageSize('datasets'),
    cursor: cursor('list_datasets').optional(),
  }),
  output: z.object({
    datasets: z.array(z.object({ name: z.string(), createdAt: z.string() })),
    ...pageOutput,
  }),
  annotations: READS,
  operation: McpListDatasetsDocument,
  async run(call, { limit, cursor: after }) {
    const data = await call.execute({ first: limit, ...afterCursor(after) });
    const { nodes: datasets, nextCursor } = pageOf(data.datasets);
    return {
      structured: { datasets, total: data.datasets.totalCount, nextCursor },
      text: datasetsText(datasets),
    };
  },
});
