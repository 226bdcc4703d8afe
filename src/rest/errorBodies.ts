/*
 * Every error body the gateway builds itself, by shape. Memory Soda answers
 * `{ "error": message }`; SupaCloud answers `{ "code", "error", "details" }` with its own
 * code names; GraphQL (and the edge's answers on paths outside the REST surfaces) answers
 * `{ "errors": [{ "message", "extensions": { "code" } }] }`; MCP answers a JSON-RPC error
 * (`{ "jsonrpc", "id", "error": { "code", "message", "data": { "code" } } }`); the gateway's
 * own pages (API docs, unknown paths) answer `{ "error": message }`. The status comes from
 * the code.
 */

import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import {
  ERROR_STATUS,
  type ErrorCode,
  GatewayError,
  GENERIC_ERROR_MESSAGE,
  maskError,
} from '../errors.js';

export type Surface = 'memorySoda' | 'supaCloud';
export type ErrorShape = Surface | 'graphql' | 'mcp' | 'plain';

const SUPACLOUD_CODES: Record<ErrorCode, string> = {
  BAD_USER_INPUT: 'bad_request',
  UNAUTHENTICATED: 'unauthorized',
  FORBIDDEN: 'forbidden',
  NOT_FOUND: 'not_found',
  METHOD_NOT_ALLOWED: 'method_not_allowed',
  CONFLICT: 'conflict',
  QUERY_TOO_COMPLEX: 'bad_request',
  // GraphQL's only; REST runs no client text.
  PERSISTED_QUERY_ONLY: 'bad_request',
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
  // Live streams' ends; REST never answers them.
  STREAM_OVERFLOW: 'internal_error',
  SHUTTING_DOWN: 'internal_error',
};

/** GraphQL's error body: one error and its code (any code GraphQL answers, not only the gateway's). */
export function graphqlErrorBody(code: string, message: string) {
  return { errors: [{ message, extensions: { code } }] };
}

/**
 * An HTTP-level refusal in JSON-RPC's shape (what MCP clients read): JSON-RPC's
 * implementation-defined server error, with the gateway's code in `data` and leading the
 * message, so a client that shows only the message still shows the code.
 */
export function jsonRpcErrorBody(code: string, message: string, id: string | number | null = null) {
  return {
    jsonrpc: '2.0' as const,
    id,
    error: { code: -32000, message: `${code}: ${message}`, data: { code } },
  };
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
    case 'mcp':
      return jsonRpcErrorBody(code, message);
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
 * A path the gateway serves, asked with a method it does not take: 405 with `Allow` (every
 * method it takes, HEAD included where the route lists it), in the shape of the path's
 * surface. One answer for every path, the REST routes', GraphQL's, MCP's and the pages'.
 */
export function methodNotAllowed(c: Context, shape: ErrorShape, allowed: string[]): Response {
  c.header('Allow', allowed.join(', '));
  // HEAD is GET without the body: naming GET says it.
  const use = allowed.filter((method) => method !== 'HEAD').join(', ');
  return errorResponse(
    c,
    shape,
    'METHOD_NOT_ALLOWED',
    `Method ${c.req.method} is not allowed here; use ${use}`,
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
