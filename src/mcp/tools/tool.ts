/*
 * What an MCP tool is (docs/MCP.md): what an agent can ask of the memory, each a registered
 * GraphQL operation (src/mcp/tools.graphql) run in-process with the request's own context,
 * as the REST adapters run theirs. A tool declares its input (zod: it validates the call
 * and becomes the JSON Schema `tools/list` shows), its output (structuredContent's schema),
 * its annotations and its operation; `run` maps the arguments to the operation's variables
 * and its answer to structured content plus a text for the model (./format.ts). A tool
 * never runs its operation itself: it is handed a call that runs the one it declared.
 */

import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import type { ToolAnnotations } from '@modelcontextprotocol/server';
import type { z } from 'zod';
import { GatewayError } from '../../errors.js';

/** What a tool answers: the structured content (its output schema's) and a text for the model. */
export interface ToolAnswer {
  structured: Record<string, unknown>;
  text: string;
}

/** What a tool's run is handed: its own operation, to run with the request's context. */
export interface ToolCall<Result, Variables> {
  execute(variables: Variables): Promise<Result>;
  /**
   * A write tool's run: it reads back what it wrote in full when the key may also read,
   * else only the ids and versions a write-only key (an extraction pipeline's) is handed back.
   */
  executeReadingBack(
    variables: Omit<Variables, 'readBack'>,
  ): Promise<{ data: Result; readBack: boolean }>;
}

export interface McpTool<
  Input extends z.ZodObject = z.ZodObject,
  Result = unknown,
  Variables = Record<string, unknown>,
> {
  name: string;
  title: string;
  /** Written for a model: what it answers, and what the time arguments mean. */
  description: string;
  input: Input;
  output: z.ZodObject;
  annotations: ToolAnnotations;
  /** The operation it runs (src/mcp/tools.graphql). */
  operation: TypedDocumentNode<Result, Variables>;
  /**
   * The @include / @skip values `tools/list` judges a key by: recall's widest call, a write
   * tool's ids-only one (`readBack`: any key that may write may call it).
   */
  listedWith?: Record<string, unknown>;
  /** What to add to WRITE_OUTCOME_UNKNOWN's message: how to retry this tool safely. */
  retry?: string;
  /**
   * What its operation's NOT_FOUND means, in the words the other tools use for the same
   * thing (`notFoundIn`), once the dataset is known to exist.
   */
  notFound?(args: z.output<Input>): GatewayError;
  run(call: ToolCall<Result, Variables>, args: z.output<Input>): Promise<ToolAnswer>;
}

/** A tool, typed by its input and operation (one name for the idiom: every tool is declared with it). */
export const tool = <Input extends z.ZodObject, Result, Variables>(
  declared: McpTool<Input, Result, Variables>,
): McpTool => declared as unknown as McpTool;

/** What a client may assume of the read tools: they change nothing, and the memory is closed-world. */
export const READS: ToolAnnotations = { readOnlyHint: true, openWorldHint: false };
/** Of the write tools: they add, not destroy, and a repeat is another write (unless a tool says). */
export const WRITES: ToolAnnotations = {
  readOnlyHint: false,
  destructiveHint: false,
  idempotentHint: false,
  openWorldHint: false,
};

/** What `tools/list` judges a write tool that reads back by: the ids-only call. */
export const WRITE_ONLY = { readBack: false };

/**
 * The one NOT_FOUND of a tool: what it did not find, in which dataset, the same words
 * whichever tool looked (`No fact … in dataset "user_42"`).
 */
export const notFoundIn = (dataset: string, what: string) =>
  new GatewayError('NOT_FOUND', `No ${what} in dataset "${dataset}"`);

/**
 * A fact not found by its id; `believedNow`: a tool that needs it believed now (deleting
 * it), so a fact deleted or superseded already is not found either.
 */
export const factNotFound = (dataset: string, factId: string, believedNow = false) =>
  notFoundIn(dataset, `fact ${factId}${believedNow ? ' believed now' : ''}`);

/**
 * A dataset the key's workspace does not have, said so (not answered as an empty one),
 * with the names it may have been meant as (`nearest`), or what to do when there are none.
 */
export function unknownDataset(
  dataset: string,
  nearest: readonly string[],
  workspaceHasDatasets: boolean,
): GatewayError {
  const quoted = nearest.map((name) => `"${name}"`);
  const last = quoted.pop();
  const hint =
    last !== undefined
      ? `; did you mean ${quoted.length ? `${quoted.join(', ')} or ${last}` : last}?`
      : workspaceHasDatasets
        ? '; list_datasets names its datasets'
        : ': it has none yet (record_episode or create_memory creates one)';
  return new GatewayError('NOT_FOUND', `No dataset "${dataset}" in this workspace${hint}`);
}
