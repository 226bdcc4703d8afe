import type { Scope } from '../domain/apiKey.js';
import type { EntityType } from '../domain/names.js';

/**
 * The stored documents. Every document carries `workspaceId`, and every document that
 * belongs to a dataset carries `dataset`; `_id` is derived from the natural key (see
 * domain/ids.ts). Absent values are stored as `null`, never left out, so a filter on
 * `null` means one thing.
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

export type InvalidReason = 'superseded' | 'deleted';

export interface FactDoc {
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
  /** Derived: the words of subject + predicate + object, for `q` (domain/searchTerms.ts). */
  terms: string[];
  /** Derived: lower-cased subject, object and predicate, for entity and history lookups. */
  subjectKey: string;
  objectKey: string;
  predicateKey: string;
  /**
   * How many times a soft delete (or a supersession, by erasing the episode that caused
   * it) was undone. Part of the invalidation claim's key, so a restored fact can be
   * invalidated again; absent means 0.
   */
  restorations?: number;
}

/**
 * A fact as the reads that answer clients return it: without what only filters and
 * writes use (the derived `terms` and `predicateKey`, the storage `_id`, the restoration
 * generation), which stay in the database rather than being decoded for every fact of
 * every page.
 */
export type FactView = Omit<FactDoc, '_id' | 'terms' | 'predicateKey' | 'restorations'>;

export interface MemoryDoc {
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
}

/**
 * A claim: a document whose `_id` is the natural key of a write that must happen at most
 * once (docs/TEMPORAL_MODEL.md, "Writes without transactions"). Inserting it is the atomic step;
 * the values it carries are what the follow-up writes set, so a retry or a repair pass
 * completes them the same way.
 */
export interface InvalidationClaimDoc {
  /** `invalidate:<fact _id>`. */
  _id: string;
  workspaceId: string;
  dataset: string;
  factId: string;
  reason: InvalidReason;
  invalidAt: Date;
  supersededBy: string | null;
  /** Set once the fact carries the claim's values. */
  applied: boolean;
}

/**
 * The claim of recording one episode (`_id` = the episode's document id). It fixes the
 * transaction time and carries the validated input, so a retry, a concurrent duplicate or
 * the start-up repair pass completes the same work (store/recordEpisode.ts).
 */
export interface EpisodeRecordDoc {
  _id: string;
  workspaceId: string;
  dataset: string;
  episodeId: string;
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
  /** A memory this version creates (the successor of a supersede). */
  create: MemoryDoc | null;
  at: Date;
}

/** The claim of undoing one invalidation (`restore:<fact _id>:<restorations>`). */
export interface RestorationDoc {
  _id: string;
  workspaceId: string;
  dataset: string;
  factId: string;
  at: Date;
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
