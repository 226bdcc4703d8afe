import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import {
  ERROR_STATUS,
  type ErrorCode,
  GatewayError,
  GENERIC_ERROR_MESSAGE,
  maskError,
} from '../errors.js';

/**
 * Each REST surface's error body. Memory Soda answers `{ "error": message }`; SupaCloud
 * answers `{ "code", "error", "details" }` with its own code names. Both take the status
 * from the GatewayError's code.
 */
export type Surface = 'memorySoda' | 'supaCloud';

const SUPACLOUD_CODES: Record<ErrorCode, string> = {
  BAD_USER_INPUT: 'bad_request',
  UNAUTHENTICATED: 'unauthorized',
  FORBIDDEN: 'forbidden',
  NOT_FOUND: 'not_found',
  METHOD_NOT_ALLOWED: 'method_not_allowed',
  CONFLICT: 'conflict',
  QUERY_TOO_COMPLEX: 'bad_request',
  PAYLOAD_TOO_LARGE: 'bad_request',
  REQUEST_TIMEOUT: 'bad_request',
  URI_TOO_LONG: 'bad_request',
  HEADERS_TOO_LARGE: 'bad_request',
  RATE_LIMITED: 'rate_limited',
  INTERNAL_SERVER_ERROR: 'internal_error',
  DATABASE_UNAVAILABLE: 'database_error',
};

export function errorBody(
  surface: Surface,
  code: ErrorCode,
  message: string,
  details: unknown = null,
) {
  return surface === 'memorySoda'
    ? { error: message }
    : { code: SUPACLOUD_CODES[code], error: message, details: details ?? null };
}

export function errorResponse(
  c: Context,
  surface: Surface,
  code: ErrorCode,
  message: string,
  details: unknown = null,
): Response {
  return c.json(
    errorBody(surface, code, message, details),
    ERROR_STATUS[code] as ContentfulStatusCode,
  );
}

/**
 * Any error thrown on a REST route: a GatewayError keeps its code; anything else goes
 * through the one masking function (a lost database is 503, the rest a generic 500).
 */
export function errorResponseFor(c: Context, surface: Surface, error: unknown): Response {
  if (error instanceof GatewayError) return errorResponse(c, surface, error.code, error.message);
  const masked = maskError(error);
  const code = masked.extensions.code as ErrorCode;
  return code in ERROR_STATUS
    ? errorResponse(c, surface, code, masked.message)
    : errorResponse(c, surface, 'INTERNAL_SERVER_ERROR', GENERIC_ERROR_MESSAGE);
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
