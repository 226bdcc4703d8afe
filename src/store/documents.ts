import type { Binary, ObjectId } from 'mongodb';
import type { Scope } from '../domain/apiKey.js';
import { documentId, normalizeUuid } from '../domain/ids.js';
import { type EntityType, entityKey, predicateKey } from '../domain/names.js';
import { factRecallTerms, quoteRecallTerms, recallTerms } from '../domain/recallTerms.js';
import type { Tenant } from './tenant.js';

/**
 * The stored documents: their shapes, their `_id`s and, for each kind that more than one
 * write path creates, the one builder every path uses (recording an episode, the JSONL
 * import, the memory writes), so a document is the same whichever path wrote it and a
 * re-import of an export hits the same `_id` with the same content.
 *
 * Every document carries `workspaceId`, and every document that belongs to a dataset
 * carries `dataset`; `_id` is derived from the natural key (see domain/ids.ts). Absent
 * values are stored as `null`, never left out, so a filter on `null` means one thing. The
 * exceptions are fields added after documents of their kind were first stored: older
 * documents lack them, so each is optional (`?:`) below and its comment says what its
 * absence means (test/store/documentRule.test.ts holds that).
 */

export interface WorkspaceDoc {
  /** The workspace id: derived from the name, so "create if needed" is one insert. */
  _id: string;
  name: string;
  createdAt: Date;
}

export interface ApiKeyDoc {
  /** The key id: the non-secret part of the key. */
  _id: string;
  workspaceId: string;
  /**
   * The workspace's name, so authenticating is one read (a workspace's name never
   * changes: its id is derived from it). Absent on keys created before it was stored.
   */
  workspace?: string;
  /** SHA-256 of the secret part; the key itself is never stored. */
  secretHash: string;
  scopes: Scope[];
  createdAt: Date;
  revokedAt: Date | null;
  /** A label for people ("ingest pipeline"); absent on keys made before keys had names. */
  name?: string | null;
  /** When the key stops working (null or absent: never). */
  expiresAt?: Date | null;
  /** The key that made it through the API; null or absent: the CLI made it. */
  createdBy?: string | null;
}

/**
 * A rate limit's count for one key in one window (store/rateLimits.ts): the document
 * rate-limiter-flexible's MongoDB store writes, `key` being the limiter's name and the
 * limited key or address.
 */
export interface RateLimitDoc {
  _id: ObjectId;
  key: string;
  points: number;
  /** When the window ends (null: never). */
  expire: Date | null;
}

/**
 * When a key was last used, kept apart from the key's record: FerretDB writes a whole
 * document back on every update, so a stamp on the key itself could undo a revocation
 * racing it (docs/TEMPORAL_MODEL.md, "Writes without transactions").
 */
export interface ApiKeyUseDoc {
  /** The key id. */
  _id: string;
  workspaceId: string;
  lastUsedAt: Date;
}

/**
 * A change to a workspace's keys, as the key audit log keeps it: who (the acting key, null
 * for the CLI), when, what (the key, its name, scopes and expiry); never a secret. A
 * revocation's entry is also its claim: its `_id` (`revoked:<keyId>`) exists at most once.
 */
export interface KeyEventDoc {
  /** `created:<keyId>` or `revoked:<keyId>`. */
  _id: string;
  workspaceId: string;
  action: 'created' | 'revoked';
  keyId: string;
  /** The key that made the change; null: the CLI. */
  by: string | null;
  name: string | null;
  scopes: Scope[];
  expiresAt: Date | null;
  at: Date;
}

export interface DatasetDoc {
  _id: string;
  workspaceId: string;
  name: string;
  createdAt: Date;
}

export interface EpisodeDoc {
  _id: string;
  workspaceId: string;
  dataset: string;
  episodeId: string;
  occurredAt: Date;
  source: string;
  content: string;
  recordedAt: Date;
}

export interface EntityDoc {
  _id: string;
  workspaceId: string;
  dataset: string;
  entityId: string;
  /** Lower-cased; unique per dataset because `_id` is derived from it. */
  name: string;
  type: EntityType;
  updatedAt: Date;
}

type InvalidReason = 'superseded' | 'deleted';

/**
 * Derived, after the write: the meaning of a fact's statement or a memory's text, for
 * recall by meaning (store/embeddings.ts fills it; src/embeddings/ computes it). A vector
 * depends on the text alone, so it is never exported: an import computes it again.
 */
export interface Embedded {
  /** False from the write of a text until its vector is stored. */
  embedded: boolean;
  /** The vector: int8, unit length × 127 (BSON binary); null or absent until embedded. */
  embedding?: Binary | null;
  /**
   * When the vector was stored, by the clock of the process that stored it: where every
   * process's vector index reads what is new since it last looked (recall/meaningIndex.ts).
   * Null or absent until embedded.
   */
  embeddedAt?: Date | null;
}
/** The fields of Embedded: derived, so never given by a write nor compared. */
export type EmbeddedField = keyof Embedded;

export interface FactDoc extends Embedded {
  _id: string;
  workspaceId: string;
  dataset: string;
  factId: string;
  subject: string;
  predicate: string;
  object: string;
  objectIsEntity: boolean;
  confidence: number;
  sourceQuote: string | null;
  episodeId: string | null;
  /** Valid time: when the statement is true in the world. */
  validAt: Date;
  validUntil: Date | null;
  /** Transaction time: when the store believed it. */
  recordedAt: Date;
  invalidAt: Date | null;
  invalidReason: InvalidReason | null;
  supersededBy: string | null;
  /**
   * Recorded with `replaceExisting`: the one value of its subject and predicate at a time
   * (domain/pairHistory.ts). Absent on facts stored before it was kept: false.
   */
  replaceExisting?: boolean;
  /** Derived: lower-cased subject, object and predicate, for entity and history lookups. */
  subjectKey: string;
  objectKey: string;
  predicateKey: string;
  /**
   * Derived: the analyzed terms of subject + predicate + object, for recall and `q`
   * (domain/recallTerms.ts).
   */
  recallTerms: string[];
  /**
   * Derived: the analyzed terms of the source quote, recall's second field (absent on facts
   * stored before it was kept; migration `quote-terms` fills it).
   */
  quoteTerms: string[];
  /**
   * Written by versions from before the history was derived (how many times a delete was
   * undone); no path writes it now, and materialising a pair drops it. Absent means 0.
   */
  restorations?: number;
  /**
   * A version (docs/TEMPORAL_MODEL.md, "The history is derived"): the fact it is a version
   * of, as first recorded (a version of a version names the first). Null or absent on a
   * fact as recorded.
   */
  correctionOf?: string | null;
  /**
   * A corrected version's: the fact whose `validAt` ends it (its parent's successor). Null
   * or absent on a fact as recorded.
   */
  correctedBy?: string | null;
}

/** What a fact says, as a recording gives it and the fact stores it. */
export const STATEMENT_FIELDS = [
  'subject',
  'predicate',
  'object',
  'objectIsEntity',
  'confidence',
  'sourceQuote',
] as const satisfies (keyof FactDoc)[];
export type FactStatement = Pick<FactDoc, (typeof STATEMENT_FIELDS)[number]>;

/**
 * A fact as the reads that answer clients return it: without what only filters and
 * writes use (the derived `recallTerms` and `predicateKey`, the storage `_id`, the restoration
 * generation), which stay in the database rather than being decoded for every fact of
 * every page.
 */
export type FactView = Omit<
  FactDoc,
  '_id' | 'predicateKey' | 'recallTerms' | 'quoteTerms' | 'restorations' | EmbeddedField
>;

export interface MemoryDoc extends Embedded {
  _id: string;
  workspaceId: string;
  dataset: string;
  memoryId: string;
  text: string;
  memoryKind: string;
  scope: string;
  sourceType: string;
  sourceId: string | null;
  projectId: string | null;
  userId: string | null;
  importance: number;
  salience: number;
  pinned: boolean;
  version: number;
  archivedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
  lastUsedAt: Date | null;
  validFrom: Date;
  validUntil: Date | null;
  supersededBy: string | null;
  /** Derived: the analyzed terms of the text, for recall (domain/recallTerms.ts). */
  recallTerms: string[];
}

/**
 * The claim of recording one episode (`_id` = the episode's document id). It carries the
 * validated input, so a retry, a concurrent duplicate or the start-up repair pass
 * completes the same work (store/recordEpisode.ts).
 */
export interface EpisodeRecordDoc {
  _id: string;
  workspaceId: string;
  dataset: string;
  episodeId: string;
  /**
   * When the first attempt claimed it. What each attempt stores carries that attempt's
   * own instant (the time it became visible), not this one.
   */
  recordedAt: Date;
  /** SHA-256 of the canonical input: the same id with other content is a conflict. */
  inputHash: string;
  /** The canonical input, as JSON. */
  input: string;
  completedAt: Date | null;
}

/** The claim of the n-th version of a memory (`<memory _id>:v<n>`), with what it sets. */
export interface MemoryVersionDoc {
  _id: string;
  workspaceId: string;
  dataset: string;
  memoryId: string;
  version: number;
  /** The fields the version sets on the memory (always including version and updatedAt). */
  set: Partial<MemoryDoc>;
  /**
   * The same fields' values on version n-1, which the version replaces: what undoes it, so
   * recall can replay the memory as it was before `at`. Absent on versions written before
   * it was kept.
   */
  before?: Partial<MemoryDoc>;
  /** A memory this version creates (the successor of a supersede). */
  create: MemoryDoc | null;
  at: Date;
  /** False until its follow-up is done (its change in the feed); absent on older claims: done. */
  applied?: boolean;
}

/**
 * A memory's creation, owed to the feed: written before the memory, removed once the
 * memory's MEMORY_CREATED change is appended (store/memoryWrites.ts createMemory), so the
 * start-up repair appends the change of a creation a crash cut short.
 */
export interface MemoryCreationDoc {
  /** The memory's `_id`. */
  _id: string;
  workspaceId: string;
  dataset: string;
  memoryId: string;
  pending: true;
  at: Date;
}

/**
 * A term of a dataset's facts (statement or source quote), kept so a question's typo can
 * be matched to it (domain/typos.ts): `_id` from the tenant and the term.
 */
export interface VocabularyDoc {
  _id: string;
  workspaceId: string;
  dataset: string;
  term: string;
  /** Derived: the term's deletions up to MAX_TYPO_DISTANCE (empty when never corrected to). */
  typoKeys: string[];
}

/**
 * One record of a subject and predicate's history (docs/TEMPORAL_MODEL.md, "The history
 * is derived"): the records are the truth, and the pair's fact documents are what
 * domain/pairHistory.ts derives from them (store/materialise.ts). Never changed once
 * written but for `materialised`; an erasure removes them.
 */
export interface FactRecordDoc {
  /** From the tenant, the kind and what it is about: a second copy is a duplicate key. */
  _id: string;
  workspaceId: string;
  dataset: string;
  /** The pair whose history it belongs to (a said-wrong: its target's). */
  subjectKey: string;
  predicateKey: string;
  /**
   * `erased`: an erasure of `episodeId` in progress on this pair: the episode's records
   * count for nothing from then on, and all of them, this one too, are removed once the
   * pair is derived without them (a retry finds the erasure's pairs by it).
   */
  kind: 'asserted' | 'saidWrong' | 'deleted' | 'restored' | 'erased';
  /** The fact it is about (asserted: the fact; the others: the fact as first recorded). */
  factId: string;
  /**
   * An assertion's episode; a said-wrong's: the episode of the fact that said it; an
   * erasure's: the episode erased.
   */
  episodeId: string | null;
  /** A said-wrong's: the fact that listed it in `supersedes` (null: an import without one). */
  by: string | null;
  /** A delete's or restore's: the how-manyth of the fact (0, 1, …); null on the others. */
  generation: number | null;
  /** Its recording instant: transaction time. */
  at: Date;
  /** An assertion's: the fact as asserted. */
  fact: AssertedStatement | null;
  /** False until a materialisation of its pair that read it was seen through. */
  materialised: boolean;
  /**
   * Written without the change feed (an import, a migration): the changes it causes are
   * not told, however often its pair is materialised. Absent: told.
   */
  untold?: boolean;
}

/** A fact as asserted: the statement, its valid time as given, and `replaceExisting`. */
export type AssertedStatement = Pick<
  FactDoc,
  | 'subject'
  | 'predicate'
  | 'object'
  | 'objectIsEntity'
  | 'confidence'
  | 'sourceQuote'
  | 'validAt'
  | 'validUntil'
> & { replaceExisting: boolean };

/** A fact record's `_id`: its kind, the fact it is about, and what tells it apart. */
export function factRecordId(
  tenant: Tenant,
  kind: FactRecordDoc['kind'],
  factId: string,
  ...key: string[]
): string {
  return documentId('factRecord', tenant.workspaceId, tenant.dataset, kind, factId, ...key);
}

/** A migration that has run to the end (store/migrations.ts). */
export interface MigrationDoc {
  /** The migration's id. */
  _id: string;
  appliedAt: Date;
}

/** Who erased what, when, and how much; never the erased content. */
export interface AuditDoc {
  _id: string;
  workspaceId: string;
  keyId: string;
  action: 'eraseDataset' | 'eraseEpisode';
  dataset: string;
  episodeId: string | null;
  at: Date;
  counts: Record<string, number>;
}

/** What an erasure removed: the counts its change and its audit entry carry. */
export interface ErasureCounts {
  facts: number;
  entities: number;
  episodes: number;
  memories: number;
  /** Facts the erased episode had superseded, live again. */
  restoredFacts: number;
}

/** The kinds of change a dataset's feed tells (store/changes.ts). */
export const DATASET_CHANGE_KINDS = [
  'FACT_RECORDED',
  'FACT_SUPERSEDED',
  'FACT_DELETED',
  'FACT_RESTORED',
  'FACT_CORRECTED',
  'EPISODE_RECORDED',
  'MEMORY_CREATED',
  'MEMORY_CHANGED',
  'EPISODE_ERASED',
  'DATASET_ERASED',
] as const;
type DatasetChangeKind = (typeof DATASET_CHANGE_KINDS)[number];

/** One change of a dataset's feed (store/changes.ts). */
export interface ChangeDoc {
  _id: string;
  workspaceId: string;
  dataset: string;
  /** The change's place in its dataset's feed: 1, 2, 3, … with no number used twice. */
  seq: number;
  /**
   * The change's natural key (its kind, its subject and the instant of the claim that made
   * it): the same change written again by a retry or a repair has the same one, and is
   * not appended twice.
   */
  changeId: string;
  /** Its transaction time: the instant of the write that made it. */
  at: Date;
  kind: DatasetChangeKind;
  factId: string | null;
  episodeId: string | null;
  memoryId: string | null;
  /** An erasure's: what it removed, the only content its change carries. */
  counts: ErasureCounts | null;
  /** Erased content: the slot stays (its number is spent), nothing of it is served. */
  redacted: boolean;
}

/** A stored document with its kind, as an export reads them. */
export type StoredDocument =
  | { kind: 'entity'; doc: EntityDoc }
  | { kind: 'episode'; doc: EpisodeDoc }
  | { kind: 'fact'; doc: FactDoc }
  | { kind: 'memory'; doc: MemoryDoc };

// ---- `_id`s ----

export function entityDocumentId(tenant: Tenant, name: string): string {
  return documentId('entity', tenant.workspaceId, tenant.dataset, entityKey(name));
}

export function episodeDocumentId(tenant: Tenant, episodeId: string): string {
  return documentId('episode', tenant.workspaceId, tenant.dataset, normalizeUuid(episodeId));
}

export function factDocumentId(tenant: Tenant, factId: string): string {
  return documentId('fact', tenant.workspaceId, tenant.dataset, normalizeUuid(factId));
}

export function memoryDocumentId(tenant: Tenant, memoryId: string): string {
  return documentId('memory', tenant.workspaceId, tenant.dataset, normalizeUuid(memoryId));
}

// ---- Builders: the tenant and the fields a write supplies; the rest is derived here ----

/** What the tenant fixes: the storage `_id` and the tenant fields. */
type Stored = '_id' | 'workspaceId' | 'dataset';

const uuidOrNull = (id: string | null) => (id === null ? null : normalizeUuid(id));

/** The fields every document of a dataset starts with. */
const storedIn = (tenant: Tenant, _id: string) => ({
  _id,
  workspaceId: tenant.workspaceId,
  dataset: tenant.dataset,
});

/**
 * An entity. The name is stored lower-cased (its key); `entityId` defaults to the
 * document's `_id`, so an entity named again in another episode keeps one id.
 */
export function entityDocument(
  tenant: Tenant,
  entity: { name: string; type: EntityType; entityId?: string | null; updatedAt: Date },
): EntityDoc {
  const _id = entityDocumentId(tenant, entity.name);
  return {
    ...storedIn(tenant, _id),
    entityId: entity.entityId ? normalizeUuid(entity.entityId) : _id,
    name: entityKey(entity.name),
    type: entity.type,
    updatedAt: entity.updatedAt,
  };
}

export function episodeDocument(tenant: Tenant, episode: Omit<EpisodeDoc, Stored>): EpisodeDoc {
  const episodeId = normalizeUuid(episode.episodeId);
  return {
    ...storedIn(tenant, episodeDocumentId(tenant, episodeId)),
    episodeId,
    occurredAt: episode.occurredAt,
    source: episode.source,
    content: episode.content,
    recordedAt: episode.recordedAt,
  };
}

/** The fields of a fact a write supplies; `recallTerms` and the keys are derived from them. */
export type FactFields = Omit<
  FactDoc,
  | Stored
  | 'subjectKey'
  | 'objectKey'
  | 'predicateKey'
  | 'recallTerms'
  | 'quoteTerms'
  | 'restorations'
  | EmbeddedField
  | 'correctionOf'
  | 'correctedBy'
> &
  Partial<Pick<FactDoc, 'correctionOf' | 'correctedBy'>>;

/** A fact: the fields as given (callers pass exactly `FactFields`), with what derives. */
export function factDocument(tenant: Tenant, fact: FactFields): FactDoc {
  const factId = normalizeUuid(fact.factId);
  return {
    ...storedIn(tenant, factDocumentId(tenant, factId)),
    ...fact,
    factId,
    episodeId: uuidOrNull(fact.episodeId),
    supersededBy: uuidOrNull(fact.supersededBy),
    replaceExisting: fact.replaceExisting ?? false,
    correctionOf: uuidOrNull(fact.correctionOf ?? null),
    correctedBy: uuidOrNull(fact.correctedBy ?? null),
    subjectKey: entityKey(fact.subject),
    objectKey: entityKey(fact.object),
    predicateKey: predicateKey(fact.predicate),
    recallTerms: factRecallTerms(fact),
    quoteTerms: quoteRecallTerms(fact),
    embedded: false,
  };
}

/** The fields of a memory a write supplies; `recallTerms` is derived from its text. */
export type MemoryFields = Omit<MemoryDoc, Stored | 'recallTerms' | EmbeddedField>;

/** A memory: the fields as given (callers pass exactly `MemoryFields`), ids normalized. */
export function memoryDocument(tenant: Tenant, memory: MemoryFields): MemoryDoc {
  const memoryId = normalizeUuid(memory.memoryId);
  return {
    ...storedIn(tenant, memoryDocumentId(tenant, memoryId)),
    ...memory,
    memoryId,
    sourceId: uuidOrNull(memory.sourceId),
    projectId: uuidOrNull(memory.projectId),
    userId: uuidOrNull(memory.userId),
    supersededBy: uuidOrNull(memory.supersededBy),
    recallTerms: recallTerms(memory.text),
    embedded: false,
  };
}

/**
 * A change to a memory's fields, with what derives from them: `recallTerms` from `text`, and
 * its vector, gone until the new text's is stored.
 */
export function memoryChange(set: Partial<MemoryDoc>): Partial<MemoryDoc> {
  return set.text === undefined
    ? set
    : { ...set, recallTerms: recallTerms(set.text), embedded: false, embedding: null };
}
