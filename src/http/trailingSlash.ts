import type { Context, Env, Hono } from 'hono';
import { MCP_PATH } from '../rest/surfaces.js';
import { type CorsOrigins, corsPolicy } from './cors.js';
import { routeMethods } from './routeMethods.js';

/**
 * Trailing slashes, decided where a 404 would be answered (the app's notFound handler, after
 * the edge's pipeline): a path that ends in `/` (not `/` itself) and names a route once the
 * slashes are trimmed is answered 308 Permanent Redirect to the path without them, the query
 * kept (`/api/memories/?limit=5` → `/api/memories?limit=5`). One URL per route (the OpenAPI
 * document's, the access log's, the metrics'); 308, unlike 301, keeps the method and body,
 * so a POST follows too. A path no route serves without its slash keeps its 404, and on the
 * REST surfaces the key is still checked first (a request without one is a 401, as on any
 * path there).
 *
 * Not hono/trailing-slash (4.13): `trimTrailingSlash()` answers 301, for GET and HEAD only,
 * to any path that 404s (routes or not), with an absolute Location built from the Host header.
 *
 * The Location is relative (a proxy's Host never leaks into it), so it must never read as
 * scheme-relative: a path the URL parser makes start with `//` (`//evil.com/`, `/\evil.com/`,
 * a tab between the slashes) is never redirected. The REST surfaces' redirects carry CORS
 * headers from their own middleware; on GraphQL's and MCP's paths (matched exactly, so no
 * middleware of theirs runs for `/graphql/`) the policy is applied here, preflights included,
 * so a browser's cross-origin call follows the redirect. Pages' redirects carry none.
 */
export function trailingSlashRedirect<E extends Env>(
  app: Hono<E>,
  corsOrigins: CorsOrigins,
): (c: Context) => Promise<Response | null> {
  const cors = corsPolicy(corsOrigins);
  const methodsAt = routeMethods(app);
  /** Whether a route (not a middleware) serves `path`. */
  const isRoute = (path: string) => methodsAt(path).length > 0;
  return async (c) => {
    const path = c.req.path;
    if (path.length < 2 || !path.endsWith('/')) return null;
    const url = new URL(c.req.url);
    const trimmed = url.pathname.replace(/\/+$/, '');
    if (trimmed === '' || trimmed.startsWith('//') || !isRoute(path.replace(/\/+$/, ''))) {
      return null;
    }
    const location = `${trimmed}${url.search}`;
    if (trimmed !== '/graphql' && trimmed !== MCP_PATH) return c.redirect(location, 308);
    const preflight = await cors(c, async () => {
      c.res = c.redirect(location, 308);
    });
    return preflight ?? c.res;
  };
}
