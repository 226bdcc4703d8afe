import {
  MongoNetworkError,
  MongoOperationTimeoutError,
  MongoServerClosedError,
  MongoServerError,
  MongoServerSelectionError,
  MongoTopologyClosedError,
} from 'mongodb';
import type { Collections } from './collections.js';
import { isDuplicateKey } from './database.js';
import { DatabaseTimeoutError, isDatabaseTimeout, WRITE_METHODS } from './deadline.js';

/**
 * What a write that met a lost database did: nothing, or perhaps something. A write answers
 * what it did (done, already done, not done), and when the database stops answering
 * after a write command was sent, "not done" would be a guess: the command may have
 * committed, and the write's later steps may have been left for a retry or the start-up
 * repair. Such a failure is a `WriteOutcomeUnknownError` (WRITE_OUTCOME_UNKNOWN at the
 * edge: the outcome is unknown, and retrying with the same id is safe, because every
 * write is idempotent by its id and completes what an earlier attempt left); a failure
 * before any write command was sent stays a plain database error (DATABASE_UNAVAILABLE:
 * nothing was written).
 */

/**
 * The driver's ways of saying the database cannot be reached (in time), and the request's
 * own database time running out (store/deadline.ts). The pool's
 * wait-queue timeout and closed-pool errors are not exported classes, so they are
 * recognised by name.
 */
const UNAVAILABLE_NAMES = new Set(['MongoWaitQueueTimeoutError', 'MongoPoolClosedError']);

export function isDatabaseUnavailable(error: unknown): boolean {
  return (
    isDatabaseTimeout(error) ||
    (error instanceof Error && UNAVAILABLE_NAMES.has(error.name)) ||
    error instanceof MongoServerSelectionError ||
    error instanceof MongoNetworkError ||
    error instanceof MongoOperationTimeoutError ||
    error instanceof MongoServerClosedError ||
    error instanceof MongoTopologyClosedError
  );
}

/**
 * The unavailable errors the driver raises before it sends a command (no server to send
 * it to, no connection free in time, a closed client): that command reached nothing.
 */
function isBeforeSending(error: unknown): boolean {
  return (
    error instanceof DatabaseTimeoutError ||
    (error instanceof Error && UNAVAILABLE_NAMES.has(error.name)) ||
    error instanceof MongoServerSelectionError ||
    error instanceof MongoServerClosedError ||
    error instanceof MongoTopologyClosedError
  );
}

export class WriteOutcomeUnknownError extends Error {
  override name = 'WriteOutcomeUnknownError';
  constructor(override readonly cause: unknown) {
    super('The database stopped answering or failed after this write began; it may have been done');
  }
}

/**
 * A command the database answered with an error the store does not expect (its own
 * refusals and duplicate keys are decided before they escape): after a write went out,
 * as unknown an outcome as a lost connection. The embedded FerretDB answers an internal
 * error for a SQLite failure in the middle of a command, which may have written part of it.
 */
function isDatabaseFailure(error: unknown): boolean {
  return error instanceof MongoServerError;
}

/** Writes that change one document: a duplicate key from one of them wrote nothing. */
const SINGLE_DOCUMENT = new Set(['insertOne', 'updateOne', 'replaceOne', 'findOneAndUpdate']);

/**
 * The collections, watched for write commands while one operation runs, and what a
 * failure of that operation means: `failure(error)` is the error to answer with, a
 * `WriteOutcomeUnknownError` when the database became unavailable after a write command
 * that may have reached it (one that returned, or failed any other way than before
 * sending; a single-document write refused as a duplicate wrote nothing).
 */
export function watchWrites(db: Collections): {
  collections: Collections;
  failure: (error: unknown) => unknown;
} {
  let mayHaveWritten = false;
  const watch = <T extends object>(collection: T): T =>
    new Proxy(collection, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver);
        if (typeof property !== 'string' || !WRITE_METHODS.has(property)) return value;
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) =>
          (value as (...a: unknown[]) => Promise<unknown>).apply(target, args).then(
            (result) => {
              mayHaveWritten = true;
              return result;
            },
            (error: unknown) => {
              const wroteNothing =
                isBeforeSending(error) || (SINGLE_DOCUMENT.has(property) && isDuplicateKey(error));
              if (!wroteNothing) mayHaveWritten = true;
              throw error;
            },
          );
      },
    });
  const collections = Object.fromEntries(
    Object.entries(db).map(([name, collection]) => [name, watch(collection as object)]),
  ) as unknown as Collections;
  return {
    collections,
    failure: (error) =>
      mayHaveWritten && (isDatabaseUnavailable(error) || isDatabaseFailure(error))
        ? new WriteOutcomeUnknownError(error)
        : error,
  };
}
