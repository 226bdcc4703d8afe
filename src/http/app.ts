import { Hono } from 'hono';
import { createRequestContext, type RequestContext } from '../context.js';
import type { Database } from '../store/database.js';
import { createGraphqlYoga, type YogaOptions } from './yoga.js';

export interface GatewayOptions extends YogaOptions {
  database: Database;
}

type Env = { Variables: { requestContext: RequestContext } };

/**
 * The HTTP edge: one Hono app that builds the request context once and routes to the
 * GraphQL endpoint, the health probes and (later) the REST compatibility routes. It
 * exposes a WHATWG `fetch`, so tests drive it in-process without a listener.
 */
export function createGateway(options: GatewayOptions) {
  const yoga = createGraphqlYoga(options);
  const app = new Hono<Env>();
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

  app.on(['GET', 'POST', 'OPTIONS'], '/graphql', async (c) => {
    const ctx = await createRequestContext(c.req.raw, store);
    return yoga.fetch(c.req.raw, ctx);
  });

  app.notFound((c) => c.json({ error: 'Not found' }, 404));

  return { app, yoga, fetch: (request: Request) => app.fetch(request) };
}
