import type { Context } from 'hono';
import type { GatewayEnv } from '../context.js';
import { MCP_PATH, surfaceOf } from '../rest/surfaces.js';

/**
 * Every way an operation reaches the gateway. Each one hands its requests to the edge's one
 * admission pipeline (src/http/app.ts): the key, the scopes, trusted documents, cost and
 * depth, the rate limits and the workspace's fairness slot are decided there, before
 * anything runs, and the answer leaves through the same masking, access log, metrics and
 * span. A transport only parses, calls `gateway.fetch` and shapes the answer; none reaches
 * the executor another way. `test/hardening/transportMatrix.test.ts` walks every rule over
 * every transport named here: a transport added without its column fails it.
 */
export const TRANSPORTS = [
  /** GraphQL over HTTP, POST (application/json and the other media types Yoga reads). */
  'graphql-post',
  /** GraphQL over HTTP, GET (queries only). */
  'graphql-get',
  /** GraphQL over server-sent events (a subscription's stream, or any answer asked as one). */
  'graphql-sse',
  /** GraphQL over WebSocket (graphql-ws): src/http/webSocket.ts. */
  'graphql-ws',
  /** The REST compatibility routes (src/rest/): named operations run in-process. */
  'rest',
  /** MCP's Streamable HTTP transport (src/mcp/): each tool a named operation run in-process. */
  'mcp',
] as const;

export type Transport = (typeof TRANSPORTS)[number];

/** The transport a request came by, once answered (the access log's and the metrics' label). */
export function transportOf(c: Context<GatewayEnv>): Transport | null {
  const handedIn = (c.env as GatewayEnv['Bindings'] | undefined)?.transport;
  if (handedIn) return handedIn;
  if (surfaceOf(c.req.path)) return 'rest';
  if (c.req.path === MCP_PATH) return 'mcp';
  if (c.req.path !== '/graphql') return null;
  // An SSE answer, or a request for one that was refused before it began.
  if (c.res.headers.get('content-type')?.startsWith('text/event-stream')) return 'graphql-sse';
  const accept = c.req.header('accept') ?? '';
  if (accept.includes('text/event-stream') && !accept.includes('json')) return 'graphql-sse';
  return c.req.method === 'GET' ? 'graphql-get' : 'graphql-post';
}
