import type { MiddlewareHandler } from 'hono';
import { setResponseHeader as setHeader } from './responseHeaders.js';

/**
 * One CORS policy for GraphQL and REST (CORS_ORIGINS). Keys travel in the Authorization
 * header, never in cookies, so `Access-Control-Allow-Credentials` is never sent: a page
 * on another origin can call the API only with a key it was given.
 *
 * Not hono/cors: it writes its headers before the handler runs, which makes Hono copy
 * every response into a new one (about a tenth of the gateway's CPU per request, see
 * docs/PERFORMANCE.md); here they are set on the finished response in place. HTML
 * answers (GraphiQL's page) never get CORS headers, so no other origin can read them.
 */
export type CorsOrigins = '*' | readonly string[];

const ALLOW_METHODS = 'GET, POST, DELETE, OPTIONS';
// MCP's clients send their protocol version (and, where a server keeps them, a session id);
// on 2026-07-28 also the method and the tool's or resource's name of each request.
const ALLOW_HEADERS =
  'Authorization, Content-Type, X-Request-Id, Mcp-Protocol-Version, Mcp-Session-Id, Mcp-Method, Mcp-Name';
const EXPOSE_HEADERS = 'X-Request-Id, Retry-After';
const PREFLIGHT_MAX_AGE_SECONDS = '600';

/** The Access-Control-Allow-Origin value for a request's Origin, or null: none. */
function allowedOrigin(origins: CorsOrigins, origin: string | undefined): string | null {
  if (origins === '*') return '*';
  return origin && origins.includes(origin) ? origin : null;
}

/**
 * Whether a request with this Origin may call (a WebSocket upgrade, MCP): none sent (not a
 * browser's page), the gateway's own origin (its host is the request's Host), or one the
 * CORS policy allows.
 */
export function originMayCall(
  origins: CorsOrigins,
  origin: string | undefined,
  host: string | undefined,
): boolean {
  if (origin === undefined) return true;
  if (URL.parse(origin)?.host === host) return true;
  return allowedOrigin(origins, origin) !== null;
}

/**
 * Preflights (`OPTIONS`) are answered here, before authentication and rate limiting; every
 * other answer on the route, errors included, gets the same headers once it is finished.
 */
export function corsPolicy(origins: CorsOrigins): MiddlewareHandler {
  const vary = origins !== '*';
  return async (c, next) => {
    const allow = allowedOrigin(origins, c.req.header('origin'));
    if (c.req.method === 'OPTIONS') {
      const headers = new Headers();
      if (vary) headers.set('Vary', 'Origin');
      if (allow) {
        headers.set('Access-Control-Allow-Origin', allow);
        headers.set('Access-Control-Allow-Methods', ALLOW_METHODS);
        headers.set('Access-Control-Allow-Headers', ALLOW_HEADERS);
        headers.set('Access-Control-Max-Age', PREFLIGHT_MAX_AGE_SECONDS);
      }
      return new Response(null, { status: 204, headers });
    }
    await next();
    if (vary) {
      const existing = c.res.headers.get('vary');
      if (
        !existing
          ?.toLowerCase()
          .split(/\s*,\s*/)
          .includes('origin')
      ) {
        setHeader(c, 'Vary', existing ? `${existing}, Origin` : 'Origin');
      }
    }
    if (!allow || c.res.headers.get('content-type')?.startsWith('text/html')) return;
    setHeader(c, 'Access-Control-Allow-Origin', allow);
    setHeader(c, 'Access-Control-Expose-Headers', EXPOSE_HEADERS);
  };
}
