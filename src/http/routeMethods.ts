import type { Env, Hono } from 'hono';

/**
 * The methods the app's routes serve at a path, in the order the app first declared them:
 * its routes, not its middleware (registered for ALL). The edge reads it to answer another
 * method 405 with `Allow` and to tell a route's path with a trailing slash from an unknown
 * one. The methods are read on the first use, when every route is in.
 */
export function routeMethods<E extends Env>(app: Hono<E>): (path: string) => string[] {
  let methods: string[] | null = null;
  return (path) => {
    methods ??= [...new Set(app.routes.map((r) => r.method).filter((m) => m !== 'ALL'))];
    return methods.filter((method) =>
      app.router.match(method, path)[0].some(([[, route]]) => route.method !== 'ALL'),
    );
  };
}
