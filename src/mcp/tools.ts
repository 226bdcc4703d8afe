/*
 * The MCP tools (docs/MCP.md), each declared with its subject in tools/, and the one place
 * /mcp runs their operations: a tool is handed its own operation to run, with the request's
 * context, so no tool reaches the schema by another path.
 */

import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import type { RequestContext } from '../context.js';
import { runOperation } from '../rest/runOperation.js';
import { scopesOf } from '../schema/authScopes.js';
import { schema } from '../schema/index.js';
import { authorizeOperation } from '../schema/operationScopes.js';
import { listDatasets, whatChanged } from './tools/datasets.js';
import { recordEpisode } from './tools/episodes.js';
import { deleteFact, entityFacts, factHistory, listFacts } from './tools/facts.js';
import { createMemory, updateMemory } from './tools/memories.js';
import { recall } from './tools/recall.js';
import type { McpTool, ToolAnswer, ToolCall } from './tools/tool.js';

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

/** A tool's answer to a call with these (validated) arguments. */
export function runTool(
  ctx: RequestContext,
  tool: McpTool,
  args: Record<string, unknown>,
): Promise<ToolAnswer> {
  const call: ToolCall<unknown, Record<string, unknown>> = {
    execute: (variables) => runOperation(ctx, tool.operation, variables),
    async executeReadingBack(variables) {
      const readBack = !refusalOf(ctx, tool.operation, { readBack: true });
      return { data: await call.execute({ ...variables, readBack }), readBack };
    },
  };
  return tool.run(call, args);
}
