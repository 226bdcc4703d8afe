import { PothosSchemaError, PothosValidationError } from '@pothos/core';
import { GraphQLError } from 'graphql';
import { isDatabaseTimeout } from './store/deadline.js';
import { isDatabaseUnavailable, WriteOutcomeUnknownError } from './store/writeOutcome.js';

/** Each error code and the HTTP status it answers with. */
export const ERROR_STATUS = {
  BAD_USER_INPUT: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  REQUEST_TIMEOUT: 408,
  CONFLICT: 409,
  QUERY_TOO_COMPLEX: 400,
  /** Text sent where only registered operations run (TRUSTED_DOCUMENTS=only). */
  PERSISTED_QUERY_ONLY: 400,
  PAYLOAD_TOO_LARGE: 413,
  /** A request body in a media type (or charset) the route does not take. */
  UNSUPPORTED_MEDIA_TYPE: 415,
  URI_TOO_LONG: 414,
  RATE_LIMITED: 429,
  HEADERS_TOO_LARGE: 431,
  INTERNAL_SERVER_ERROR: 500,
  DATABASE_UNAVAILABLE: 503,
  /** The request used up its time for the database (DB_TIMEOUT_MS): it was stopped there. */
  DATABASE_TIMEOUT: 503,
  /**
   * The database stopped answering (or failed a command) after a write began: it may have
   * been done. Retrying with the same id is safe (src/store/writeOutcome.ts).
   */
  WRITE_OUTCOME_UNKNOWN: 503,
  /**
   * A live stream ended by the gateway, safe to resume with the last cursor received: its
   * client fell too far behind (STREAM_OVERFLOW), or the process is shutting down.
   */
  STREAM_OVERFLOW: 503,
  SHUTTING_DOWN: 503,
  /** A part of the gateway that is not installed (the explorer before `npm run build`). */
  NOT_BUILT: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/**
 * How an error answers over HTTP on GraphQL: `field` (the default) keeps HTTP 200, as
 * GraphQL over HTTP expects of an error in one field; `request` refuses the whole request
 * and answers with the code's status; `spec` too, but lets Yoga keep 200 for a client
 * that accepts only `application/json` (GraphQL over HTTP's rule for request errors).
 */
export type ErrorScope = 'field' | 'request' | 'spec';

/**
 * The one error type the gateway raises on purpose. It carries a stable `code` and the
 * HTTP status the table above gives it; GraphQL shows the code in `extensions.code`, and
 * the REST adapters answer with `status` in each surface's error body. Anything else that
 * escapes a resolver is masked by `maskError` below.
 */
export class GatewayError extends GraphQLError {
  readonly code: ErrorCode;
  readonly status: number;

  constructor(
    code: ErrorCode,
    message: string,
    details?: Record<string, unknown>,
    scope: ErrorScope = 'field',
    where: { path?: GraphQLError['path'] } = {},
  ) {
    const status = ERROR_STATUS[code];
    const http =
      scope === 'field' ? {} : { http: { status, ...(scope === 'spec' ? { spec: true } : {}) } };
    super(message, {
      ...(where.path ? { path: where.path } : {}),
      extensions: { code, ...details, ...http },
    });
    this.code = code;
    this.status = status;
    this.name = 'GatewayError';
  }
}

export const badInput = (message: string, details?: Record<string, unknown>) =>
  new GatewayError('BAD_USER_INPUT', message, details);

export const GENERIC_ERROR_MESSAGE = 'Internal server error';

/** The code of an error in the request itself, by graphql-js's wording. */
function requestErrorCode(message: string): string {
  if (message.startsWith('Variable "$')) return 'BAD_USER_INPUT';
  if (message.startsWith('Syntax Error')) return 'GRAPHQL_PARSE_FAILED';
  return 'GRAPHQL_VALIDATION_FAILED';
}

/** What a write whose outcome is unknown answers: what happened, and what to do. */
export const WRITE_OUTCOME_UNKNOWN_MESSAGE =
  'The database stopped answering or failed after this write began, so it may or may not have been done. Retrying it with the same id is safe: a retry completes it or answers that it was done (recordEpisode: the same episodeId, or the same episode without one)';

/**
 * The one place unknown errors are turned into client-safe ones: a GatewayError (or a
 * GraphQL validation/parse error) passes; a lost database becomes DATABASE_UNAVAILABLE;
 * everything else is a generic INTERNAL_SERVER_ERROR with no message, path or stack of
 * the original. A write that may have been done before the database was lost is
 * WRITE_OUTCOME_UNKNOWN instead, never a plain failure.
 */
export function maskError(error: unknown): GraphQLError {
  // Duck-typed on purpose: graphql-js wraps what a resolver throws in a GraphQLError whose
  // `originalError` is the thrown error, and that wrapper's class may come from another
  // copy of graphql (its ESM and CommonJS builds) than the one this file imports.
  const located =
    error instanceof Error && 'extensions' in error ? (error as GraphQLError) : undefined;
  const original: unknown = located?.originalError ?? error;
  const where = { nodes: located?.nodes, path: located?.path };
  if (original instanceof GatewayError) {
    return new GraphQLError(original.message, { ...where, extensions: original.extensions });
  }
  if (original instanceof PothosValidationError) {
    // Pothos's own input checks (a malformed global ID, for one) are the client's mistake.
    return new GraphQLError(original.message, { ...where, extensions: { code: 'BAD_USER_INPUT' } });
  }
  if (original instanceof PothosSchemaError && where.path) {
    // At run time this only happens when a global ID names a type that is not a node.
    return new GraphQLError('Invalid global ID: it does not name a node type', {
      ...where,
      extensions: { code: 'BAD_USER_INPUT' },
    });
  }
  // graphql's own parse and validation errors (and the query limits') carry no original
  // error and no secrets; they get a code like every other error.
  if (located && !located.originalError) {
    if (located.extensions?.code) return located;
    return new GraphQLError(located.message, {
      nodes: located.nodes,
      source: located.source,
      positions: located.positions,
      path: located.path,
      extensions: { ...located.extensions, code: requestErrorCode(located.message) },
    });
  }
  // graphql's own refusals of the request itself (a variable it cannot coerce, such as an
  // unknown enum value) arrive wrapped without a path: the client's mistake, not ours.
  if (located && !located.path && original instanceof Error && original.name === 'GraphQLError') {
    return new GraphQLError(located.message, {
      nodes: located.nodes,
      extensions: { code: 'BAD_USER_INPUT' },
    });
  }
  const failed = (code: ErrorCode, message: string) =>
    new GatewayError(code, message, undefined, 'request', { path: where.path });
  if (original instanceof WriteOutcomeUnknownError) {
    return failed('WRITE_OUTCOME_UNKNOWN', WRITE_OUTCOME_UNKNOWN_MESSAGE);
  }
  if (isDatabaseTimeout(original)) {
    return failed(
      'DATABASE_TIMEOUT',
      'The request used up its time for the database (DB_TIMEOUT_MS) and was stopped; try again, or ask for less',
    );
  }
  if (isDatabaseUnavailable(original)) {
    return failed('DATABASE_UNAVAILABLE', 'The database is unavailable; try again shortly');
  }
  return failed('INTERNAL_SERVER_ERROR', GENERIC_ERROR_MESSAGE);
}
