/*
 * The gateway as an MCP server (docs/MCP.md): `POST /mcp`, the Streamable HTTP transport of
 * the official SDK, stateless. The edge's admission pipeline (src/http/app.ts) has decided
 * the request before it gets here (key, rate and fairness limits, body, Origin); each call
 * then runs one tool's registered operation through runOperation, which decides its
 * scopes before anything runs. Every request gets its own SDK server and transport: there
 * is no session to keep, bound or end, and nothing of one key's lives on into another's.
 */

import {
  CallToolRequestSchema,
  InitializeRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  PingRequestSchema,
  ReadResourceRequestSchema,
  SubscriptionsListenRequestSchema,
} from '@modelcontextprotocol/core';
import {
  type CallToolResult,
  createMcpHandler,
  isLegacyRequest,
  PROTOCOL_VERSION_META_KEY,
  ProtocolError,
  ProtocolErrorCode,
  Server,
  type ServerEventBus,
  SUPPORTED_PROTOCOL_VERSIONS,
  type Tool,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/server/validators/ajv';
import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { Logger } from 'pino';
import { z } from 'zod';
import {
  type AuthenticatedContext,
  type GatewayEnv,
  type RequestContext,
  unauthenticated,
} from '../context.js';
import {
  ERROR_STATUS,
  type ErrorCode,
  GatewayError,
  maskError,
  WRITE_OUTCOME_UNKNOWN_MESSAGE,
} from '../errors.js';
import { errorResponse, jsonRpcErrorBody } from '../rest/errorBodies.js';
import { describeIssues } from '../validation.js';
import { type FollowedDataset, followDatasets } from './listen.js';
import {
  DATASET_TEMPLATE,
  datasetOfUri,
  listDatasetResources,
  readDatasetResource,
} from './resources.js';
import { whatChanged } from './tools/datasets.js';
import type { McpTool } from './tools/tool.js';
import { datasetNotFound, MCP_TOOLS, refusalOf, runTool } from './tools.js';

/** MCP's current revision: stateless, served beside the 2025 ones (docs/MCP.md, "Revisions"). */
export const MODERN_REVISION = '2026-07-28';

const SERVER_INFO = { name: 'memory-gateway', title: 'Bi-temporal agent memory', version: '0.1.0' };

/** What the server tells a model about itself at initialization. */
const INSTRUCTIONS =
  'Long-term memory with two time axes. Facts (subject, predicate, object) are true in the world from validAt until validUntil, and believed by the memory from recordedAt until invalidAt. Read tools answer what is true and believed now unless given validAt (what was true then, as known now) or knownAt (what the memory believed then). Use recall before answering about the user; record_episode to remember what a conversation taught; what_changed with the cursor it returned last to catch up.';

/** Each tool's `tools/list` entry, made once: its schemas as JSON Schema (draft 7, as the SDK's own). */
const LISTED = new Map<string, Tool>(
  MCP_TOOLS.map((tool) => [
    tool.name,
    {
      name: tool.name,
      title: tool.title,
      description: tool.description,
      inputSchema: z.toJSONSchema(tool.input, {
        target: 'draft-7',
        io: 'input',
      }) as Tool['inputSchema'],
      outputSchema: z.toJSONSchema(tool.output, {
        target: 'draft-7',
        io: 'output',
      }) as Tool['outputSchema'],
      annotations: tool.annotations,
    },
  ]),
);

const TOOLS_BY_NAME = new Map(MCP_TOOLS.map((tool) => [tool.name, tool]));

/**
 * One JSON Schema validator for every request's server: the SDK makes a new Ajv instance
 * per server otherwise, a quarter of a millisecond of CPU per call (bench/mcp.ts).
 */
const SCHEMA_VALIDATOR = new AjvJsonSchemaValidator();

/** Why a key may not call a tool (the refusal its operation would get), or null: it may. */
const toolRefusal = (tool: McpTool, ctx: RequestContext) =>
  refusalOf(ctx, tool.operation, tool.listedWith);

/**
 * A request the gateway refused or failed, as a JSON-RPC error for the SDK to answer with:
 * the gateway's code and message (`data.code`), as every refusal on /mcp says them
 * (src/rest/errorBodies.ts); a dataset's resource that is not there is MCP's resource not
 * found: -32602 with the URI in `data` (2026-07-28 moved it there from -32002, and the SDK
 * answers it so in every era).
 */
function protocolErrorOf(error: unknown, uri?: string): ProtocolError {
  const masked = maskError(error);
  const code = String(masked.extensions.code);
  if (code === 'NOT_FOUND' && uri !== undefined) {
    return new ProtocolError(ProtocolErrorCode.InvalidParams, masked.message, { uri });
  }
  const { error: body } = jsonRpcErrorBody(code, masked.message);
  return new ProtocolError(body.code, body.message, body.data);
}

/** A tool call that failed, as the model sees it: the gateway's code, then its message. */
function toolError(code: string, message: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: `${code}: ${message}` }] };
}

interface McpOptions {
  logger?: Logger | undefined;
  /** Where failed calls are counted, by code: the gateway's metrics, handed in by the edge. */
  metrics?: { errors: { inc(labels: { code: string }): void } } | undefined;
}

/** What the key may follow and read of the datasets: what `what_changed` may (null), or why not. */
const datasetsRefusal = (ctx: RequestContext) => toolRefusal(whatChanged, ctx);

/**
 * The SDK server for one request of either era: the tools for the request's key, and the
 * datasets as resources (src/mcp/resources.ts), which the current revision's
 * `subscriptions/listen` also follows (src/mcp/listen.ts).
 */
function serverFor(ctx: RequestContext, era: 'legacy' | 'modern', options: McpOptions): Server {
  const server = new Server(SERVER_INFO, {
    // Following needs the current revision: the 2025 ones' subscriptions live on a session.
    capabilities: { tools: {}, resources: { subscribe: era === 'modern' } },
    instructions: INSTRUCTIONS,
    jsonSchemaValidator: SCHEMA_VALIDATOR,
    supportedProtocolVersions: [MODERN_REVISION, ...SUPPORTED_PROTOCOL_VERSIONS],
  });
  serveTools(server, ctx, options);
  serveDatasetResources(server, ctx);
  return server;
}

/** The datasets as resources, for a key that may read their change feed. */
function serveDatasetResources(server: Server, ctx: RequestContext): void {
  const checked = <T>(answer: () => Promise<T>, uri?: string) => {
    const refusal = datasetsRefusal(ctx);
    if (refusal) throw protocolErrorOf(new GatewayError('FORBIDDEN', refusal.message));
    return answer().catch((error: unknown) => {
      throw protocolErrorOf(error, uri);
    });
  };
  server.setRequestHandler('resources/templates/list', () =>
    checked(async () => ({ resourceTemplates: [DATASET_TEMPLATE] })),
  );
  server.setRequestHandler('resources/list', (request) =>
    checked(() => listDatasetResources(ctx, request.params?.cursor)),
  );
  server.setRequestHandler('resources/read', (request) => {
    const { uri } = request.params;
    const named = datasetOfUri(uri);
    if ('problem' in named) throw new ProtocolError(ProtocolErrorCode.InvalidParams, named.problem);
    return checked(() => readDatasetResource(ctx, uri, named.dataset), uri);
  });
}

/** `tools/list` and `tools/call` for the request's key. */
function serveTools(server: Server, ctx: RequestContext, { logger, metrics }: McpOptions): void {
  server.setRequestHandler('tools/list', () => ({
    tools: MCP_TOOLS.filter((tool) => !toolRefusal(tool, ctx)).map(
      (tool) => LISTED.get(tool.name)!,
    ),
  }));
  server.setRequestHandler('tools/call', async (request) => {
    const tool = TOOLS_BY_NAME.get(request.params.name);
    // An unknown tool is the client's protocol mistake (MCP: -32602), not a tool's failure.
    if (!tool) {
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `Unknown tool: ${request.params.name}`,
      );
    }
    const failed = (code: string, message: string) => {
      metrics?.errors.inc({ code });
      return toolError(code, message);
    };
    const refusal = toolRefusal(tool, ctx);
    if (refusal) return failed('FORBIDDEN', refusal.message);
    const args = tool.input.safeParse(request.params.arguments ?? {});
    if (!args.success) return failed('BAD_USER_INPUT', describeIssues(args.error.issues));
    try {
      const answer = await runTool(ctx, tool, args.data);
      return {
        content: [{ type: 'text', text: answer.text }],
        structuredContent: answer.structured,
      } satisfies CallToolResult;
    } catch (error) {
      const masked = maskError(error);
      const code = String(masked.extensions.code);
      if (!(code in ERROR_STATUS) || ERROR_STATUS[code as ErrorCode] >= 500) {
        // The answer is a tool result (HTTP 200), so the edge would not log it as a failure.
        logger?.error(
          { requestId: ctx.requestId, tool: tool.name, code, err: error },
          'tool call failed',
        );
      }
      const message =
        code === 'WRITE_OUTCOME_UNKNOWN'
          ? `${WRITE_OUTCOME_UNKNOWN_MESSAGE}. For this tool: ${tool.retry ?? 'retry with the same arguments'}`
          : masked.message;
      return failed(code, message);
    }
  });
}

/**
 * A refusal the edge's pipeline makes on /mcp (a rate limit, the workspace's fairness slot),
 * in MCP's terms: when the request is one `tools/call`, a tool result with `isError` (HTTP
 * 200, Retry-After kept), so the model sees the code and can act on it; anything else a
 * JSON-RPC error (the request's id, when there is one) with the HTTP status. The body is
 * read only once the edge has bounded it (the request context is built after the body
 * limit).
 */
export async function mcpRefusal(
  c: Context<GatewayEnv>,
  code: ErrorCode,
  message: string,
): Promise<Response> {
  const bounded = c.req.method === 'POST' && c.get('requestContext') !== undefined;
  // Hono keeps the text once read (answerMcpBatches reads it first), so it is read once.
  const request = bounded ? requestOf(await c.req.text()) : null;
  if (request?.method === 'tools/call') {
    // A result of the current revision says it is whole, as the SDK's own results do.
    const current = typeof request.params?._meta?.[PROTOCOL_VERSION_META_KEY] === 'string';
    const result = current
      ? { ...toolError(code, message), resultType: 'complete' }
      : toolError(code, message);
    return c.json({ jsonrpc: '2.0', id: request.id, result }, 200);
  }
  return c.json(
    jsonRpcErrorBody(code, message, request?.id ?? null),
    ERROR_STATUS[code] as ContentfulStatusCode,
  );
}

const JsonRpcRequest = z.object({
  jsonrpc: z.literal('2.0'),
  id: z.union([z.string(), z.number()]),
  method: z.string(),
  params: z
    .object({ _meta: z.record(z.string(), z.unknown()).optional() })
    .optional()
    .catch(undefined),
});

/** The method, id and `_meta` of a body that is one JSON-RPC request, or null. */
function requestOf(text: string): z.output<typeof JsonRpcRequest> | null {
  try {
    const parsed = JsonRpcRequest.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/** The requests the server answers, by method, with the SDK's own schema of each. */
const REQUEST_SCHEMAS = new Map<string, z.ZodType>([
  ['initialize', InitializeRequestSchema],
  ['ping', PingRequestSchema],
  ['tools/list', ListToolsRequestSchema],
  ['tools/call', CallToolRequestSchema],
  ['resources/templates/list', ListResourceTemplatesRequestSchema],
  ['resources/list', ListResourcesRequestSchema],
  ['resources/read', ReadResourceRequestSchema],
  ['subscriptions/listen', SubscriptionsListenRequestSchema],
]);

/** A body the transport may read, or the JSON-RPC error that answers it instead. */
type ParsedMessages =
  | { ok: true; body: unknown }
  | { ok: false; status: 200 | 400; answer: Record<string, unknown> };

/**
 * The body, parsed, with each request's params checked against its method's schema before
 * the SDK sees it: the SDK answers a request whose params it cannot read as an internal
 * error (-32603) carrying zod's raw report, where the mistake is the client's (-32602,
 * "Invalid params", naming each field). A body that is not JSON gets the SDK's own parse
 * error.
 */
function parseMessages(text: string): ParsedMessages {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    const error = { code: ProtocolErrorCode.ParseError, message: 'Parse error: Invalid JSON' };
    return { ok: false, status: 400, answer: { jsonrpc: '2.0', id: null, error } };
  }
  for (const message of Array.isArray(body) ? body : [body]) {
    if (typeof message !== 'object' || message === null || !('id' in message)) continue;
    const { method, id } = message as { method?: unknown; id?: unknown };
    const schema = typeof method === 'string' ? REQUEST_SCHEMAS.get(method) : undefined;
    const checked = schema?.safeParse(message);
    if (!checked || checked.success) continue;
    const error = {
      code: ProtocolErrorCode.InvalidParams,
      message: `Invalid params: ${describeIssues(checked.error.issues)}`,
    };
    const answerId = typeof id === 'string' || typeof id === 'number' ? id : null;
    return { ok: false, status: 200, answer: { jsonrpc: '2.0', id: answerId, error } };
  }
  return { ok: true, body };
}

/**
 * `/mcp`'s answer to a POST that passed the edge's pipeline (mounted by src/http/app.ts,
 * which counts a streamed answer as a connection held open). A message of the current
 * revision (it names it in its `_meta`) is served by the SDK's stateless handler; one of a
 * 2025 revision (no such claim: `initialize` and what follows it) by its Streamable HTTP
 * transport, with JSON answers. Both run one server per request: there is no session to
 * keep, bound or end, and nothing of one key's lives on into another's. GET, DELETE and
 * every other method are 405 with `Allow: POST` (src/http/routeMethods.ts): stateless, the
 * server offers no stream of its own and no session to end, as the transport allows.
 */
export async function serveMcp(c: Context<GatewayEnv>, options: McpOptions): Promise<Response> {
  const ctx = c.get('requestContext');
  if (!ctx.auth) {
    return errorResponse(c, 'mcp', 'UNAUTHENTICATED', unauthenticated(ctx.authProblem).message);
  }
  const parsed = parseMessages(await c.req.text());
  if (!parsed.ok) return c.json(parsed.answer, parsed.status);
  const server = (era: 'legacy' | 'modern') => serverFor(ctx, era, options);
  if (await isLegacyRequest(c.req.raw, parsed.body)) {
    return answerLegacy(c.req.raw, parsed.body, server('legacy'));
  }
  return answerModern(c, ctx as AuthenticatedContext, parsed.body, server, options);
}

/** A 2025 revision's message, answered by the SDK's Streamable HTTP transport, statelessly. */
async function answerLegacy(request: Request, body: unknown, server: Server): Promise<Response> {
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  await server.connect(transport);
  try {
    return await transport.handleRequest(request, { parsedBody: body });
  } finally {
    await server.close();
  }
}

/**
 * A message of the current revision, answered by the SDK's stateless handler. A
 * `subscriptions/listen` naming datasets follows them from here (src/mcp/listen.ts): on an
 * event bus of this request's own, fed by the key's own streams.
 */
async function answerModern(
  c: Context<GatewayEnv>,
  ctx: AuthenticatedContext,
  body: unknown,
  server: (era: 'legacy' | 'modern') => Server,
  options: McpOptions,
): Promise<Response> {
  const listen = SubscriptionsListenRequestSchema.safeParse(body);
  let following: ReturnType<typeof followDatasets> | null = null;
  let bus: ServerEventBus | undefined;
  if (listen.success && listen.data.params.notifications.resourceSubscriptions?.length) {
    const id = (body as { id: string | number }).id;
    const followed = datasetsFollowed(ctx, listen.data.params.notifications.resourceSubscriptions);
    if ('refused' in followed) return c.json({ jsonrpc: '2.0', id, error: followed.refused }, 200);
    try {
      // The caps first: a listen past them is refused before a dataset is looked up.
      following = followDatasets(ctx, followed.datasets);
    } catch (error) {
      const masked = maskError(error);
      const code = String(masked.extensions.code) as ErrorCode;
      options.metrics?.errors.inc({ code });
      if (code === 'RATE_LIMITED') c.header('Retry-After', String(LISTEN_RETRY_AFTER_SECONDS));
      return c.json(
        jsonRpcErrorBody(code, masked.message, id),
        (ERROR_STATUS[code] ?? 500) as ContentfulStatusCode,
      );
    }
    const missing = await missingDataset(ctx, followed.datasets);
    if (missing) {
      following.close();
      return c.json({ jsonrpc: '2.0', id, error: missing }, 200);
    }
    bus = following.bus;
  }
  const handler = createMcpHandler(({ era }) => server(era), {
    legacy: 'reject',
    ...(bus ? { bus } : {}),
    onerror: (error) => options.logger?.debug({ requestId: ctx.requestId, err: error }, 'mcp'),
  });
  let response: Response;
  try {
    await following?.ready;
    response = await handler.fetch(c.req.raw, { parsedBody: body });
  } catch (error) {
    following?.close();
    throw error;
  }
  return following
    ? following.announceOn(response, (body as { id: string | number }).id)
    : response;
}

/** Retry-After of a listen refused at a cap: a place frees when another stream ends. */
const LISTEN_RETRY_AFTER_SECONDS = 5;

/** The most datasets one listen follows (each is one of the key's live streams). */
const MAX_FOLLOWED = 100;

/**
 * The datasets a listen's `resourceSubscriptions` name, or the JSON-RPC error refusing it:
 * a URI that is not a dataset's (-32602), a key that may not read the change feed
 * (FORBIDDEN).
 */
function datasetsFollowed(
  ctx: AuthenticatedContext,
  uris: readonly string[],
): { datasets: FollowedDataset[] } | { refused: { code: number; message: string } } {
  const distinct = [...new Set(uris)];
  if (distinct.length > MAX_FOLLOWED) {
    const message = `Invalid params: ${distinct.length} resources to follow; at most ${MAX_FOLLOWED} in one listen`;
    return { refused: { code: ProtocolErrorCode.InvalidParams, message } };
  }
  const datasets: FollowedDataset[] = [];
  for (const uri of distinct) {
    const named = datasetOfUri(uri);
    if ('problem' in named) {
      return {
        refused: {
          code: ProtocolErrorCode.InvalidParams,
          message: `Invalid params: ${named.problem}`,
        },
      };
    }
    datasets.push({ uri, dataset: named.dataset });
  }
  const refusal = datasetsRefusal(ctx);
  if (refusal) return { refused: jsonRpcErrorBody('FORBIDDEN', refusal.message).error };
  return { datasets };
}

/**
 * The first dataset followed that the workspace does not have, as the JSON-RPC error
 * `resources/read` answers it with (resource not found: -32602, the URI in `data`, the
 * nearest names), or null. Looked up together: the request's loader reads them at once.
 */
async function missingDataset(ctx: AuthenticatedContext, datasets: readonly FollowedDataset[]) {
  const missing = await Promise.all(datasets.map(({ dataset }) => datasetNotFound(ctx, dataset)));
  const index = missing.findIndex((error) => error !== null);
  if (index < 0) return null;
  const { uri } = datasets[index]!;
  const { code, message } = protocolErrorOf(missing[index], uri);
  return { code, message, data: { uri } };
}
