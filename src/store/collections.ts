/*
 * What the store is made of, declared once: its collections and their document types, the
 * indexes every query is served by (INDEXES), the shard key, the scalar fields the embedded
 * database indexes in SQL (SCALAR_FIELDS), and the indexes retired. The connection and the
 * writes' error signals are in database.ts.
 */

import type { Collection, Db } from 'mongodb';
import type {
  ApiKeyDoc,
  ApiKeyUseDoc,
  AuditDoc,
  ChangeDoc,
  DatasetDoc,
  EntityDoc,
  EpisodeDoc,
  EpisodeRecordDoc,
  FactDoc,
  FactRecordDoc,
  KeyEventDoc,
  MemoryCreationDoc,
  MemoryDoc,
  MemoryVersionDoc,
  MigrationDoc,
  RateLimitDoc,
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
  factRecords: Collection<FactRecordDoc>;
  episodeRecords: Collection<EpisodeRecordDoc>;
  memoryVersions: Collection<MemoryVersionDoc>;
  memoryCreations: Collection<MemoryCreationDoc>;
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
    factRecords: db.collection('factRecords'),
    episodeRecords: db.collection('episodeRecords'),
    memoryVersions: db.collection('memoryVersions'),
    memoryCreations: db.collection('memoryCreations'),
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
  'factRecords',
  'episodeRecords',
  'memoryVersions',
  'memoryCreations',
  'vocabulary',
  'changes',
];

/**
 * The index of a start-up repair scan: across every workspace, it finds the few documents
 * an interrupted write left unfinished (the `repair*` functions of the store).
 */
function repairScan(field: string, name: string, what: string): IndexSpec {
  return {
    key: { [field]: 1 },
    name,
    allTenants: `the start-up repair finds the few ${what}, in every workspace`,
  };
}

/**
 * An index led by the tenant (workspace, then dataset: SHARD_KEY), then `fields`, named
 * `tenant_<suffix>` (`tenant` alone when it holds no more).
 */
function tenantIndex(suffix = '', fields: IndexSpec['key'] = {}): IndexSpec {
  return { key: { ...SHARD_KEY, ...fields }, name: suffix ? `tenant_${suffix}` : 'tenant' };
}

/**
 * A fact index's transaction-time fields, after its sort: they carry no order (factId is
 * unique in a dataset), and let a count over the live view or a window read the index alone.
 */
const VIEW_BOUNDS = { recordedAt: 1, invalidAt: 1, validUntil: 1 } as const;

/**
 * A memory index's view fields, after its sort (which holds `createdAt`): the live view
 * (archivedAt, validUntil) and a replay's (validFrom too).
 */
const MEMORY_VIEW_BOUNDS = { archivedAt: 1, validUntil: 1, validFrom: 1 } as const;

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
  episodes: [tenantIndex('occurred', EPISODE_ORDER), tenantIndex('episode', { episodeId: 1 })],
  entities: [
    tenantIndex('updated', ENTITY_ORDER),
    tenantIndex('type_updated', { type: 1, ...ENTITY_ORDER }),
    tenantIndex('name', { name: 1 }),
  ],
  facts: [
    tenantIndex('valid_times', { ...FACT_ORDER, ...VIEW_BOUNDS }),
    tenantIndex('episode_valid', { episodeId: 1, ...FACT_ORDER }),
    tenantIndex('subject_valid', { subjectKey: 1, ...FACT_ORDER }),
    tenantIndex('object_valid', { objectKey: 1, ...FACT_ORDER }),
    tenantIndex('subject_predicate_valid', { subjectKey: 1, predicateKey: 1, ...FACT_ORDER }),
    // A fact's terms, then the view's fields: recall's candidates, `q` and recall's counts
    // (facts recorded by K holding a term) are read from the index alone on the embedded
    // store, and a view's bounds are checked on index entries on MongoDB.
    tenantIndex('recall_terms_times', { recallTerms: 1, ...FACT_ORDER, ...VIEW_BOUNDS }),
    // Recall's second field: the source quote's terms.
    tenantIndex('quote_terms_times', { quoteTerms: 1, ...FACT_ORDER, ...VIEW_BOUNDS }),
    tenantIndex('superseded_by_valid', { supersededBy: 1, ...FACT_ORDER }),
    tenantIndex('fact', { factId: 1 }),
    // Recall's N, the dataset's facts recorded by K: one range of the index, counted.
    tenantIndex('recorded', { recordedAt: 1 }),
    // A fact's corrected versions (a listed fact's, to supersede them too), and those an
    // erased episode's facts ended.
    tenantIndex('correction_of', { correctionOf: 1 }),
    tenantIndex('corrected_by', { correctedBy: 1 }),
    // Recall by meaning: a dataset's facts still without a vector, and those whose vector
    // is new since a process's vector index last looked (store/embeddings.ts).
    tenantIndex('embedded', { embedded: 1, embeddedAt: 1 }),
    repairScan('embedded', 'embedded', 'documents not yet embedded'),
  ],
  memories: [
    { key: { workspaceId: 1, ...MEMORY_ORDER }, name: 'workspace_created' },
    tenantIndex('created', MEMORY_ORDER),
    tenantIndex('memory', { memoryId: 1 }),
    // A memory's terms, then the view's fields: recall's candidates read from the index
    // alone on the embedded store (as the facts' terms index does).
    tenantIndex('recall_terms_view', { recallTerms: 1, ...MEMORY_ORDER, ...MEMORY_VIEW_BOUNDS }),
    // Recall's N for memories, the view's size: counted from the index alone.
    tenantIndex('view', { ...MEMORY_VIEW_BOUNDS, createdAt: 1 }),
    tenantIndex('embedded', { embedded: 1, embeddedAt: 1 }),
    repairScan('embedded', 'embedded', 'documents not yet embedded'),
  ],
  factRecords: [
    repairScan('materialised', 'materialised', 'records whose pair is not yet materialised'),
    // A pair's records, read whole by every materialisation (store/materialise.ts).
    tenantIndex('pair', { subjectKey: 1, predicateKey: 1 }),
    // A fact's deletes and restores, and what an erased episode's facts leave.
    tenantIndex('fact', { factId: 1 }),
    tenantIndex('episode', { episodeId: 1 }),
  ],
  episodeRecords: [
    repairScan('completedAt', 'completed', 'records not yet completed'),
    tenantIndex(),
  ],
  memoryVersions: [
    repairScan('applied', 'applied', 'versions not yet applied'),
    tenantIndex('memory', { memoryId: 1 }),
    // Recall replayed at a past instant reads the versions made after it (store/recall.ts).
    tenantIndex('at', { at: 1 }),
  ],
  memoryCreations: [
    repairScan('pending', 'pending', 'creations still owed to the feed'),
    tenantIndex(),
  ],
  // The terms a typo may mean: found by the deletions they share with it (domain/typos.ts).
  vocabulary: [tenantIndex('typo_keys', { typoKeys: 1 })],
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
    tenantIndex('seq', { seq: 1 }),
    tenantIndex('served_seq', { redacted: 1, seq: 1 }),
    // Each change once: the same insert that claims a change's number claims its natural
    // key, so a second copy is refused by the database itself (store/changes.ts). A store
    // that already holds repeats gets it once the migration has redacted them.
    { ...tenantIndex('change_once', { changeId: 1 }), unique: true },
    tenantIndex('fact', { factId: 1 }),
    tenantIndex('episode', { episodeId: 1 }),
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
    embedded: 'bool',
    embeddedAt: 'date',
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
    embedded: 'bool',
    embeddedAt: 'date',
  },
  factRecords: {
    workspaceId: 'string',
    dataset: 'string',
    subjectKey: 'string',
    predicateKey: 'string',
    kind: 'string',
    factId: 'string',
    episodeId: 'string',
    by: 'string',
    generation: 'number',
    at: 'date',
    materialised: 'bool',
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
  memories: [{ name: 'tenant_recall_terms_created', replacedBy: 'tenant_recall_terms_view' }],
};
