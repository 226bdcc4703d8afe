/*
 * What a failed bulk write (insertMany, bulkWrite) says: whether only already-stored
 * documents failed (the idempotency at work), at which positions, and which error to
 * throw otherwise.
 */

import { MongoBulkWriteError } from 'mongodb';

/**
 * Whether a failed bulk write (`insertMany`, `bulkWrite`) failed only because documents it
 * inserted were already stored: a bulk write error that lists at least one write error,
 * every one a duplicate key (11000) at a known position, and no write concern error. Only
 * then do the other documents of the command count as written. Anything else is a
 * failure that says nothing about which documents were written; a lost connection or a
 * timeout arrives as a bulk write error with an EMPTY list of write errors (and "every
 * write error is a duplicate" is true of an empty list, hence the length check).
 */
export function isOnlyDuplicateKeys(error: unknown): error is MongoBulkWriteError {
  if (!(error instanceof MongoBulkWriteError)) return false;
  const list = writeErrorsOf(error);
  if (list.length === 0) return false;
  if (list.some((e) => e.code !== 11000 || typeof e.index !== 'number')) return false;
  const result = error.result as Partial<MongoBulkWriteError['result']> | undefined;
  return !result?.getWriteConcernError?.();
}

/**
 * The positions (in the command's operations) whose `_id` was already stored, for an error
 * that `isOnlyDuplicateKeys` accepts; any other error is thrown (see `bulkWriteFailure`).
 */
export function duplicateKeyIndexes(error: unknown): number[] {
  if (!isOnlyDuplicateKeys(error)) throw bulkWriteFailure(error);
  return writeErrorsOf(error).map((e) => e.index!);
}

/**
 * The error to throw for a failed bulk write. The driver wraps an error that got no answer
 * from the database (a lost connection, a timeout, no server to select) in a bulk write
 * error; the wrapped one is thrown, so the gateway recognises a lost database as such
 * (DATABASE_UNAVAILABLE) instead of taking it for a bug. Any other error is itself.
 */
export function bulkWriteFailure(error: unknown): unknown {
  if (error instanceof MongoBulkWriteError) {
    const wrapped = (error as { errorResponse?: unknown }).errorResponse;
    if (wrapped instanceof Error) return wrapped;
  }
  return error;
}

function writeErrorsOf(error: MongoBulkWriteError): { code?: number; index?: number }[] {
  const { writeErrors } = error as { writeErrors?: unknown };
  return (Array.isArray(writeErrors) ? writeErrors : writeErrors ? [writeErrors] : []) as {
    code?: number;
    index?: number;
  }[];
}
