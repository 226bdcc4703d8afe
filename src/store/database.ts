import { type Collection, type Db, MongoClient, type MongoClientOptions } from 'mongodb';
import {
  type Collections,
  collections,
  INDEXES,
  type IndexSpec,
  RETIRED_INDEXES,
} from './collections.js';

/*
 * The connection to MongoDB (or the embedded FerretDB): its timeouts, opening it with the
 * declared indexes in place (collections.ts), readiness, and the database's error signals
 * the writes read.
 */

/** MongoDB's (and FerretDB's) "no index of that name". */
const INDEX_NOT_FOUND = 27;

async function ensureIndexes(db: Collections): Promise<void> {
  const notYet = new Set<string>();
  await Promise.all(
    (Object.keys(INDEXES) as (keyof Collections)[]).flatMap((name) =>
      INDEXES[name].map((index) =>
        createIndex(db, name, index).catch((error: unknown) => {
          // A unique index over documents an earlier version repeated: the migration that
          // removes the repeats creates it (store/migrations.ts); until then the store
          // keeps the index it replaces.
          if (!index.unique || !isRepeatedKey(error)) throw error;
          notYet.add(index.name);
        }),
      ),
    ),
  );
  for (const [name, retired] of Object.entries(RETIRED_INDEXES) as [
    keyof Collections,
    { name: string; replacedBy: string }[],
  ][]) {
    for (const index of retired) {
      if (notYet.has(index.replacedBy)) continue;
      await (db[name] as unknown as Collection).dropIndex(index.name).catch((error: unknown) => {
        if ((error as { code?: unknown }).code !== INDEX_NOT_FOUND) throw error;
      });
    }
  }
}

/**
 * Creates one declared index (nothing happens when it exists). On the embedded FerretDB,
 * processes building one index at once (replicas opening a store together) can find
 * SQLite busy: that is tried again, a few times, after a short pause.
 */
export async function createIndex(
  db: Collections,
  collection: keyof Collections,
  index: IndexSpec,
): Promise<string> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await (db[collection] as unknown as Collection).createIndex(index.key, {
        name: index.name,
        ...(index.unique ? { unique: true } : {}),
      });
    } catch (error) {
      const busy = error instanceof Error && /database is locked/.test(error.message);
      if (!busy || attempt >= 10) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
    }
  }
}

/**
 * Driver options that make an unreachable or unresponsive database fail fast instead of
 * hanging a request: reaching a server and waiting for a pooled connection are bounded by
 * `ms` (the errors become 503s). A request's reads carry its remaining time as
 * `maxTimeMS` (store/deadline.ts), so the database stops them itself; the socket's own
 * timeout is a second later, a backstop for a database that does not answer at all (and
 * the bound on a write, which carries no maxTimeMS). The driver keeps monitoring in the
 * background, so requests succeed again by themselves when the database returns.
 * (Driver 7's `timeoutMS` is deprecated and has no effect.)
 */
export function databaseTimeouts(ms: number): MongoClientOptions {
  return {
    serverSelectionTimeoutMS: ms,
    connectTimeoutMS: ms,
    socketTimeoutMS: ms + SOCKET_TIMEOUT_MARGIN_MS,
    waitQueueTimeoutMS: ms,
  };
}

/** How long after a command's maxTimeMS the socket gives up on its answer. */
const SOCKET_TIMEOUT_MARGIN_MS = 1000;

export interface Database {
  client: MongoClient;
  db: Db;
  collections: Collections;
  close(): Promise<void>;
}

/** Connects, creates the indexes, and hands back the typed collections. */
export async function openDatabase(
  uri: string,
  dbName: string,
  options: MongoClientOptions = {},
): Promise<Database> {
  const client = new MongoClient(uri, { serverSelectionTimeoutMS: 10_000, ...options });
  await client.connect();
  const mongoDb = client.db(dbName);
  const db = collections(mongoDb);
  await ensureIndexes(db);
  return { client, db: mongoDb, collections: db, close: () => client.close() };
}

/** Asks the database to answer (readiness); throws when it cannot within the driver's timeouts. */
export async function pingDatabase(database: Database): Promise<void> {
  await database.db.command({ ping: 1 });
}

/**
 * First-batch size for the unpaged, batched reads (DataLoader), so one round trip answers
 * them however many facts come back (up to the 16 MB reply limit) instead of the
 * driver's default 101 documents followed by getMore calls.
 */
export const UNPAGED_BATCH_SIZE = 10_000;

/**
 * Upserts that may find their document, per command. FerretDB 1.x holds one of its 100
 * SQLite connections for each such update until the command ends, so a command with more
 * than about 100 of them never returns; MongoDB has no such limit, and 50 costs it little.
 */
export const UPSERTS_PER_COMMAND = 50;

/**
 * A unique index that could not be made because documents already repeat its key:
 * MongoDB's duplicate-key error, or the embedded FerretDB's (it passes SQLite's
 * constraint failure on as an internal error).
 */
export function isRepeatedKey(error: unknown): boolean {
  return (
    isDuplicateKey(error) ||
    (error instanceof Error && /UNIQUE constraint failed/.test(error.message))
  );
}

/** MongoDB's duplicate-key error, the one atomic "someone else got there first" signal. */
export function isDuplicateKey(error: unknown): boolean {
  return (
    typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 11000
  );
}
