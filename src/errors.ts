import { GraphQLError } from 'graphql';
import { MongoNetworkError, MongoServerSelectionError } from 'mongodb';

/**
 * The one error type the gateway raises on purpose. It carries a stable `code` and the
 * HTTP status; GraphQL shows the code in `extensions.code`, and the REST adapters map it
 * to each surface's error body. Anything else that escapes a resolver is masked by
 * `maskError` below into a generic message.
 */
export const ERROR_STATUS = {
  BAD_USER_INPUT: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  RATE_LIMITED: 429,
  INTERNAL_SERVER_ERROR: 500,
  DATABASE_UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export class GatewayError extends GraphQLError {
  readonly code: ErrorCode;
  readonly status: number;

  constructor(code: ErrorCode, message: string, details?: Record<string, unknown>) {
    const status = ERROR_STATUS[code];
    super(message, { extensions: { code, ...details, http: { status } } });
    this.code = code;
    this.status = status;
    this.name = 'GatewayError';
  }
}

export const badInput = (message: string, details?: Record<string, unknown>) =>
  new GatewayError('BAD_USER_INPUT', message, details);

export const GENERIC_ERROR_MESSAGE = 'Internal server error';

/**
 * The one place unknown errors are turned into client-safe ones: a GatewayError (or a
 * GraphQL validation/parse error) passes; a lost database becomes DATABASE_UNAVAILABLE;
 * everything else is a generic INTERNAL_SERVER_ERROR with no message, path or stack of
 * the original.
 */
export function maskError(error: unknown): GraphQLError {
  const original = error instanceof GraphQLError && error.originalError ? error.originalError : error;
  if (original instanceof GatewayError) {
    if (error instanceof GraphQLError && error !== original) {
      return new GraphQLError(original.message, {
        nodes: error.nodes,
        path: error.path,
        extensions: original.extensions,
      });
    }
    return original;
  }
  if (error instanceof GraphQLError && !error.originalError) return error;
  const path = error instanceof GraphQLError ? error.path : undefined;
  if (original instanceof MongoServerSelectionError || original instanceof MongoNetworkError) {
    return new GraphQLError('The database is unavailable; try again shortly', {
      path,
      extensions: { code: 'DATABASE_UNAVAILABLE', http: { status: 503 } },
    });
  }
  return new GraphQLError(GENERIC_ERROR_MESSAGE, {
    path,
    extensions: { code: 'INTERNAL_SERVER_ERROR', http: { status: 500 } },
  });
}
