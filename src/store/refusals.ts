/**
 * The store's expected refusals: a write that cannot be done as asked, for a reason the
 * client is told. Each carries the code the API answers with (src/errors.ts gives each
 * code its HTTP status), its message and any details, so the schema maps them all with
 * one lookup (schema/storeErrors.ts); anything else a store function throws is a failure.
 */
export type RefusalCode = 'BAD_USER_INPUT' | 'NOT_FOUND' | 'CONFLICT';

export abstract class StoreRefusal extends Error {
  abstract readonly code: RefusalCode;
  /** What the client is told beside the message (GraphQL `extensions`). */
  readonly details: Record<string, unknown> | undefined = undefined;
}
