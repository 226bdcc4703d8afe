import type { Context } from 'hono';
import type { GatewayEnv, Transport } from '../context.js';
import { MCP_PATH, surfaceOf } from '../rest/surfaces.js';

/**
 * The transport a request came by, once answered (the access log's and the metrics' label;
 * `TRANSPORTS` in src/context.ts names them all).
 */
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
