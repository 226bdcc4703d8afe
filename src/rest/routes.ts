import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { GatewayEnv } from '../context.js';
import { errorResponse, methodNotAllowed, type Surface } from './errorBodies.js';
import { memorySodaRoutes } from './memorySoda.js';
import { supaCloudRoutes } from './supaCloud.js';
import { SURFACE_BASES } from './surfaces.js';

/**
 * The REST surfaces as the edge sees them, derived from the routes each surface serves
 * (declared with `createRoute`: their OpenAPI paths, `{param}` for a path parameter):
 * which methods a path allows (405 answers with `Allow`), and which parameter a raw path
 * segment is (400 answers naming it). Nothing here repeats a route by hand.
 */

/** A route as declared: its method (lower-case, as createRoute takes it) and OpenAPI path. */
interface DeclaredRoute {
  method: string;
  path: string;
}

/** The routes an app serves, read from its OpenAPI registry (what `app.openapi` declared). */
function servedRoutes(app: OpenAPIHono<GatewayEnv>): DeclaredRoute[] {
  return app.openAPIRegistry.definitions.flatMap((d) => (d.type === 'route' ? [d.route] : []));
}

const PARAM = /^\{(.+)\}$/;

/** A declared path as a matcher of raw (still percent-encoded) paths: a `{param}` is one segment. */
function pathMatcher(path: string): RegExp {
  const segments = path
    .split('/')
    .map((segment) =>
      PARAM.test(segment) ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
    );
  return new RegExp(`^${segments.join('/')}$`);
}

/** What the edge needs to know of the declared routes. */
interface RouteTable {
  /** Each declared path once, with the methods declared on it, in declaration order. */
  paths: { pattern: RegExp; methods: string[] }[];
  /** Which path parameter a raw segment is, by the literal segment before it (`datasets/{dataset}`). */
  segmentParam: Record<string, string>;
}

function routeTable(routes: readonly DeclaredRoute[]): RouteTable {
  const table: RouteTable = { paths: [], segmentParam: {} };
  for (const route of routes) {
    const method = route.method.toUpperCase();
    const pattern = pathMatcher(route.path);
    const same = table.paths.find((p) => p.pattern.source === pattern.source);
    if (!same) table.paths.push({ pattern, methods: [method] });
    else if (!same.methods.includes(method)) same.methods.push(method);

    const segments = route.path.split('/');
    for (let i = 1; i < segments.length; i++) {
      const param = PARAM.exec(segments[i]!)?.[1];
      const before = segments[i - 1]!;
      if (!param || PARAM.test(before)) continue;
      const known = table.segmentParam[before];
      if (known !== undefined && known !== param) {
        throw new Error(`"${before}/" is followed by {${known}} and by {${param}}`);
      }
      table.segmentParam[before] = param;
    }
  }
  return table;
}

/**
 * In front of a surface's routes, once the edge has judged the key (src/http/authenticateFirst.ts:
 * 401 in the surface's shape before the path or query is looked at): well-formed path
 * segments (a malformed percent-encoding is a 400 naming the parameter).
 */
function restGuard(surface: Surface, table: RouteTable) {
  return async (c: Context<GatewayEnv>, next: () => Promise<void>) => {
    const segments = new URL(c.req.url).pathname.split('/');
    for (let i = 1; i < segments.length; i++) {
      try {
        decodeURIComponent(segments[i]!);
      } catch {
        const param = table.segmentParam[segments[i - 1]!] ?? 'path';
        return errorResponse(
          c,
          surface,
          'BAD_USER_INPUT',
          `${param}: malformed percent-encoding in "${segments[i]}"`,
        );
      }
    }
    await next();
  };
}

/** A request under a surface that no route served: 405 with `Allow` on a known path, else 404. */
function restNotFound(c: Context, surface: Surface, table: RouteTable): Response {
  const pathname = new URL(c.req.url).pathname;
  const methods = table.paths.find((p) => p.pattern.test(pathname))?.methods;
  if (methods) return methodNotAllowed(c, surface, methods);
  return errorResponse(c, surface, 'NOT_FOUND', `No route ${c.req.method} ${c.req.path}`);
}

/** The path patterns the edge's per-route middleware (CORS, limits, the context) covers. */
export const REST_PATHS = Object.values(SURFACE_BASES).map((base) => `${base}/*`);

/**
 * Both surfaces on the gateway's app, each behind its guard. Returns the answer for a
 * request under a surface that no route served (the app's notFound handler calls it).
 */
export function mountRestRoutes(
  app: OpenAPIHono<GatewayEnv>,
): (c: Context, surface: Surface) => Response {
  const surfaces: Record<Surface, OpenAPIHono<GatewayEnv>> = {
    memorySoda: memorySodaRoutes(),
    supaCloud: supaCloudRoutes(),
  };
  const table = routeTable(Object.values(surfaces).flatMap(servedRoutes));
  for (const surface of Object.keys(surfaces) as Surface[]) {
    app.use(`${SURFACE_BASES[surface]}/*`, restGuard(surface, table));
  }
  for (const routes of Object.values(surfaces)) app.route('/', routes);
  return (c, surface) => restNotFound(c, surface, table);
}
