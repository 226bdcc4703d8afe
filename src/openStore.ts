import type { MongoClientOptions } from 'mongodb';
import { systemClock } from './clock.js';
import { type Config, StartupError } from './config.js';
import { acquireEmbeddedDb, type RunningFerretDb } from './embedded/ferretdb.js';
import { type Embedder, loadEmbedder } from './embeddings/embedder.js';
import { ensureModelFiles, readModelFiles } from './embeddings/modelFiles.js';
import { type Database, openDatabase } from './store/database.js';
import { embedPending } from './store/embeddings.js';
import { repairFactHistories } from './store/materialise.js';
import { repairMemoryWrites } from './store/memoryWrites.js';
import { migrateStore } from './store/migrations.js';
import { repairEpisodeRecords } from './store/recordEpisode.js';

export interface OpenedStore {
  database: Database;
  /** Set when the embedded FerretDB is in use. */
  embedded: RunningFerretDb | null;
  /** The embedding model, loaded (EMBEDDINGS=on), or null: recall by words alone. */
  embedder: Embedder | null;
  /** Closes the client, then stops the embedded database if this process runs it. */
  close(): Promise<void>;
}

/**
 * Opens the configured database: MONGODB_URI when set, else the embedded FerretDB under
 * DATA_DIR (shared with any other process using that folder). Before serving, brings
 * documents written by an earlier version up to date (store/migrations.ts), then finishes
 * any history, memory write or episode recording whose follow-up a crash cut short (all
 * idempotent, so a replica doing the same at the same time does no harm). With
 * EMBEDDINGS=on it loads the embedding model first (fetched once, checked by its sums: a
 * missing or corrupt model is a StartupError of one line) and, last, stores the vectors of
 * whatever is still without one.
 */
export async function openStore(
  config: Config,
  role: 'server' | 'cli',
  log: (line: string) => void = () => {},
  clientOptions: MongoClientOptions = {},
  /** Whether to load the embedding model (EMBEDDINGS=on): the server and `npm run import` do. */
  { embeddings = role === 'server' }: { embeddings?: boolean } = {},
): Promise<OpenedStore> {
  const embedder = embeddings && config.EMBEDDINGS === 'on' ? await openEmbedder(log) : null;
  const embedded = config.MONGODB_URI ? null : await acquireEmbeddedDb(config.DATA_DIR, role, log);
  const uri = config.MONGODB_URI ?? embedded!.uri;
  let database: Database;
  try {
    database = await openDatabase(uri, config.MONGODB_DB, clientOptions);
  } catch (error) {
    await embedded?.stop();
    throw config.MONGODB_URI
      ? describeUnopenedMongoDb(error, config.MONGODB_URI, clientOptions.serverSelectionTimeoutMS)
      : error;
  }
  // A command says which store it works on: the data folder is easy to get wrong.
  if (role === 'cli') {
    log(
      config.MONGODB_URI
        ? `Store: MongoDB (MONGODB_URI), database "${config.MONGODB_DB}".`
        : `Store: the embedded database in ${config.DATA_DIR} (DATA_DIR; set MONGODB_URI for MongoDB).`,
    );
  }
  for (const m of await migrateStore(database.collections, systemClock())) {
    if (m.changed > 0) log(`Migrated the store: ${m.describe} (${m.changed} documents).`);
  }
  await repairFactHistories(database.collections);
  await repairMemoryWrites(database.collections, systemClock());
  await repairEpisodeRecords(database.collections, systemClock());
  if (embedder) await embedWhatIsPending(database, embedder, log);
  return {
    database,
    embedded,
    embedder,
    close: async () => {
      await database.close();
      await embedded?.stop();
    },
  };
}

async function openEmbedder(log: (line: string) => void): Promise<Embedder> {
  await ensureModelFiles(log);
  return loadEmbedder(readModelFiles());
}

/** How often the start-up's embedding says how far it got, at most. */
const PROGRESS_EVERY_MS = 5000;

/** The vectors of every dataset's documents still without one, with progress now and then. */
export async function embedWhatIsPending(
  database: Database,
  embedder: Embedder,
  log: (line: string) => void,
): Promise<void> {
  let said = performance.now();
  const counts = await embedPending(database.collections, embedder, null, (c) => {
    if (performance.now() - said < PROGRESS_EVERY_MS) return;
    said = performance.now();
    log(`Embedding for recall by meaning: ${c.facts} facts, ${c.memories} memories so far.`);
  });
  if (counts.facts + counts.memories > 0) {
    log(`Embedded ${counts.facts} facts and ${counts.memories} memories for recall by meaning.`);
  }
}

/** The host list of a MongoDB connection string, without the user name and password before `@`. */
function mongoDbHosts(uri: string): string {
  const authority = uri.replace(/^mongodb(\+srv)?:\/\//, '').split(/[/?]/, 1)[0] ?? '';
  return authority.slice(authority.lastIndexOf('@') + 1) || '(none)';
}

/**
 * MONGODB_URI's usual failures (nothing answers, the name does not resolve, the password
 * is refused, the string does not parse) as one sentence naming the host(s) and what to
 * do; anything else as it is. Never the URI itself: it may carry a password.
 */
function describeUnopenedMongoDb(error: unknown, uri: string, timeoutMs?: number): unknown {
  if (!(error instanceof Error)) return error;
  const hosts = mongoDbHosts(uri);
  const unset = 'or unset MONGODB_URI to use the embedded database';
  // The driver's own messages name addresses, not credentials; cut any URI out all the same.
  const said = error.message.replaceAll(uri, 'MONGODB_URI');
  const code = (error as { code?: unknown; codeName?: unknown }).codeName ?? '';
  if (error.name === 'MongoServerSelectionError') {
    const within = timeoutMs === undefined ? '' : ` within ${timeoutMs} ms`;
    return new StartupError(
      `Could not reach MongoDB at ${hosts} (MONGODB_URI)${within}: ${said}. Check that it is running and reachable from here, ${unset}.`,
      { cause: error },
    );
  }
  if (error.name === 'MongoParseError' || error.name === 'MongoAPIError') {
    return new StartupError(`MONGODB_URI is not a usable connection string: ${said}.`, {
      cause: error,
    });
  }
  if (code === 'AuthenticationFailed') {
    return new StartupError(
      `MongoDB at ${hosts} refused the user name and password in MONGODB_URI (authentication failed): correct them, ${unset}.`,
      { cause: error },
    );
  }
  if (/^querySrv /.test(error.message)) {
    return new StartupError(
      `Could not look up the MongoDB servers of ${hosts} (MONGODB_URI, mongodb+srv): ${said}. Check the name and this machine's DNS, ${unset}.`,
      { cause: error },
    );
  }
  return error;
}
