/*
 * The facts tools: a dataset's facts page by page, an entity's facts, one fact's history,
 * and deleting a fact that is wrong.
 */

import { z } from 'zod';
import {
  McpDeleteFactDocument,
  McpEntityFactsDocument,
  McpFactHistoryDocument,
  McpListFactsDocument,
} from '../../generated/operations.js';
import { MAX_NESTED_LIST_SIZE, nameSchema, querySchema, uuidSchema } from '../../schema/args.js';
import { deletedFactText, entityFactsText, factHistoryText, factPageText } from './format.js';
import { afterCursor, cursor, pageOf, pageOutput, pageSize } from './pages.js';
import { asOfTimeArgs, dataset, entity, factId, factOutput, timeArgs } from './schemas.js';
import { factNotFound, notFoundIn, READS, tool, WRITES } from './tool.js';

export const listFacts = tool({
  name: 'list_facts',
  title: 'List facts',
  description:
    'The facts of a dataset, the most recent validAt first, a page at a time (pass nextCursor back as cursor for the next). By default the facts true and believed now. q keeps facts whose subject, predicate and object hold every word of q. includeInvalidated adds superseded and deleted facts. validAt: what was true at that time (as known now); knownAt: what the memory believed at that time; asOf: both. episodeId: the facts one episode produced.',
  input: z.object({
    dataset,
    q: querySchema.optional().describe('Words every listed fact must contain.'),
    limit: pageSize('facts'),
    cursor: cursor('list_facts').optional(),
    includeInvalidated: z
      .boolean()
      .optional()
      .describe('Also superseded and deleted facts (every state).'),
    ...asOfTimeArgs,
    episodeId: uuidSchema.optional().describe('Only the facts this episode produced.'),
  }),
  output: z.object({ facts: z.array(factOutput), ...pageOutput }),
  annotations: READS,
  operation: McpListFactsDocument,
  async run(call, { limit, cursor: after, ...args }) {
    const data = await call.execute({ ...args, first: limit, ...afterCursor(after) });
    const { nodes: facts, nextCursor } = pageOf(data.dataset?.facts);
    const total = data.dataset?.facts.totalCount ?? 0;
    return {
      structured: { facts, total, nextCursor },
      text: factPageText(facts, total, nextCursor),
    };
  },
});

export const entityFacts = tool({
  name: 'entity_facts',
  title: "An entity's facts",
  description:
    'Every fact whose subject or object is the named entity (a person, place, product...), the most recent validAt first. By default the facts true and believed now; validAt: what was true at that time (as known now); knownAt: what the memory believed at that time. An entity the dataset does not know is NOT_FOUND.',
  input: z.object({
    dataset,
    entity: nameSchema.describe('The entity\'s name, e.g. "honda civic" (case does not matter).'),
    limit: z
      .number()
      .int('must be a whole number')
      .min(1, `must be between 1 and ${MAX_NESTED_LIST_SIZE}`)
      .max(MAX_NESTED_LIST_SIZE, `must be between 1 and ${MAX_NESTED_LIST_SIZE}`)
      .default(100)
      .describe(`How many facts at most (1-${MAX_NESTED_LIST_SIZE}).`),
    ...timeArgs,
  }),
  output: z.object({ entity, facts: z.array(factOutput) }),
  annotations: READS,
  operation: McpEntityFactsDocument,
  async run(call, { entity: name, limit, ...args }) {
    const data = await call.execute({ ...args, name, first: limit });
    const found = data.dataset?.entity;
    if (!found) throw notFoundIn(args.dataset, `entity named "${name}"`);
    const { facts, ...entity } = found;
    return { structured: { entity, facts }, text: entityFactsText(entity, facts) };
  },
});

/** A fact another names: its id. */
const factRef = z.object({ factId: z.string() }).nullable();

export const factHistory = tool({
  name: 'fact_history',
  title: "A fact's history",
  description:
    'One fact, whatever its state, with what superseded it and the history of its statement: every fact with the same subject and predicate, the most recent validAt first (how the value changed over time, and when the memory learned each change). A correctionOf / correctedBy pair marks the version of a fact the memory recorded once it learned when the value changed.',
  input: z.object({
    dataset,
    factId,
    limit: pageSize('facts of the history'),
  }),
  output: z.object({
    fact: factOutput.extend({
      supersededBy: factOutput.nullable(),
      correctionOf: factRef,
      correctedBy: factRef,
    }),
    history: z.array(factOutput.extend({ supersededBy: factRef, correctionOf: factRef })),
  }),
  annotations: READS,
  operation: McpFactHistoryDocument,
  async run(call, { limit, ...args }) {
    const data = await call.execute({ ...args, first: limit });
    const found = data.dataset?.fact;
    if (!found) throw factNotFound(args.dataset, args.factId);
    const { history, ...fact } = found;
    return { structured: { fact, history }, text: factHistoryText(fact, history) };
  },
});

export const deleteFact = tool({
  name: 'delete_fact',
  title: 'Delete a fact that is wrong',
  description:
    'Says a fact was wrong: it stops being believed from now on (its history stays readable with knownAt). Deletes once: a fact already deleted or superseded, or unknown, is NOT_FOUND. To record that a value changed, record an episode with a replacing fact instead.',
  input: z.object({ dataset, factId }),
  output: z.object({ factId: z.string(), deleted: z.boolean() }),
  annotations: { ...WRITES, destructiveHint: true },
  operation: McpDeleteFactDocument,
  notFound: ({ dataset, factId }) => factNotFound(dataset, factId, true),
  async run(call, args) {
    const data = await call.execute(args);
    return { structured: data.deleteFact, text: deletedFactText(data.deleteFact.factId) };
  },
});
