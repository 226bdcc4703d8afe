/*
 * What every REST surface's routes share: the app that answers a bad parameter and any
 * thrown error in the surface's own error shape, and the JSON body check routes declare.
 */

import { OpenAPIHono } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import type { GatewayEnv } from '../context.js';
import { jsonBodyProblem } from '../domain/jsonBodies.js';
import { describeIssues } from '../validation.js';
import { errorResponse, errorResponseFor, type Surface } from './errorBodies.js';

/**
 * The check a route that takes a JSON body declares (`middleware` of its createRoute): a
 * body in another media type or charset is a 415, one that is not UTF-8 or is nested
 * past src/domain/jsonBodies.ts's limit a 400, in the surface's shape, before the route's own
 * parser and validator read it.
 */
export function jsonBody(surface: Surface): MiddlewareHandler<GatewayEnv> {
  return async (c, next) => {
    const problem = jsonBodyProblem(c.req.header('content-type'), await c.req.arrayBuffer(), true);
    if (problem) return errorResponse(c, surface, problem.code, problem.message);
    await next();
  };
}

/**
 * A surface's routes: a parameter that fails its rule is a 400 naming it ("name: reason"),
 * and anything a handler throws answers in the surface's shape.
 */
export function surfaceApp(surface: Surface): OpenAPIHono<GatewayEnv> {
  const app = new OpenAPIHono<GatewayEnv>({
    defaultHook: (result, c) => {
      if (!result.success)
        return errorResponse(c, surface, 'BAD_USER_INPUT', describeIssues(result.error.issues));
    },
  });
  app.onError((error, c) => {
    // For the request's error log line, if it answers 5xx (src/http/app.ts).
    c.set('failure', error);
    return errorResponseFor(c, surface, error);
  });
  return app;
}
