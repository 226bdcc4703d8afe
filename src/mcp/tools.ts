/*
 * The MCP tools (docs/MCP.md), each declared with its subject in tools/, and the one place
 * /mcp runs their operations: a tool is handed its own operation to run, with the request's
 * context, so no tool reaches the schema by another path.
 */

import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import type { RequestContext } from '../context.js';
import { nearestNames } from '../domain/names.js';
import { GatewayError } from '../errors.js';
import {
  McpDatasetNamesDocument,
  McpDatasetResourceDocument,
  type McpDatasetResourceQuery,
} from '../generated/operations.js';
import { runOperation } from '../rest/runOperation.js';
import { MAX_PAGE_SIZE } from '../schema/args.js';
import { scopesOf } from '../schema/authScopes.js';
import { schema } from '../schema/index.js';
import { authorizeOperation } from '../schema/operationScopes.js';
import { listDatasets, whatChanged } from './tools/datasets.js';
import { recordEpisode } from './tools/episodes.js';
import { deleteFact, entityFacts, factHistory, listFacts } from './tools/facts.js';
import { createMemory, updateMemory } from './tools/memories.js';
import { afterCursor } from './tools/pages.js';
import { recall } from './tools/recall.js';
import { type McpTool, type ToolAnswer, type ToolCall, unknownDataset } from './tools/tool.js';

/** Every tool, in the order `tools/list` gives them. */
export const MCP_TOOLS: readonly McpTool[] = [
  recall,
  listFacts,
  entityFacts,
  factHistory,
  whatChanged,
  listDatasets,
  recordEpisode,
  deleteFact,
  createMemory,
  updateMemory,
];

/** Why the key may not run an operation whole (the refusal runOperation would answer), or null. */
export function refusalOf(
  ctx: RequestContext,
  operation: TypedDocumentNode<unknown, never>,
  variables: Record<string, unknown> = {},
) {
  return authorizeOperation(schema, operation, { variables }, scopesOf(ctx), { fields: false });
}

/** How many of the workspace's dataset names an unknown one is compared with, at most. */
const COMPARED_NAMES = 1000;

/**
 * NOT_FOUND naming the dataset and the names it may have been meant as, when it names
 * none of the key's workspace; null when it does, or when the key may not read the
 * workspace's datasets (a write-only key's tool says what it did not find instead).
 */
export async function datasetNotFound(
  ctx: RequestContext,
  dataset: string,
): Promise<GatewayError | null> {
  if (refusalOf(ctx, McpDatasetNamesDocument)) return null;
  const names: string[] = [];
  let after: string | undefined;
  do {
    const page = await runOperation(ctx, McpDatasetNamesDocument, {
      dataset,
      first: MAX_PAGE_SIZE,
      ...afterCursor(after),
    });
    if (page.dataset) return null;
    names.push(...page.datasets.edges.map((edge) => edge.node.name));
    const { hasNextPage, endCursor } = page.datasets.pageInfo;
    after = hasNextPage ? (endCursor ?? undefined) : undefined;
  } while (after !== undefined && names.length < COMPARED_NAMES);
  return unknownDataset(dataset, nearestNames(dataset, names), names.length > 0);
}

const isNotFound = (error: unknown) => error instanceof GatewayError && error.code === 'NOT_FOUND';

/**
 * A tool's answer to a call with these (validated) arguments. A dataset the workspace does
 * not have is said so, whichever tool was called: a read's operation finds no dataset
 * (GraphQL's `dataset(name:)` is null) rather than an empty one, and a write's NOT_FOUND
 * is then not the fact's or the memory's (docs/MCP.md, "Errors").
 */
export function runTool(
  ctx: RequestContext,
  tool: McpTool,
  args: Record<string, unknown>,
): Promise<ToolAnswer> {
  const dataset = typeof args.dataset === 'string' ? args.dataset : null;
  const call: ToolCall<unknown, Record<string, unknown>> = {
    async execute(variables) {
      let data: unknown;
      try {
        data = await runOperation(ctx, tool.operation, variables);
      } catch (error) {
        if (!isNotFound(error) || dataset === null) throw error;
        throw (await datasetNotFound(ctx, dataset)) ?? tool.notFound?.(args) ?? error;
      }
      const read = data as { dataset?: unknown };
      if (dataset !== null && read.dataset === null) {
        const unknown = await datasetNotFound(ctx, dataset);
        if (unknown) throw unknown;
      }
      return data;
    },
    async executeReadingBack(variables) {
      const readBack = !refusalOf(ctx, tool.operation, { readBack: true });
      return { data: await call.execute({ ...variables, readBack }), readBack };
    },
  };
  return tool.run(call, args);
}

/** What the resource of a dataset tells (src/mcp/resources.ts): the dataset, counted. */
export type DatasetSummary = NonNullable<McpDatasetResourceQuery['dataset']>;

/**
 * The dataset of that name in the key's workspace, summed up, for its MCP resource; one
 * the workspace does not have is NOT_FOUND in the tools' words, with the nearest names.
 */
export async function readDatasetSummary(
  ctx: RequestContext,
  dataset: string,
): Promise<DatasetSummary> {
  const data = await runOperation(ctx, McpDatasetResourceDocument, { dataset });
  if (data.dataset) return data.dataset;
  throw (await datasetNotFound(ctx, dataset)) ?? unknownDataset(dataset, [], true);
}
