/*
 * The gateway as an MCP server (docs/MCP.md): `POST /mcp`, the Streamable HTTP transport of
 * the official SDK, stateless. The edge's admission pipeline (src/http/app.ts) has decided
 * the request before it gets here (key, rate and fairness limits, body, Origin); each call
 * then runs one tool's registered operation through runOperation, which decides its
 * scopes before anything runs. Every request gets its own SDK server and transport: there
 * is no session to keep, bound or end, and nothing of one key's lives on into another's.
 */

import type { OpenAPIHono } from '@hono/zod-openapi';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { MAX_BATCH_SIZE } from '@modelcontextprotocol/sdk/server/requestBody.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  DEFAULT_NEGOTIATED_PROTOCOL_VERSION,
  InitializeRequestSchema,
  isInitializeRequest,
  isJSONRPCErrorResponse,
  isJSONRPCNotification,
  isJSONRPCResultResponse,
  ErrorCode as JsonRpcErrorCode,
  ListToolsRequestSchema,
  PingRequestSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { Context, MiddlewareHandler } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { Logger } from 'pino';
import { z } from 'zod';
import { type GatewayEnv, type RequestContext, unauthenticated } from '../context.js';
import { isJsonMediaType } from '../domain/jsonBodies.js';
import {
  ERROR_STATUS,
  type ErrorCode,
  maskError,
  WRITE_OUTCOME_UNKNOWN_MESSAGE,
} from '../errors.js';
import { errorResponse, jsonRpcErrorBody } from '../rest/errorBodies.js';
import { MCP_PATH } from '../rest/surfaces.js';
import { describeIssues } from '../validation.js';
import type { McpTool } from './tools/tool.js';
import { MCP_TOOLS, refusalOf, runTool } from './tools.js';

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
 * A JSON-RPC error for the SDK to answer a request with (it sends `code` and `message`). Not
 * an McpError: that one's message already reads "MCP error <code>: …", and the client's
 * McpError puts the same prefix before the message it receives, so it would read twice.
 */
function protocolError(code: number, message: string): Error & { code: number } {
  return Object.assign(new Error(message), { code });
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

/** The SDK server for one request: `tools/list` and `tools/call` for the request's key. */
function serverFor(ctx: RequestContext, { logger, metrics }: McpOptions): Server {
  const server = new Server(SERVER_INFO, {
    capabilities: { tools: {} },
    instructions: INSTRUCTIONS,
    jsonSchemaValidator: SCHEMA_VALIDATOR,
  });
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: MCP_TOOLS.filter((tool) => !toolRefusal(tool, ctx)).map(
      (tool) => LISTED.get(tool.name)!,
    ),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const tool = TOOLS_BY_NAME.get(request.params.name);
    // An unknown tool is the client's protocol mistake (MCP: -32602), not a tool's failure.
    if (!tool) {
      throw protocolError(JsonRpcErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
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
  return server;
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
    return c.json({ jsonrpc: '2.0', id: request.id, result: toolError(code, message) }, 200);
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
});

/** The method and id of a body that is one JSON-RPC request, or null. */
function requestOf(text: string): { id: string | number; method: string } | null {
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
    const error = { code: JsonRpcErrorCode.ParseError, message: 'Parse error: Invalid JSON' };
    return { ok: false, status: 400, answer: { jsonrpc: '2.0', id: null, error } };
  }
  for (const message of Array.isArray(body) ? body : [body]) {
    if (typeof message !== 'object' || message === null || !('id' in message)) continue;
    const { method, id } = message as { method?: unknown; id?: unknown };
    const schema = typeof method === 'string' ? REQUEST_SCHEMAS.get(method) : undefined;
    const checked = schema?.safeParse(message);
    if (!checked || checked.success) continue;
    const error = {
      code: JsonRpcErrorCode.InvalidParams,
      message: `Invalid params: ${describeIssues(checked.error.issues)}`,
    };
    const answerId = typeof id === 'string' || typeof id === 'number' ? id : null;
    return { ok: false, status: 200, answer: { jsonrpc: '2.0', id: answerId, error } };
  }
  return { ok: true, body };
}

/** The revision that removed JSON-RPC batches from MCP (its changelog, PR #416). */
const BATCHES_REMOVED = '2025-06-18';

/** A body that is a JSON array: JSON's whitespace, then `[`. */
const BATCH = /^[ \t\n\r]*\[/;

/** The gateway's one door, as the edge hands it: each message of a batch goes through it. */
type Door = (request: Request, env: GatewayEnv['Bindings']) => Response | Promise<Response>;

/** A JSON-RPC answer (a result or an error) to one message. */
type JsonRpcAnswer = { jsonrpc: '2.0'; id: string | number | null } & Record<string, unknown>;

const invalidRequest = (why: string) => ({
  jsonrpc: '2.0' as const,
  id: null,
  error: { code: JsonRpcErrorCode.InvalidRequest, message: `Invalid Request: ${why}` },
});

/**
 * Why a batch is refused whole, before any of its messages runs, or null. The revision is
 * the request's MCP-Protocol-Version, or 2025-03-26 without one (as the specification has
 * a server assume); one the SDK does not speak is refused as it refuses a single message.
 */
function batchRefusal(header: string | undefined, messages: unknown[]) {
  const revision = header ?? DEFAULT_NEGOTIATED_PROTOCOL_VERSION;
  if (!SUPPORTED_PROTOCOL_VERSIONS.includes(revision)) {
    const message = `Bad Request: Unsupported protocol version: ${revision} (supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`;
    return { jsonrpc: '2.0' as const, id: null, error: { code: -32000, message } };
  }
  if (revision >= BATCHES_REMOVED) {
    return invalidRequest(`batches are not part of MCP ${revision}; send one message per request`);
  }
  if (messages.length === 0) return invalidRequest('an empty batch');
  if (messages.length > MAX_BATCH_SIZE) {
    return invalidRequest(
      `a batch of ${messages.length} messages; at most ${MAX_BATCH_SIZE} in one`,
    );
  }
  // MCP 2025-03-26: "The initialize request MUST NOT be part of a JSON-RPC batch".
  if (messages.some(isInitializeRequest)) {
    return invalidRequest('initialize must be sent alone, not in a batch');
  }
  return null;
}

/** One message of a batch as a request of its own: the batch's headers, its own body and id. */
function messageRequest(c: Context<GatewayEnv>, message: unknown, index: number): Request {
  const body = new TextEncoder().encode(JSON.stringify(message));
  const headers = new Headers(c.req.raw.headers);
  headers.delete('transfer-encoding');
  // Its length said, as a client's would be: the body limit checks it without reading.
  headers.set('content-length', String(body.byteLength));
  // The access log ties each message to its batch (past 128 characters the edge makes an id).
  headers.set('x-request-id', `${c.get('requestId')}:${index + 1}`);
  return new Request(c.req.url, {
    method: 'POST',
    headers,
    body,
    signal: c.req.raw.signal,
  });
}

const idOf = (message: unknown): string | number | null => {
  const id = (message as { id?: unknown } | null)?.id;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
};

/**
 * What JSON-RPC answers one message of a batch, from its own request's response: nothing
 * to a notification or a response (even a refused one), else the answer, under the
 * message's id when the edge refused it before reading it.
 */
async function answerTo(message: unknown, response: Response): Promise<JsonRpcAnswer | null> {
  if (
    isJSONRPCNotification(message) ||
    isJSONRPCResultResponse(message) ||
    isJSONRPCErrorResponse(message)
  ) {
    await response.body?.cancel();
    return null;
  }
  const id = idOf(message);
  const body = (await response.json().catch(() => null)) as Record<string, unknown> | null;
  if (body?.jsonrpc === '2.0' && ('result' in body || 'error' in body)) {
    return { ...body, jsonrpc: '2.0', id: idOf(body) ?? id };
  }
  const error = {
    code: JsonRpcErrorCode.InternalError,
    message: `Internal error: no JSON-RPC answer (HTTP ${response.status})`,
  };
  return { jsonrpc: '2.0', id, error };
}

/**
 * JSON-RPC batches on `/mcp`, mounted by the edge after the key is verified and before the
 * per-key rate limit and the workspace's fairness slot. On the revisions that have batches
 * (2025-03-26 and earlier), each message goes through the gateway's one door as a request
 * of its own, all at once, as a client's concurrent requests would: each takes its rate
 * point and fairness slot, and leaves its log line, metric and span (docs/MCP.md,
 * "Batches"); the answers come back as one array. On later revisions a batch is refused
 * before anything runs. Anything else passes on to the route.
 */
export function answerMcpBatches(door: Door): MiddlewareHandler<GatewayEnv> {
  return async (c, next) => {
    // Without a valid key, 401 came first; a body not sent as JSON is the SDK's to refuse.
    if (c.req.method !== 'POST' || !c.get('requestContext').auth) return next();
    if (!isJsonMediaType(c.req.header('content-type'))) return next();
    const text = await c.req.text();
    if (!BATCH.test(text)) return next();
    let messages: unknown[];
    try {
      messages = JSON.parse(text) as unknown[];
    } catch {
      return next(); // The route answers JSON-RPC's parse error.
    }
    const refusal = batchRefusal(c.req.header('mcp-protocol-version'), messages);
    if (refusal) return c.json(refusal, 400);
    const incoming = (c.env as GatewayEnv['Bindings'] | undefined)?.incoming;
    const env: GatewayEnv['Bindings'] = { transport: 'mcp', ...(incoming ? { incoming } : {}) };
    const answered = await Promise.all(
      messages.map(async (message, index) => {
        // JSON-RPC: what is no object (a batch in the batch, say) is an Invalid Request.
        if (typeof message !== 'object' || message === null || Array.isArray(message)) {
          return { retryAfter: 0, answer: invalidRequest('a message must be a JSON-RPC object') };
        }
        const response = await door(messageRequest(c, message, index), env);
        const retryAfter = Number(response.headers.get('retry-after')) || 0;
        return { retryAfter, answer: await answerTo(message, response) };
      }),
    );
    // The longest wait any message was asked for.
    const retryAfter = Math.max(...answered.map((a) => a.retryAfter));
    if (retryAfter > 0) c.header('Retry-After', String(retryAfter));
    const answers = answered.flatMap(({ answer }) => (answer ? [answer] : []));
    return answers.length > 0 ? c.json(answers, 200) : c.body(null, 202);
  };
}

/**
 * `/mcp` on the gateway's app, behind the edge's pipeline. POST carries every message;
 * stateless, the server offers no stream of its own (GET) and no session to end (DELETE):
 * they and every other method are 405 with `Allow: POST`, as the transport's specification
 * allows, by the edge's rule for any path a route serves (src/http/routeMethods.ts).
 */
export function mountMcp(app: OpenAPIHono<GatewayEnv>, options: McpOptions): void {
  app.post(MCP_PATH, async (c) => {
    const ctx = c.get('requestContext');
    if (!ctx.auth) {
      return errorResponse(c, 'mcp', 'UNAUTHENTICATED', unauthenticated(ctx.authProblem).message);
    }
    const parsed = parseMessages(await c.req.text());
    if (!parsed.ok) return c.json(parsed.answer, parsed.status);
    const server = serverFor(ctx, options);
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    await server.connect(transport);
    try {
      return await transport.handleRequest(c.req.raw, { parsedBody: parsed.body });
    } finally {
      await server.close();
    }
  });
}
