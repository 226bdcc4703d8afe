import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  type BulkWriteResult,
  type CommandStartedEvent,
  type Db,
  type Document,
  MongoBulkWriteError,
  MongoClient,
  MongoNetworkError,
  MongoServerError,
  type WriteError,
} from 'mongodb';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { generateDataset } from '../../bench/generate.js';
import { type RunningFerretDb, startFerretDb } from '../../src/embedded/ferretdb.js';
import { WRITE_OUTCOME_UNKNOWN_MESSAGE } from '../../src/errors.js';
import { createGateway } from '../../src/http/app.js';
import {
  bulkWriteFailure,
  duplicateKeyIndexes,
  isOnlyDuplicateKeys,
} from '../../src/store/bulkErrors.js';
import { type Collections, collections } from '../../src/store/collections.js';
import { type Database, databaseTimeouts, openDatabase } from '../../src/store/database.js';
import { migrateStore } from '../../src/store/migrations.js';
import { type EpisodeInput, recordEpisode } from '../../src/store/recordEpisode.js';
import { createApiKey, workspaceIdFor } from '../../src/store/workspaces.js';
import { isDatabaseUnavailable } from '../../src/store/writeOutcome.js';
import { importJsonl } from '../../src/transfer/importJsonl.js';
import { expectHistoryKept, expectOwnInstants, writtenDocuments } from '../helpers/history.js';

/**
 * Faults injected into the bulk writes: the database is killed (SIGKILL, a crash) in the
 * middle of `npm run import` and of a large `recordEpisode`. A write that failed is never
 * reported as done: the import says what it wrote and what it did not and exits non-zero,
 * GraphQL answers an error. After a restart on the same data directory, running the same
 * import or mutation again completes it to exactly what one clean run stores.
 *
 * This file runs its own FerretDB (the shared test database is never killed).
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'memory-gateway-faults-'));
const DB_DIR = join(dir, 'db');
let ferret: RunningFerretDb;
/** host:port, kept across restarts so the clients connected to it come back by themselves. */
let listen: string;
/** The test's own client, to watch and check what the writes stored. */
let client: MongoClient;

beforeAll(async () => {
  ferret = await startFerretDb(DB_DIR);
  listen = new URL(ferret.uri).host;
  client = new MongoClient(ferret.uri, databaseTimeouts(10_000));
});

afterAll(async () => {
  await client?.close();
  await ferret?.stop();
  rmSync(dir, { recursive: true, force: true });
});

let down = false;

/** A crash: the database process is gone at once, its connections reset. */
function crash(): Promise<unknown> {
  down = true;
  process.kill(ferret.pid, 'SIGKILL');
  return ferret.exited;
}

/** The database back on the same address, with the same files. */
async function restart(): Promise<void> {
  ferret = await startFerretDb(DB_DIR, undefined, listen);
  down = false;
}

// A test that failed before bringing the database back leaves it up for the next ones.
afterEach(async () => {
  if (down) {
    await ferret.exited;
    await restart();
  }
});

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/**
 * Every document of the store's collections (but API keys and the audit log), sorted by
 * `_id`, with the fields named in `volatile` (collection: fields) left out.
 */
async function storedDocuments(
  db: Db,
  volatile: Record<string, string[]> = {},
): Promise<Record<string, Document[]>> {
  const out: Record<string, Document[]> = {};
  // Keys (random ids, each setup its own) and the audit logs are not memory.
  const notMemory = new Set(['apiKeys', 'apiKeyUse', 'keyEvents', 'audit']);
  const names = Object.keys(collections(db)).filter((n) => !notMemory.has(n));
  for (const name of names) {
    const docs = await db.collection(name).find({}).sort({ _id: 1 }).toArray();
    out[name] = docs.map((doc) => {
      const copy: Document = { ...doc };
      for (const field of volatile[name] ?? []) delete copy[field];
      return copy;
    });
  }
  return out;
}

describe('the one test of "is this bulk error only duplicates?"', () => {
  const result = {} as BulkWriteResult;
  // Write errors as the driver lists them (its WriteError class is not exported as a value).
  const writeError = (code: number, index: number, errmsg: string) =>
    ({ code, index, errmsg }) as unknown as WriteError;
  const duplicate = (index: number) => writeError(11000, index, 'E11000 duplicate key error');

  it('rejects a bulk write error with an empty list of write errors (a lost connection)', () => {
    // What the driver throws when a batch's command gets no answer.
    const lost = new MongoBulkWriteError(new MongoNetworkError('connection closed'), result);
    expect(lost.writeErrors).toEqual([]);
    expect(isOnlyDuplicateKeys(lost)).toBe(false);
    // Thrown as the driver error it wraps, which the gateway knows for a lost database.
    expect(() => duplicateKeyIndexes(lost)).toThrow(MongoNetworkError);
    expect(isDatabaseUnavailable(bulkWriteFailure(lost))).toBe(true);
    // Even with a duplicate-key code of its own.
    const empty = new MongoBulkWriteError(
      { message: 'no write errors', code: 11000, writeErrors: [] },
      result,
    );
    expect(isOnlyDuplicateKeys(empty)).toBe(false);
    expect(() => duplicateKeyIndexes(empty)).toThrow(empty);
  });

  it('rejects a list that holds another error beside duplicates', () => {
    const mixed = new MongoBulkWriteError(
      {
        message: 'write errors',
        code: 11000,
        writeErrors: [duplicate(0), writeError(121, 1, 'document failed validation'), duplicate(2)],
      },
      result,
    );
    expect(isOnlyDuplicateKeys(mixed)).toBe(false);
    expect(() => duplicateKeyIndexes(mixed)).toThrow(mixed);
  });

  it('rejects an error that is not a bulk write error, even a duplicate key', () => {
    for (const error of [
      new MongoServerError({ message: 'E11000 duplicate key error', code: 11000 }),
      new MongoNetworkError('connection closed'),
      new Error('something else'),
      { code: 11000, writeErrors: [{ code: 11000, index: 0 }] },
      null,
      undefined,
    ]) {
      expect(isOnlyDuplicateKeys(error)).toBe(false);
      expect(() => duplicateKeyIndexes(error)).toThrow();
    }
  });

  it('rejects duplicates that come with a write concern error', () => {
    const withConcern = new MongoBulkWriteError(
      { message: 'duplicates', code: 11000, writeErrors: [duplicate(0)] },
      {
        getWriteConcernError: () => ({ code: 64, errmsg: 'waiting for replication timed out' }),
      } as unknown as BulkWriteResult,
    );
    expect(isOnlyDuplicateKeys(withConcern)).toBe(false);
  });

  it('accepts a list of duplicate keys only, and gives their positions', () => {
    const duplicates = new MongoBulkWriteError(
      { message: 'duplicates', code: 11000, writeErrors: [duplicate(0), duplicate(3)] },
      result,
    );
    expect(isOnlyDuplicateKeys(duplicates)).toBe(true);
    expect(duplicateKeyIndexes(duplicates)).toEqual([0, 3]);
  });

  it("accepts the database's own error for an unordered insert of documents partly stored", async () => {
    const docs = client.db('helper').collection<{ _id: string }>('docs');
    await docs.insertMany([{ _id: 'b' }, { _id: 'd' }]);
    const error = await docs
      .insertMany([{ _id: 'a' }, { _id: 'b' }, { _id: 'c' }, { _id: 'd' }], { ordered: false })
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(isOnlyDuplicateKeys(error)).toBe(true);
    expect(duplicateKeyIndexes(error).sort()).toEqual([1, 3]);
  });
});

describe('npm run import when the database dies in the middle', () => {
  const WORKSPACE = 'faults';
  const FILE = join(dir, 'dataset.jsonl');
  // Four batches of facts, so the database can die between two of them.
  const generated = generateDataset({
    dataset: 'faults',
    facts: 4000,
    entities: 300,
    episodes: 100,
    memories: 600,
    now: new Date('2026-06-01T00:00:00.000Z'),
  });
  // What the file holds, by kind.
  const total = { entities: 0, episodes: 0, facts: 0, memories: 0 };
  const kinds = { entity: 'entities', episode: 'episodes', fact: 'facts', memory: 'memories' };
  for (const line of generated.lines) {
    const { type } = JSON.parse(line) as { type: keyof typeof kinds };
    total[kinds[type] as keyof typeof total]++;
  }
  const records = generated.lines.length;

  interface CliRun {
    code: number | null;
    stdout: string;
    stderr: string;
  }

  /** `npm run import` as a user runs it: a child process against this file's FerretDB. */
  function startImport(dbName: string): { done: Promise<CliRun>; finished: () => boolean } {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'src/cli/import.ts', FILE, '--workspace', WORKSPACE],
      {
        cwd: ROOT,
        env: {
          ...process.env,
          MONGODB_URI: ferret.uri,
          MONGODB_DB: dbName,
          DATA_DIR: join(dir, 'data'),
          PORT: '',
          HOST: '',
          LOG_LEVEL: '',
          // The import's writes are what this test breaks; its vectors come after them
          // (test/cli covers an import with recall by meaning on).
          EMBEDDINGS: 'off',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    // A run that hangs fails the test instead of passing slowly.
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    let finished = false;
    const done = new Promise<CliRun>((resolve) =>
      child.once('close', (code) => {
        finished = true;
        clearTimeout(timer);
        resolve({ code, stdout, stderr });
      }),
    );
    return { done, finished: () => finished };
  }

  async function countsOf(db: Db) {
    return {
      entities: await db.collection('entities').countDocuments({}),
      episodes: await db.collection('episodes').countDocuments({}),
      facts: await db.collection('facts').countDocuments({}),
      memories: await db.collection('memories').countDocuments({}),
    };
  }

  it('fails with what was and was not written, and the same import again completes it', async () => {
    writeFileSync(FILE, `${generated.lines.join('\n')}\n`);
    const db = client.db('import_interrupted');

    // What one clean import of the file stores: the facts' documents are their history as
    // derived from the file's records (docs/IMPORT_EXPORT.md), not one per line.
    const clean = await openDatabase(ferret.uri, 'import_clean');
    // As `npm run import` opens a store (src/openStore.ts): migrations recorded first.
    await migrateStore(clean.collections, new Date('2026-06-02T00:00:00.000Z'));
    const cleanOutcome = await importJsonl(clean.collections, {
      workspace: WORKSPACE,
      content: generated.lines.join('\n'),
      now: new Date('2026-06-02T00:00:00.000Z'),
    });
    expect(cleanOutcome.ok).toBe(true);
    const stored = await countsOf(clean.db);
    expect({ ...stored, facts: total.facts }).toEqual(total);

    // The database dies once the first batch of facts is in (entities and episodes come
    // first, memories last), while the import runs.
    const run = startImport('import_interrupted');
    let factsWhenKilled: number | null = null;
    while (!run.finished()) {
      const facts = await db
        .collection('facts')
        .countDocuments({})
        .catch(() => 0);
      if (facts > 0) {
        factsWhenKilled = facts;
        await crash();
        break;
      }
      await sleep(20);
    }
    const first = await run.done;
    expect(
      factsWhenKilled,
      `the database died while the import was writing: ${first.stderr}`,
    ).not.toBeNull();

    // A failure, said as one: what was read, what was confirmed written, what was not.
    expect(first.stdout).not.toContain('Imported into workspace');
    expect(first.code).toBe(1);
    expect(first.stderr).toContain(`Import into workspace "${WORKSPACE}" FAILED:`);
    expect(first.stderr).toContain(
      `${records} records read from ${FILE}: ${total.entities} entities, ${total.episodes} episodes, ${total.facts} facts, ${total.memories} memories.`,
    );
    const confirmed =
      /Confirmed written before the failure: (\d+) of (\d+) entities, (\d+) of (\d+) episodes, (\d+) of (\d+) facts, (\d+) of (\d+) memories\./.exec(
        first.stderr,
      );
    expect(confirmed, first.stderr).not.toBeNull();
    const [
      entitiesOk,
      entitiesAll,
      episodesOk,
      episodesAll,
      factsOk,
      factsAll,
      memoriesOk,
      memoriesAll,
    ] = confirmed!.slice(1).map(Number);
    expect([entitiesAll, episodesAll, factsAll, memoriesAll]).toEqual([
      total.entities,
      total.episodes,
      total.facts,
      total.memories,
    ]);
    expect([entitiesOk, episodesOk, memoriesOk]).toEqual([total.entities, total.episodes, 0]);
    expect(factsOk).toBeLessThan(total.facts);
    expect(first.stderr).toContain(
      `Not written (or not confirmed): 0 entities, 0 episodes, ${total.facts - factsOk!} facts, ${total.memories} memories.`,
    );
    expect(first.stderr).toContain('Imports are idempotent: run the same import again');

    // The store holds part of the file: all it said was written, and not all the rest.
    await restart();
    const partial = await countsOf(db);
    expect(partial.entities).toBe(total.entities);
    expect(partial.episodes).toBe(total.episodes);
    expect(partial.facts).toBeGreaterThanOrEqual(factsWhenKilled!);
    expect(partial.facts).toBeLessThan(stored.facts);
    expect(partial.memories).toBe(0);

    // The same import again completes it: it writes exactly what was missing.
    const second = await startImport('import_interrupted').done;
    // Only the line naming the store it opened.
    expect(second.stderr).toMatch(/^Store: MongoDB \(MONGODB_URI\), database "[^"]+"\.\n$/);
    expect(second.code).toBe(0);
    expect(second.stdout).toMatch(
      new RegExp(
        `^Imported into workspace "${WORKSPACE}": 0 new entities, 0 new episodes, \\d+ new facts, ${total.memories} new memories \\(${records} records read\\)\\.\n(Facts stored as their records derive, not as the file states them: \\d+ .*\n)?$`,
      ),
    );
    expect(await countsOf(db)).toEqual(stored);

    // And the store holds what one clean import of the file stores, document for document
    // (but the import's own instant: when the workspace, datasets and episodes were recorded).
    try {
      const volatile = {
        workspaces: ['createdAt'],
        datasets: ['createdAt'],
        episodes: ['recordedAt'],
        migrations: ['appliedAt'],
      };
      expect(await storedDocuments(db, volatile)).toEqual(
        await storedDocuments(clean.db, volatile),
      );
    } finally {
      await clean.close();
    }
  }, 300_000);
});

describe('recordEpisode when the database dies in the middle', () => {
  const WORKSPACE = 'faults';
  const DATASET = 'user_42';
  const T0 = new Date('2026-10-01T00:00:00.000Z');
  const T = new Date('2026-11-20T17:00:00.000Z');
  /** When the mutation is sent again, after the database came back. */
  const T2 = new Date('2026-11-20T17:05:00.000Z');
  const EPISODE_ID = '6f1c2a1e-3b5d-4e8f-9a7b-0c1d2e3f4a5b';
  // Subject/predicate pairs with stored facts, stored facts per pair, new facts per pair.
  const PAIRS = 5;
  const OLD_PER_PAIR = 10;
  const NEW_PER_PAIR = 40;
  const SUPERSEDED = PAIRS * OLD_PER_PAIR;
  const THINGS = 60;
  const pair = (i: number) => ({ subject: `person ${i % PAIRS}`, predicate: 'is good at' });

  /** The facts already stored. */
  const old: EpisodeInput = {
    episodeId: '0b7d9c54-1f2e-4a3b-8c6d-5e4f3a2b1c0d',
    occurredAt: T0,
    source: 'chat',
    content: 'user: what I was like before',
    entities: Array.from({ length: PAIRS }, (_, i) => ({ name: `Person ${i}`, type: 'PERSON' })),
    facts: Array.from({ length: PAIRS * OLD_PER_PAIR }, (_, i) => ({
      ...pair(i),
      object: `old value ${i}`,
      objectIsEntity: false,
      confidence: 0.8,
      sourceQuote: null,
      validAt: new Date('2026-01-01T00:00:00.000Z'),
      validUntil: null,
      supersedes: [],
      replaceExisting: false,
    })),
  };

  /**
   * The mutation: 200 facts, each replacing what is stored for its subject and predicate
   * (the first of each pair in valid time supersedes the stored ones; each of the others
   * ends where the next begins), and entities enough for several upsert commands.
   */
  const body = JSON.stringify({
    query: `mutation Record($dataset: String!, $input: RecordEpisodeInput!) {
      recordEpisode(dataset: $dataset, input: $input) { alreadyRecorded outcome supersededIds facts { factId } }
    }`,
    variables: {
      dataset: DATASET,
      input: {
        episode: {
          episodeId: EPISODE_ID,
          occurredAt: '2026-11-01T00:00:00.000Z',
          source: 'chat',
          content: 'user: what I am like now',
        },
        entities: Array.from({ length: THINGS }, (_, i) => ({ name: `Thing ${i}`, type: 'THING' })),
        facts: Array.from({ length: PAIRS * NEW_PER_PAIR }, (_, i) => ({
          ...pair(i),
          object: `thing ${i % THINGS}`,
          objectIsEntity: true,
          confidence: 0.9,
          validAt: new Date(Date.UTC(2026, 8, 1 + Math.floor(i / PAIRS))).toISOString(),
          replaceExisting: true,
        })),
      },
    },
  });

  interface Setup {
    database: Database;
    db: Collections;
    /** Sends the mutation, the gateway's clock reading `at`. */
    send(at?: Date): Promise<{ status: number; json: Record<string, unknown> }>;
  }

  /** A database of its own with the old facts, and a gateway over it whose clock says T. */
  async function setUp(name: string): Promise<Setup> {
    // Bounded waits, as `npm start` sets them (DB_TIMEOUT_MS), generous enough for the
    // slowest command here (the supersessions' stamps: FerretDB writes each fact on its
    // own) on a loaded machine; the crash itself fails the command in flight at once.
    const database = await openDatabase(ferret.uri, name, {
      ...databaseTimeouts(60_000),
      monitorCommands: true,
    });
    const db = database.collections;
    const { key } = await createApiKey(db, WORKSPACE, ['read', 'write'], T0);
    await recordEpisode(db, { workspaceId: workspaceIdFor(WORKSPACE), dataset: DATASET }, old, T0);
    let now = T;
    const gateway = createGateway({ database, clock: () => now });
    const send = async (at = T) => {
      now = at;
      const response = await gateway.fetch(
        new Request('http://gateway.test/graphql', {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body,
          signal: AbortSignal.timeout(150_000),
        }),
      );
      return { status: response.status, json: (await response.json()) as Record<string, unknown> };
    };
    return { database, db, send };
  }

  let reference: Record<string, Document[]>;
  /** The write commands one clean run of the mutation sends, in order. */
  let writes: string[];

  beforeAll(async () => {
    const clean = await setUp('episode_reference');
    try {
      writes = [];
      const record = (event: CommandStartedEvent) => {
        if (['insert', 'update', 'delete'].includes(event.commandName)) {
          writes.push(`${event.commandName} ${event.command[event.commandName]}`);
        }
      };
      clean.database.client.on('commandStarted', record);
      const { json } = await clean.send();
      clean.database.client.off('commandStarted', record);
      expect(json.errors).toBeUndefined();
      const payload = (json.data as { recordEpisode: { supersededIds: string[] } }).recordEpisode;
      expect(payload.supersededIds).toHaveLength(SUPERSEDED);
      reference = await storedDocuments(clean.database.db);
    } finally {
      await clean.database.close();
    }
  }, 180_000);

  // Each write command of the mutation, in the order it sends them (checked below).
  const killPoints = [
    'insert episodeRecords',
    'update datasets',
    'insert episodes',
    'update entities',
    'insert factRecords',
    'insert vocabulary',
    'update facts',
    'insert facts',
    'insert changes',
    'update factRecords',
    'update episodeRecords',
  ];

  it('sends the write commands the kill points name', () => {
    expect([...new Set(writes)]).toEqual(killPoints);
  });

  it.each(killPoints.map((point, i) => [point, i] as const))(
    'killed as it starts "%s": an error, and the same mutation again stores what one clean run does',
    async (point, i) => {
      const setup = await setUp(`episode_killed_${i}`);
      try {
        // The database dies as the command starts, before it can reach it, and comes back
        // on its own at once; a write error taken for success would let the rest go on.
        let restarted: Promise<void> | null = null;
        const kill = (event: CommandStartedEvent) => {
          if (restarted || `${event.commandName} ${event.command[event.commandName]}` !== point) {
            return;
          }
          restarted = crash().then(restart);
        };
        setup.database.client.on('commandStarted', kill);
        const failed = await setup.send();
        setup.database.client.off('commandStarted', kill);
        expect(
          restarted,
          `the database was killed at "${point}" (answer: ${JSON.stringify(failed.json)})`,
        ).not.toBeNull();
        await restarted;

        // An error, never data: the write had begun, so its outcome is unknown, and the
        // answer says so (and that the retry below is safe).
        expect(failed.status).toBe(503);
        expect(failed.json).toEqual({
          errors: [
            {
              message: WRITE_OUTCOME_UNKNOWN_MESSAGE,
              path: ['recordEpisode'],
              extensions: { code: 'WRITE_OUTCOME_UNKNOWN' },
            },
          ],
          data: null,
        });
        const interrupted = await writtenDocuments(setup.database.db);
        const claimed = [...interrupted].some(
          ([id, doc]) => id.startsWith('episodeRecords/') && doc.episodeId === EPISODE_ID,
        );

        // The same mutation again, later, completes the episode, and says this call did it.
        const retried = await setup.send(T2);
        expect(retried.json.errors).toBeUndefined();
        const payload = (
          retried.json.data as {
            recordEpisode: { alreadyRecorded: boolean; outcome: string; supersededIds: string[] };
          }
        ).recordEpisode;
        expect(payload.alreadyRecorded).toBe(false);
        expect(payload.outcome).toBe(claimed ? 'COMPLETED' : 'RECORDED');
        expect(payload.supersededIds).toHaveLength(SUPERSEDED);
        // What the killed attempt stored keeps its instant; what the retry stored carries
        // the retry's; what the store believed in between is what readers saw then.
        const completed = await writtenDocuments(setup.database.db);
        expectOwnInstants(interrupted, completed, T2, [T0]);
        // What the store believed before the killed attempt is unchanged; its records keep
        // its instant, so from T on the history holds what they say (docs/TEMPORAL_MODEL.md,
        // "Where racing writers meet the audit"), and without them, from the retry's T2 on.
        expectHistoryKept(interrupted, completed, [new Date(T.getTime() - 1)]);
        const recordsStored = [...interrupted.keys()].some((id) => id.startsWith('factRecords/'));
        const between = [T, new Date(T.getTime() + 1), new Date(T2.getTime() - 1)];
        if (!recordsStored) expectHistoryKept(interrupted, completed, between);

        // Whichever attempt wrote each document, the documents are the ones a clean run
        // stores: the history is derived from records, each stored by one attempt.
        const asAtT = (docs: Record<string, Document[]>) =>
          JSON.parse(JSON.stringify(docs).split(T2.toISOString()).join(T.toISOString()));
        expect(asAtT(await storedDocuments(setup.database.db))).toEqual(asAtT(reference));
      } finally {
        await setup.database.close();
      }
    },
    300_000,
  );
});
