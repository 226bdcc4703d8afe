/*
 * The datasets as MCP resources (docs/MCP.md, "Following a dataset"): `memory://dataset/{name}`
 * names one dataset of the key's workspace. `resources/list` pages through them,
 * `resources/read` sums one up, and on 2026-07-28 `subscriptions/listen` announces each
 * change of the ones an agent follows (src/mcp/listen.ts), which it then reads with
 * `what_changed` from the cursor it kept. The URI names no workspace: the key does, as for
 * every tool, so the same URI is another dataset under another workspace's key.
 */

import type {
  ListResourcesResult,
  ListResourceTemplatesResult,
} from '@modelcontextprotocol/server';
import type { RequestContext } from '../context.js';
import { nameSchema } from '../schema/args.js';
import { describeIssues } from '../validation.js';

type Resource = ListResourcesResult['resources'][number];
type ResourceTemplate = ListResourceTemplatesResult['resourceTemplates'][number];

import { listDatasets } from './tools/datasets.js';
import { type DatasetSummary, readDatasetSummary, runTool } from './tools.js';

const SCHEME = 'memory://dataset/';

/** The one template `resources/templates/list` gives. */
export const DATASET_TEMPLATE: ResourceTemplate = {
  uriTemplate: `${SCHEME}{name}`,
  name: 'dataset',
  title: 'A dataset of this workspace',
  description:
    "One memory (a user, an agent, a conversation): reading it tells what it holds now; following it (subscriptions/listen, MCP 2026-07-28) announces each of its changes, which what_changed then tells from the cursor you kept. {name} is the dataset's name, as list_datasets gives it.",
  mimeType: 'application/json',
};

const datasetUri = (name: string) => `${SCHEME}${encodeURIComponent(name)}`;

/** The dataset a resource URI names, or why it names none (the client's mistake, -32602). */
export function datasetOfUri(uri: string): { dataset: string } | { problem: string } {
  if (!uri.startsWith(SCHEME)) {
    return {
      problem: `${JSON.stringify(uri)} is not a dataset's URI (${DATASET_TEMPLATE.uriTemplate})`,
    };
  }
  let name: string;
  try {
    name = decodeURIComponent(uri.slice(SCHEME.length));
  } catch {
    return {
      problem: `${JSON.stringify(uri)} is not a dataset's URI: its name is not URI-encoded`,
    };
  }
  const checked = nameSchema.safeParse(name);
  if (!checked.success) {
    return {
      problem: `${JSON.stringify(uri)} names no dataset: ${describeIssues(checked.error.issues)}`,
    };
  }
  return { dataset: checked.data };
}

const datasetResource = (name: string): Resource => ({
  uri: datasetUri(name),
  name,
  title: `Dataset ${name}`,
  mimeType: 'application/json',
});

/** How many datasets one `resources/list` page gives (the tools' largest page). */
const RESOURCES_PAGE = 100;

/** A page of the workspace's datasets as resources, after `cursor` (list_datasets' cursor). */
export async function listDatasetResources(
  ctx: RequestContext,
  cursor: string | undefined,
): Promise<{ resources: Resource[]; nextCursor?: string }> {
  const answer = await runTool(ctx, listDatasets, {
    limit: RESOURCES_PAGE,
    ...(cursor === undefined ? {} : { cursor }),
  });
  const { datasets, nextCursor } = answer.structured as {
    datasets: { name: string }[];
    nextCursor: string | null;
  };
  return {
    resources: datasets.map((d) => datasetResource(d.name)),
    ...(nextCursor ? { nextCursor } : {}),
  };
}

/** What reading a dataset's resource answers: the dataset now, counted, as JSON. */
export async function readDatasetResource(ctx: RequestContext, uri: string, dataset: string) {
  const summary: DatasetSummary = await readDatasetSummary(ctx, dataset);
  const text = JSON.stringify({
    name: summary.name,
    createdAt: summary.createdAt,
    facts: summary.facts.totalCount,
    episodes: summary.episodes.totalCount,
    memories: summary.memories.totalCount,
    changes: summary.changes.totalCount,
  });
  return { contents: [{ uri, mimeType: 'application/json', text }] };
}
