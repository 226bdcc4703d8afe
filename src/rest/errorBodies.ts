import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { ERROR_STATUS, type ErrorCode, GatewayError, GENERIC_ERROR_MESSAGE } from '../errors.js';

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

/** Any error thrown by an adapter: a GatewayError keeps its code; anything else is masked. */
export function errorResponseFor(c: Context, surface: Surface, error: unknown): Response {
  if (error instanceof GatewayError) return errorResponse(c, surface, error.code, error.message);
  return errorResponse(c, surface, 'INTERNAL_SERVER_ERROR', GENERIC_ERROR_MESSAGE);
}
