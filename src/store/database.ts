import { type Collection, type Db, MongoClient, type MongoClientOptions } from 'mongodb';
import type { ChangeDoc } from './changes.js';
import type {
  ApiKeyDoc,
  ApiKeyUseDoc,
  AuditDoc,
  DatasetDoc,
  EntityDoc,
  EpisodeDoc,
  EpisodeRecordDoc,
  FactDoc,
  InvalidationClaimDoc,
  KeyEventDoc,
  MemoryCreationDoc,
  MemoryDoc,
  MemoryVersionDoc,
  MigrationDoc,
  RateLimitDoc,
  RestorationDoc,
  VocabularyDoc,
  WorkspaceDoc,
} from './documents.js';
import { ENTITY_ORDER, EPISODE_ORDER, FACT_ORDER, MEMORY_ORDER } from './orders.js';

/** The collections of the store, typed. The only handle on MongoDB the rest of the code gets. */
export interface Collections {
  workspaces: Collection<WorkspaceDoc>;
  apiKeys: Collection<ApiKeyDoc>;
  apiKeyUse: Collection<ApiKeyUseDoc>;
  keyEvents: Collection<KeyEventDoc>;
  datasets: Collection<DatasetDoc>;
  episodes: Collection<EpisodeDoc>;
  entities: Collection<EntityDoc>;
  facts: Collection<FactDoc>;
  memories: Collection<MemoryDoc>;
  claims: Collection<InvalidationClaimDoc>;
  episodeRecords: Collection<EpisodeRecordDoc>;
  memoryVersions: Collection<MemoryVersionDoc>;
  memoryCreations: Collection<MemoryCreationDoc>;
  restorations: Collection<RestorationDoc>;
  vocabulary: Collection<VocabularyDoc>;
  audit: Collection<AuditDoc>;
  migrations: Collection<MigrationDoc>;
  changes: Collection<ChangeDoc>;
  rateLimits: Collection<RateLimitDoc>;
}

export function collections(db: Db): Collections {
  return {
    workspaces: db.collection('workspaces'),
    apiKeys: db.collection('apiKeys'),
    apiKeyUse: db.collection('apiKeyUse'),
    keyEvents: db.collection('keyEvents'),
    datasets: db.collection('datasets'),
    episodes: db.collection('episodes'),
    entities: db.collection('entities'),
    facts: db.collection('facts'),
    memories: db.collection('memories'),
    claims: db.collection('claims'),
    episodeRecords: db.collection('episodeRecords'),
    memoryVersions: db.collection('memoryVersions'),
    memoryCreations: db.collection('memoryCreations'),
    restorations: db.collection('restorations'),
    vocabulary: db.collection('vocabulary'),
    audit: db.collection('audit'),
    migrations: db.collection('migrations'),
    changes: db.collection('changes'),
    rateLimits: db.collection('rateLimits'),
  };
}

/** An index of the store: its key pattern and name. */
export interface IndexSpec {
  key: Record<string, 1 | -1>;
  name: string;
  /**
   * Set (to the reason) on the few indexes that serve a query across every workspace: the
   * start-up repair scans and the workspace registry. Every other index leads with the
   * tenant, and a query may use it only with the workspace bound (docs/SCALING.md).
   */
  allTenants?: string;
  /** One document per key value (the database refuses a second). */
  unique?: true;
}

/**
 * The shard key of the collections a sharded deployment distributes, and which those are.
 * Every document with the same `_id` has the same key (the `_id` is derived from the
 * workspace and dataset), so a claim's duplicate insert still meets the first one on its
 * shard. The small registries (workspaces, API keys and their use and audit log, dataset
 * names, the audit log) stay unsharded on the primary shard. docs/SCALING.md argues the choice.
 * @internal the deployment plan the index tests (test/indexes) check the store against.
 */
export const SHARD_KEY = { workspaceId: 1, dataset: 1 } as const;
/** @internal see SHARD_KEY. */
export const SHARDED_COLLECTIONS: readonly (keyof Collections)[] = [
  'episodes',
  'entities',
  'facts',
  'memories',
  'claims',
  'episodeRecords',
  'memoryVersions',
  'memoryCreations',
  'restorations',
  'vocabulary',
  'changes',
];

/**
 * Indexes, created idempotently at start. Each serves named store queries (listed in
 * docs/SCALING.md; test/indexes/ checks every query the test suite sends against this
 * list): the tenant (workspace, then dataset) first, so a deployment sharded on that prefix
 * answers from one shard, then equality keys, then the sort (equality, sort, range).
 * Lookups by natural key use `_id` and need no index of their own.
 */
export const INDEXES: { [K in keyof Collections]: IndexSpec[] } = {
  workspaces: [
    {
      key: { name: 1 },
      name: 'name',
      allTenants: 'the registry of workspaces: `keys list` walks it in name order',
    },
  ],
  apiKeys: [{ key: { workspaceId: 1, createdAt: 1 }, name: 'workspace_created' }],
  apiKeyUse: [{ key: { workspaceId: 1 }, name: 'workspace' }],
  keyEvents: [{ key: { workspaceId: 1, at: -1 }, name: 'workspace_at' }],
  datasets: [{ key: { workspaceId: 1, name: 1 }, name: 'workspace_name' }],
  episodes: [
    { key: { workspaceId: 1, dataset: 1, ...EPISODE_ORDER }, name: 'tenant_occurred' },
    { key: { workspaceId: 1, dataset: 1, episodeId: 1 }, name: 'tenant_episode' },
  ],
  entities: [
    { key: { workspaceId: 1, dataset: 1, ...ENTITY_ORDER }, name: 'tenant_updated' },
    {
      key: { workspaceId: 1, dataset: 1, type: 1, ...ENTITY_ORDER },
      name: 'tenant_type_updated',
    },
    { key: { workspaceId: 1, dataset: 1, name: 1 }, name: 'tenant_name' },
  ],
  facts: [
    {
      // The transaction-time fields after the sort carry no order (factId is unique in a
      // dataset); they let a count over the live view or a window read the index alone.
      key: {
        workspaceId: 1,
        dataset: 1,
        ...FACT_ORDER,
        recordedAt: 1,
        invalidAt: 1,
        validUntil: 1,
      },
      name: 'tenant_valid_times',
    },
    {
      key: { workspaceId: 1, dataset: 1, episodeId: 1, ...FACT_ORDER },
      name: 'tenant_episode_valid',
    },
    {
      key: { workspaceId: 1, dataset: 1, subjectKey: 1, ...FACT_ORDER },
      name: 'tenant_subject_valid',
    },
    {
      key: { workspaceId: 1, dataset: 1, objectKey: 1, ...FACT_ORDER },
      name: 'tenant_object_valid',
    },
    {
      key: { workspaceId: 1, dataset: 1, subjectKey: 1, predicateKey: 1, ...FACT_ORDER },
      name: 'tenant_subject_predicate_valid',
    },
    // A fact's terms, then the view's fields: recall's candidates, `q` and recall's counts
    // (facts recorded by K holding a term) are read from the index alone on the embedded
    // store, and a view's bounds are checked on index entries on MongoDB.
    {
      key: {
        workspaceId: 1,
        dataset: 1,
        recallTerms: 1,
        ...FACT_ORDER,
        recordedAt: 1,
        invalidAt: 1,
        validUntil: 1,
      },
      name: 'tenant_recall_terms_times',
    },
    // Recall's second field: the source quote's terms.
    {
      key: {
        workspaceId: 1,
        dataset: 1,
        quoteTerms: 1,
        ...FACT_ORDER,
        recordedAt: 1,
        invalidAt: 1,
        validUntil: 1,
      },
      name: 'tenant_quote_terms_times',
    },
    {
      key: { workspaceId: 1, dataset: 1, supersededBy: 1, ...FACT_ORDER },
      name: 'tenant_superseded_by_valid',
    },
    { key: { workspaceId: 1, dataset: 1, factId: 1 }, name: 'tenant_fact' },
    // Recall's N, the dataset's facts recorded by K: one range of the index, counted.
    { key: { workspaceId: 1, dataset: 1, recordedAt: 1 }, name: 'tenant_recorded' },
    // A fact's corrected versions (a listed fact's, to supersede them too), and those an
    // erased episode's facts ended.
    { key: { workspaceId: 1, dataset: 1, correctionOf: 1 }, name: 'tenant_correction_of' },
    { key: { workspaceId: 1, dataset: 1, correctedBy: 1 }, name: 'tenant_corrected_by' },
  ],
  memories: [
    { key: { workspaceId: 1, ...MEMORY_ORDER }, name: 'workspace_created' },
    {
      key: { workspaceId: 1, dataset: 1, ...MEMORY_ORDER },
      name: 'tenant_created',
    },
    { key: { workspaceId: 1, dataset: 1, memoryId: 1 }, name: 'tenant_memory' },
    {
      key: { workspaceId: 1, dataset: 1, recallTerms: 1, ...MEMORY_ORDER },
      name: 'tenant_recall_terms_created',
    },
  ],
  claims: [
    {
      key: { applied: 1 },
      name: 'applied',
      allTenants: 'the start-up repair finds the few claims not yet applied, in every workspace',
    },
    { key: { workspaceId: 1, dataset: 1, factId: 1 }, name: 'tenant_fact' },
  ],
  episodeRecords: [
    {
      key: { completedAt: 1 },
      name: 'completed',
      allTenants: 'the start-up repair finds the few records not yet completed, in every workspace',
    },
    { key: { workspaceId: 1, dataset: 1 }, name: 'tenant' },
  ],
  memoryVersions: [
    {
      key: { applied: 1 },
      name: 'applied',
      allTenants: 'the start-up repair finds the few versions not yet applied, in every workspace',
    },
    { key: { workspaceId: 1, dataset: 1, memoryId: 1 }, name: 'tenant_memory' },
    // Recall replayed at a past instant reads the versions made after it (store/recall.ts).
    { key: { workspaceId: 1, dataset: 1, at: 1 }, name: 'tenant_at' },
  ],
  memoryCreations: [
    {
      key: { pending: 1 },
      name: 'pending',
      allTenants: 'the start-up repair finds the few creations still owed to the feed',
    },
    { key: { workspaceId: 1, dataset: 1 }, name: 'tenant' },
  ],
  restorations: [
    {
      key: { applied: 1 },
      name: 'applied',
      allTenants:
        'the start-up repair finds the few restorations not yet applied, in every workspace',
    },
    { key: { workspaceId: 1, dataset: 1, factId: 1 }, name: 'tenant_fact' },
  ],
  // The terms a typo may mean: found by the deletions they share with it (domain/typos.ts).
  vocabulary: [{ key: { workspaceId: 1, dataset: 1, typoKeys: 1 }, name: 'tenant_typo_keys' }],
  audit: [
    { key: { workspaceId: 1, at: -1 }, name: 'workspace_at' },
    { key: { workspaceId: 1, dataset: 1, action: 1, at: -1 }, name: 'workspace_dataset_action_at' },
  ],
  // Read by `_id` only.
  migrations: [],
  rateLimits: [
    {
      key: { key: 1 },
      name: 'key',
      unique: true,
      allTenants:
        'a rate limit counts per API key or client address, across workspaces; one counter per limited key, so racing first requests share it',
    },
    {
      key: { expire: 1 },
      name: 'expire',
      allTenants: 'the periodic removal of ended windows, in every workspace',
    },
  ],
  changes: [
    { key: { workspaceId: 1, dataset: 1, seq: 1 }, name: 'tenant_seq' },
    { key: { workspaceId: 1, dataset: 1, redacted: 1, seq: 1 }, name: 'tenant_served_seq' },
    // Each change once: the same insert that claims a change's number claims its natural
    // key, so a second copy is refused by the database itself (store/changes.ts). A store
    // that already holds repeats gets it once the migration has redacted them.
    {
      key: { workspaceId: 1, dataset: 1, changeId: 1 },
      name: 'tenant_change_once',
      unique: true,
    },
    { key: { workspaceId: 1, dataset: 1, factId: 1 }, name: 'tenant_fact' },
    { key: { workspaceId: 1, dataset: 1, episodeId: 1 }, name: 'tenant_episode' },
  ],
};

/** The type a scalar field holds when present and not null (never an array). */
type ScalarTypeOf<V> = [NonNullable<V>] extends [string]
  ? 'string'
  : [NonNullable<V>] extends [string[]]
    ? 'terms'
    : [NonNullable<V>] extends [Date]
      ? 'date'
      : [NonNullable<V>] extends [number]
        ? 'number'
        : [NonNullable<V>] extends [boolean]
          ? 'bool'
          : never;

type DocumentOf<K extends keyof Collections> =
  Collections[K] extends Collection<infer D> ? D : never;

/**
 * The fields of each collection that are scalar: absent, null, or of one type; or `terms`,
 * an array of strings (the analyzed terms recall and `q` search). The types are checked
 * against the documents' own (documents.ts). The embedded database is told them at start
 * (embedded/ferretdb.ts) and then runs every query touching only these fields whole in SQL,
 * served by these indexes, as MongoDB does (an index on a terms field is a table of its
 * keys, kept with the document); it refuses a write that breaks the declaration rather than
 * answer wrongly (embedded-db/README.md). Every field an index names is here; the index
 * tests check that. Every collection's `_id` is a string, which the database checks too.
 */
export const SCALAR_FIELDS: {
  // The rate limit counters are rate-limiter-flexible's documents, with ObjectId ids: left
  // undeclared, they are stored and queried as FerretDB does by itself.
  [K in Exclude<keyof Collections, 'rateLimits'>]: {
    [F in Exclude<keyof DocumentOf<K>, '_id'> & string]?: ScalarTypeOf<DocumentOf<K>[F]>;
  };
} = {
  workspaces: { name: 'string', createdAt: 'date' },
  apiKeys: {
    workspaceId: 'string',
    createdAt: 'date',
    revokedAt: 'date',
    name: 'string',
    expiresAt: 'date',
    createdBy: 'string',
  },
  apiKeyUse: { workspaceId: 'string', lastUsedAt: 'date' },
  keyEvents: {
    workspaceId: 'string',
    action: 'string',
    keyId: 'string',
    by: 'string',
    name: 'string',
    expiresAt: 'date',
    at: 'date',
  },
  datasets: { workspaceId: 'string', name: 'string', createdAt: 'date' },
  episodes: {
    workspaceId: 'string',
    dataset: 'string',
    episodeId: 'string',
    occurredAt: 'date',
    recordedAt: 'date',
    source: 'string',
  },
  entities: {
    workspaceId: 'string',
    dataset: 'string',
    entityId: 'string',
    name: 'string',
    type: 'string',
    updatedAt: 'date',
  },
  facts: {
    workspaceId: 'string',
    dataset: 'string',
    factId: 'string',
    episodeId: 'string',
    subjectKey: 'string',
    objectKey: 'string',
    predicateKey: 'string',
    validAt: 'date',
    validUntil: 'date',
    recordedAt: 'date',
    invalidAt: 'date',
    invalidReason: 'string',
    supersededBy: 'string',
    restorations: 'number',
    correctionOf: 'string',
    correctedBy: 'string',
    replaceExisting: 'bool',
    recallTerms: 'terms',
    quoteTerms: 'terms',
  },
  memories: {
    workspaceId: 'string',
    dataset: 'string',
    memoryId: 'string',
    memoryKind: 'string',
    scope: 'string',
    sourceType: 'string',
    sourceId: 'string',
    projectId: 'string',
    userId: 'string',
    pinned: 'bool',
    version: 'number',
    archivedAt: 'date',
    createdAt: 'date',
    updatedAt: 'date',
    validFrom: 'date',
    validUntil: 'date',
    supersededBy: 'string',
    recallTerms: 'terms',
  },
  claims: {
    workspaceId: 'string',
    dataset: 'string',
    factId: 'string',
    invalidAt: 'date',
    applied: 'bool',
  },
  episodeRecords: {
    workspaceId: 'string',
    dataset: 'string',
    episodeId: 'string',
    completedAt: 'date',
  },
  memoryVersions: {
    workspaceId: 'string',
    dataset: 'string',
    memoryId: 'string',
    version: 'number',
    applied: 'bool',
    at: 'date',
  },
  memoryCreations: {
    workspaceId: 'string',
    dataset: 'string',
    memoryId: 'string',
    pending: 'bool',
  },
  restorations: {
    workspaceId: 'string',
    dataset: 'string',
    factId: 'string',
    generation: 'number',
    applied: 'bool',
  },
  vocabulary: { workspaceId: 'string', dataset: 'string', term: 'string', typoKeys: 'terms' },
  audit: { workspaceId: 'string', dataset: 'string', action: 'string', at: 'date' },
  migrations: {},
  changes: {
    workspaceId: 'string',
    dataset: 'string',
    seq: 'number',
    changeId: 'string',
    factId: 'string',
    episodeId: 'string',
    memoryId: 'string',
    redacted: 'bool',
  },
};

/**
 * Indexes earlier versions created and this one replaced, dropped at start once their
 * replacements exist, so a store opened by this version keeps no index it never reads
 * (each costs every write).
 */
export const RETIRED_INDEXES: {
  [K in keyof Collections]?: { name: string; replacedBy: string }[];
} = {
  facts: [
    { name: 'tenant_valid', replacedBy: 'tenant_valid_times' },
    { name: 'tenant_recall_terms_valid', replacedBy: 'tenant_recall_terms_times' },
    { name: 'tenant_quote_terms_valid', replacedBy: 'tenant_quote_terms_times' },
  ],
  changes: [{ name: 'tenant_change', replacedBy: 'tenant_change_once' }],
};

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
