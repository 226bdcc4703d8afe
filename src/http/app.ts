import { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { createRequestContext, unauthenticated } from '../context.js';
import { maskError } from '../errors.js';
import { errorResponse, errorResponseFor, type Surface } from '../rest/errorBodies.js';
import { MEMORY_SODA_BASE, memorySodaRoutes } from '../rest/memorySoda.js';
import { supaCloudRoutes } from '../rest/supaCloud.js';
import type { Database } from '../store/database.js';
import { mountApiDocs } from './apiDocs.js';
import type { GatewayEnv } from './env.js';
import { createGraphqlYoga, type YogaOptions } from './yoga.js';

export interface GatewayOptions extends YogaOptions {
  database: Database;
}

/** The REST routes, for 405 answers: a path that matches with another method. */
const REST_ROUTES: { pattern: RegExp; methods: string[] }[] = [
  { pattern: /^\/v1\/memory\/semantic\/datasets\/[^/]+\/facts$/, methods: ['GET'] },
  { pattern: /^\/v1\/memory\/semantic\/datasets\/[^/]+\/facts\/[^/]+$/, methods: ['DELETE'] },
  { pattern: /^\/v1\/memory\/semantic\/datasets\/[^/]+\/entities$/, methods: ['GET'] },
  {
    pattern: /^\/v1\/memory\/semantic\/datasets\/[^/]+\/entities\/[^/]+\/facts$/,
    methods: ['GET'],
  },
  { pattern: /^\/api\/memories$/, methods: ['GET'] },
];

/** Which path parameter a raw segment is, by the literal segment before it. */
const SEGMENT_PARAM: Record<string, string> = {
  datasets: 'dataset',
  entities: 'name',
  facts: 'factId',
};

const surfaceOf = (path: string): Surface | null =>
  path.startsWith(`${MEMORY_SODA_BASE}/`) || path === MEMORY_SODA_BASE
    ? 'memorySoda'
    : path.startsWith('/api/') || path === '/api'
      ? 'supaCloud'
      : null;

/**
 * The HTTP edge: one Hono app. It builds the request context once (auth, loaders, now)
 * and routes to the GraphQL endpoint, the REST compatibility routes (which run GraphQL
 * operations with that same context), the API docs and the health probes. It exposes a
 * WHATWG `fetch`, so tests drive it in-process without a listener.
 */
export function createGateway(options: GatewayOptions) {
  const yoga = createGraphqlYoga(options);
  const app = new OpenAPIHono<GatewayEnv>();
  const store = options.database.collections;

  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  app.get('/readyz', async (c) => {
    try {
      await options.database.db.command({ ping: 1 });
      return c.json({ status: 'ready' });
    } catch {
      return c.json({ status: 'database unavailable' }, 503);
    }
  });

  // The context, once per request, for every route that reads or writes memory.
  for (const path of ['/graphql', `${MEMORY_SODA_BASE}/*`, '/api/*']) {
    app.use(path, async (c, next) => {
      c.set('requestContext', await createRequestContext(c.req.raw, store));
      await next();
    });
  }

  // REST: a key first (401 in the surface's shape), then well-formed path segments.
  const restGuard =
    (surface: Surface) => async (c: Context<GatewayEnv>, next: () => Promise<void>) => {
      const ctx = c.get('requestContext');
      if (!ctx.auth)
        return errorResponse(
          c,
          surface,
          'UNAUTHENTICATED',
          unauthenticated(ctx.authProblem).message,
        );
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
  app.use(`${MEMORY_SODA_BASE}/*`, restGuard('memorySoda'));
  app.use('/api/*', restGuard('supaCloud'));

  app.route('/', memorySodaRoutes());
  app.route('/', supaCloudRoutes());
  mountApiDocs(app);

  app.on(['GET', 'POST', 'OPTIONS'], '/graphql', (c) =>
    yoga.fetch(c.req.raw, c.get('requestContext')),
  );

  // Failures outside a route's own handler (building the context reads the key from the
  // database) are answered in the shape of the surface they hit.
  app.onError((error, c) => {
    const surface = surfaceOf(c.req.path);
    if (surface) return errorResponseFor(c, surface, error);
    const masked = maskError(error);
    const status = masked.extensions.code === 'DATABASE_UNAVAILABLE' ? 503 : 500;
    return c.json(
      { errors: [{ message: masked.message, extensions: { code: masked.extensions.code } }] },
      status,
    );
  });

  app.notFound((c) => {
    const surface = surfaceOf(c.req.path);
    const route = REST_ROUTES.find((r) => r.pattern.test(new URL(c.req.url).pathname));
    if (surface && route) {
      c.header('Allow', route.methods.join(', '));
      return errorResponse(
        c,
        surface,
        'METHOD_NOT_ALLOWED',
        `Method ${c.req.method} is not allowed here; use ${route.methods.join(', ')}`,
      );
    }
    if (surface)
      return errorResponse(c, surface, 'NOT_FOUND', `No route ${c.req.method} ${c.req.path}`);
    return c.json({ error: 'Not found' }, 404);
  });

  return { app, yoga, fetch: (request: Request) => app.fetch(request) };
}
