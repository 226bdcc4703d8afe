import { MongoServerError } from 'mongodb';
import type { Collections } from './collections.js';

/**
 * A request's database time, bounded as a whole (DB_TIMEOUT_MS), not command by command:
 * every read and count the store sends for the request carries the time the request has
 * left as `maxTimeMS`, so the database itself stops the work when the request gives up
 * (MongoDB kills the operation; the embedded FerretDB cancels its query's context, which
 * stops the SQLite statement and the decoding in Go), and a command due after the deadline
 * is not sent at all. Writes carry no `maxTimeMS` (cut short, they would leave a write
 * half-done for a retry to complete); they are not sent past the deadline, and each is
 * bounded by the driver's socket timeout.
 */

/** What a command due after the request's deadline throws instead of being sent. */
export class DatabaseTimeoutError extends Error {
  override name = 'DatabaseTimeoutError';
  constructor() {
    super('The request used up its time for the database before this command');
  }
}

/** MongoDB's (and FerretDB's) answer to a command that ran past its maxTimeMS. */
export function isDatabaseTimeout(error: unknown): boolean {
  return (
    error instanceof DatabaseTimeoutError ||
    (error instanceof MongoServerError &&
      (error.code === 50 || error.codeName === 'MaxTimeMSExpired'))
  );
}

/** Reads whose options take `maxTimeMS`, and where their options argument is. */
const READS: Record<string, number> = {
  find: 1,
  findOne: 1,
  aggregate: 1,
  countDocuments: 1,
  distinct: 2,
  estimatedDocumentCount: 0,
};

const CURSORS = new Set(['find', 'aggregate']);

/** The driver's collection methods that write (the store's, and the write outcome's, wrappers). */
export const WRITE_METHODS = new Set([
  'insertOne',
  'insertMany',
  'updateOne',
  'updateMany',
  'replaceOne',
  'bulkWrite',
  'deleteOne',
  'deleteMany',
  'findOneAndUpdate',
  'findOneAndReplace',
  'findOneAndDelete',
]);

/**
 * The collections, for one request whose database time ends at `deadline` (a
 * `performance.now()` instant): reads get `maxTimeMS` (the time left, at least 1 ms, or
 * less if the caller asked for less), and no command is sent once the time is up.
 */
export function withDeadline(
  db: Collections,
  deadline: number,
  clock: () => number = () => performance.now(),
): Collections {
  const left = () => {
    const ms = Math.floor(deadline - clock());
    if (ms <= 0) throw new DatabaseTimeoutError();
    return ms;
  };
  const bound = <T extends object>(collection: T): T =>
    new Proxy(collection, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver);
        if (typeof property !== 'string' || typeof value !== 'function') return value;
        const at = READS[property];
        if (at !== undefined) {
          return (...args: unknown[]) => {
            let ms: number;
            try {
              ms = left();
            } catch (error) {
              // find and aggregate hand back a cursor; the others a promise, rejected here.
              if (CURSORS.has(property)) throw error;
              return Promise.reject(error);
            }
            const options = (args[at] ?? {}) as { maxTimeMS?: number };
            const padded = [...args];
            while (padded.length < at) padded.push(undefined);
            padded[at] = { ...options, maxTimeMS: Math.min(options.maxTimeMS ?? ms, ms) };
            return (value as (...a: unknown[]) => unknown).apply(target, padded);
          };
        }
        if (WRITE_METHODS.has(property)) {
          return (...args: unknown[]) => {
            try {
              left();
            } catch (error) {
              return Promise.reject(error);
            }
            return (value as (...a: unknown[]) => unknown).apply(target, args);
          };
        }
        return value;
      },
    });
  const cache = new Map<string, object>();
  return new Proxy(db, {
    get(target, name: string) {
      let collection = cache.get(name);
      if (!collection) {
        collection = bound(Reflect.get(target, name) as object);
        cache.set(name, collection);
      }
      return collection;
    },
  });
}
