/*
 * Every error body the gateway builds itself, by shape. Memory Soda answers
 * `{ "error": message }`; SupaCloud answers `{ "code", "error", "details" }` with its own
 * code names; GraphQL (and the edge's answers on paths outside the REST surfaces) answers
 * `{ "errors": [{ "message", "extensions": { "code" } }] }`; the gateway's own pages (API
 * docs, unknown paths) answer `{ "error": message }`. The status comes from the code.
 */

import { OpenAPIHono } from '@hono/zod-openapi';
import type { Context, MiddlewareHandler } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { GatewayEnv } from '../context.js';
import {
  ERROR_STATUS,
  type ErrorCode,
  GatewayError,
  GENERIC_ERROR_MESSAGE,
  maskError,
} from '../errors.js';
import { jsonBodyProblem } from '../http/bodies.js';
import { describeIssues } from '../validation.js';

export type Surface = 'memorySoda' | 'supaCloud';
export type ErrorShape = Surface | 'graphql' | 'plain';

const SUPACLOUD_CODES: Record<ErrorCode, string> = {
  BAD_USER_INPUT: 'bad_request',
  UNAUTHENTICATED: 'unauthorized',
  FORBIDDEN: 'forbidden',
  NOT_FOUND: 'not_found',
  METHOD_NOT_ALLOWED: 'method_not_allowed',
  CONFLICT: 'conflict',
  QUERY_TOO_COMPLEX: 'bad_request',
  PAYLOAD_TOO_LARGE: 'bad_request',
  UNSUPPORTED_MEDIA_TYPE: 'bad_request',
  REQUEST_TIMEOUT: 'bad_request',
  URI_TOO_LONG: 'bad_request',
  HEADERS_TOO_LARGE: 'bad_request',
  RATE_LIMITED: 'rate_limited',
  INTERNAL_SERVER_ERROR: 'internal_error',
  DATABASE_UNAVAILABLE: 'database_error',
  DATABASE_TIMEOUT: 'database_error',
  WRITE_OUTCOME_UNKNOWN: 'database_error',
  NOT_BUILT: 'internal_error',
};

/** GraphQL's error body: one error and its code (any code GraphQL answers, not only the gateway's). */
export function graphqlErrorBody(code: string, message: string) {
  return { errors: [{ message, extensions: { code } }] };
}

/** The error body in `shape`; `details` is SupaCloud's (null unless given). */
export function errorBody(
  shape: ErrorShape,
  code: ErrorCode,
  message: string,
  details: unknown = null,
) {
  switch (shape) {
    case 'supaCloud':
      return { code: SUPACLOUD_CODES[code], error: message, details: details ?? null };
    case 'graphql':
      return graphqlErrorBody(code, message);
    case 'memorySoda':
    case 'plain':
      return { error: message };
  }
}

export function errorResponse(
  c: Context,
  shape: ErrorShape,
  code: ErrorCode,
  message: string,
  details: unknown = null,
): Response {
  return c.json(
    errorBody(shape, code, message, details),
    ERROR_STATUS[code] as ContentfulStatusCode,
  );
}

/**
 * Any error thrown on a REST route: a GatewayError keeps its code; anything else goes
 * through the one masking function (a lost database is 503, the rest a generic 500).
 */
export function errorResponseFor(c: Context, surface: Surface, error: unknown): Response {
  if (error instanceof GatewayError) return errorResponse(c, surface, error.code, error.message);
  // A body Hono's validator could not parse (malformed JSON), or one in a media type the
  // route does not take, is the client's mistake.
  if (error instanceof HTTPException && error.status === 415) {
    return errorResponse(
      c,
      surface,
      'UNSUPPORTED_MEDIA_TYPE',
      'Content-Type must be application/json',
    );
  }
  if (error instanceof HTTPException && error.status >= 400 && error.status < 500) {
    return errorResponse(c, surface, 'BAD_USER_INPUT', `body: ${error.message}`);
  }
  const masked = maskError(error);
  const code = masked.extensions.code as ErrorCode;
  return code in ERROR_STATUS
    ? errorResponse(c, surface, code, masked.message)
    : errorResponse(c, surface, 'INTERNAL_SERVER_ERROR', GENERIC_ERROR_MESSAGE);
}

/**
 * The check a route that takes a JSON body declares (`middleware` of its createRoute): a
 * body in another media type or charset is a 415, one that is not UTF-8 or is nested
 * past src/http/bodies.ts's limit a 400, in the surface's shape, before the route's own
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
  app.onError((error, c) => errorResponseFor(c, surface, error));
  return app;
}

/**
 * The statuses every route can answer before (or instead of) its own work: the edge's
 * limits and an unavailable database, each in the surface's error body. Declared on every
 * route of /openapi.json so clients (and schema-driven testers) know them.
 */
export function edgeResponses<Content>(content: Content) {
  return {
    408: { description: 'The request did not arrive in time (REQUEST_TIMEOUT_MS)', content },
    413: { description: 'Request body too large (BODY_LIMIT_BYTES)', content },
    414: { description: 'URL too long (at most 8192 characters)', content },
    415: {
      description:
        'A request body in a media type the route does not take (routes with a body take application/json, UTF-8)',
      content,
    },
    429: {
      description: 'Too many requests for the key or the client address; retry after Retry-After',
      headers: {
        'Retry-After': {
          description: 'Seconds to wait before retrying',
          schema: { type: 'integer' as const, minimum: 1 },
        },
      },
      content,
    },
    431: { description: 'Request line and headers too large (at most 16 KiB)', content },
    503: { description: 'The database is unavailable; retry shortly', content },
  };
}
