import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { type GatewayEnv, unauthenticated } from '../context.js';
import { errorResponse, type Surface } from './errorBodies.js';
import { MEMORY_SODA_ROUTES, memorySodaRoutes } from './memorySoda.js';
import { SUPACLOUD_ROUTES, supaCloudRoutes } from './supaCloud.js';
import { SURFACE_BASES } from './surfaces.js';

/**
 * The REST surfaces as the edge sees them, derived from the routes each surface declares
 * with `createRoute` (their OpenAPI paths, `{param}` for a path parameter): which methods a
 * path allows (405 answers with `Allow`), and which parameter a raw path segment is (400
 * answers naming it). Nothing here repeats a route by hand.
 */

/** A route as declared: its method (lower-case, as createRoute takes it) and OpenAPI path. */
export interface DeclaredRoute {
  method: string;
  path: string;
}

const DECLARED: Record<Surface, readonly DeclaredRoute[]> = {
  memorySoda: MEMORY_SODA_ROUTES,
  supaCloud: SUPACLOUD_ROUTES,
};

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

/** Each declared path once, with the methods declared on it, in declaration order. */
const ROUTES: { pattern: RegExp; methods: string[] }[] = [];
for (const declared of Object.values(DECLARED).flat()) {
  const method = declared.method.toUpperCase();
  const pattern = pathMatcher(declared.path);
  const same = ROUTES.find((r) => r.pattern.source === pattern.source);
  if (!same) ROUTES.push({ pattern, methods: [method] });
  else if (!same.methods.includes(method)) same.methods.push(method);
}

/** The methods a REST path allows, or null when no route has that path. */
function allowedMethods(pathname: string): string[] | null {
  return ROUTES.find((r) => r.pattern.test(pathname))?.methods ?? null;
}

/** Which path parameter a raw segment is, by the literal segment before it (`datasets/{dataset}`). */
const SEGMENT_PARAM: Readonly<Record<string, string>> = (() => {
  const names: Record<string, string> = {};
  for (const { path } of Object.values(DECLARED).flat()) {
    const segments = path.split('/');
    for (let i = 1; i < segments.length; i++) {
      const param = PARAM.exec(segments[i]!)?.[1];
      const before = segments[i - 1]!;
      if (!param || PARAM.test(before)) continue;
      if (names[before] !== undefined && names[before] !== param) {
        throw new Error(`"${before}/" is followed by {${names[before]}} and by {${param}}`);
      }
      names[before] = param;
    }
  }
  return names;
})();

/**
 * In front of a surface's routes: a key first (401 in the surface's shape, before the path
 * or query is looked at), then well-formed path segments (a malformed percent-encoding is a
 * 400 naming the parameter).
 */
export const restGuard =
  (surface: Surface) => async (c: Context<GatewayEnv>, next: () => Promise<void>) => {
    const ctx = c.get('requestContext');
    if (!ctx.auth)
      return errorResponse(c, surface, 'UNAUTHENTICATED', unauthenticated(ctx.authProblem).message);
    const segments = new URL(c.req.url).pathname.split('/');
    for (let i = 1; i < segments.length; i++) {
      try {
        decodeURIComponent(segments[i]!);
      } catch {
        const param = SEGMENT_PARAM[segments[i - 1]!] ?? 'path';
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

/** A request under a surface that no route served: 405 with `Allow` on a known path, else 404. */
export function restNotFound(c: Context, surface: Surface): Response {
  const methods = allowedMethods(new URL(c.req.url).pathname);
  if (methods) {
    c.header('Allow', methods.join(', '));
    return errorResponse(
      c,
      surface,
      'METHOD_NOT_ALLOWED',
      `Method ${c.req.method} is not allowed here; use ${methods.join(', ')}`,
    );
  }
  return errorResponse(c, surface, 'NOT_FOUND', `No route ${c.req.method} ${c.req.path}`);
}

/** The path patterns the edge's per-route middleware (CORS, limits, the context) covers. */
export const REST_PATHS = Object.values(SURFACE_BASES).map((base) => `${base}/*`);

/** Both surfaces on the gateway's app: each behind its guard. */
export function mountRestRoutes(app: OpenAPIHono<GatewayEnv>): void {
  for (const [surface, base] of Object.entries(SURFACE_BASES) as [Surface, string][]) {
    app.use(`${base}/*`, restGuard(surface));
  }
  app.route('/', memorySodaRoutes());
  app.route('/', supaCloudRoutes());
}
