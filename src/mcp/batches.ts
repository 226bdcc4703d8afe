/*
 * JSON-RPC batches on `/mcp` (docs/MCP.md, "Batches"): split into requests of their own on
 * the revisions that have batches, each through the gateway's one door, and refused whole
 * on the others, before anything runs.
 */

import {
  DEFAULT_NEGOTIATED_PROTOCOL_VERSION,
  isInitializeRequest,
  isJSONRPCErrorResponse,
  isJSONRPCNotification,
  isJSONRPCResultResponse,
  PROTOCOL_VERSION_META_KEY,
  ProtocolErrorCode,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/server';
import type { Context, MiddlewareHandler } from 'hono';
import type { GatewayEnv } from '../context.js';
import { isJsonMediaType } from '../domain/jsonBodies.js';
import { MODERN_REVISION } from './server.js';

/** The most messages one batch may carry (the SDK's 1.x transport's bound, kept). */
const MAX_BATCH_SIZE = 100;

/** The revision that removed JSON-RPC batches from MCP (its changelog, PR #416). */
const BATCHES_REMOVED = '2025-06-18';

/** A body that is a JSON array: JSON's whitespace, then `[`. */
const BATCH = /^[ \t\n\r]*\[/;

/** The gateway's one door, as the edge hands it: each message of a batch goes through it. */
type Door = (request: Request, env: GatewayEnv['Bindings']) => Response | Promise<Response>;

/** A JSON-RPC answer (a result or an error) to one message. */
type JsonRpcAnswer = { jsonrpc: '2.0'; id: string | number | null } & Record<string, unknown>;

/** A message that names its revision in its own `_meta`, as only the current revision's do. */
const claimsCurrentRevision = (message: unknown) =>
  typeof (message as { params?: { _meta?: Record<string, unknown> } } | null)?.params?._meta?.[
    PROTOCOL_VERSION_META_KEY
  ] === 'string';

const batchesRemovedIn = (revision: string) =>
  `batches are not part of MCP ${revision}; send one message per request`;

const invalidRequest = (why: string) => ({
  jsonrpc: '2.0' as const,
  id: null,
  error: { code: ProtocolErrorCode.InvalidRequest, message: `Invalid Request: ${why}` },
});

/**
 * Why a batch is refused whole, before any of its messages runs, or null. The revision is
 * the request's MCP-Protocol-Version, or 2025-03-26 without one (as the specification has
 * a server assume); one the SDK does not speak is refused as it refuses a single message.
 */
function batchRefusal(header: string | undefined, messages: unknown[]) {
  const revision = header ?? DEFAULT_NEGOTIATED_PROTOCOL_VERSION;
  const served = [MODERN_REVISION, ...SUPPORTED_PROTOCOL_VERSIONS];
  if (!served.includes(revision)) {
    const message = `Bad Request: Unsupported protocol version: ${revision} (supported versions: ${served.join(', ')})`;
    return { jsonrpc: '2.0' as const, id: null, error: { code: -32000, message } };
  }
  if (revision >= BATCHES_REMOVED) return invalidRequest(batchesRemovedIn(revision));
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
    code: ProtocolErrorCode.InternalError,
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
    // A message of the current revision says so in its own `_meta`; that revision has no batches.
    const modern = messages.some(claimsCurrentRevision);
    const refusal = modern
      ? invalidRequest(batchesRemovedIn(MODERN_REVISION))
      : batchRefusal(c.req.header('mcp-protocol-version'), messages);
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
