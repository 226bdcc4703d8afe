import { setTimeout as sleep } from 'node:timers/promises';
import { derivedUuid, newId, normalizeUuid } from '../domain/ids.js';
import { appendChanges, type NewChange } from './changes.js';
import { claimOnce, insertOnce } from './claims.js';
import type { Collections } from './collections.js';
import { datasetDocumentId } from './datasets.js';
import {
  type MemoryDoc,
  type MemoryFields,
  type MemoryVersionDoc,
  memoryChange,
  memoryDocument,
} from './documents.js';
import { findMemory } from './memories.js';
import { StoreRefusal } from './refusals.js';
import type { Tenant } from './tenant.js';
import { addToVocabulary } from './vocabulary.js';

/**
 * Curating memories on SupaCloud's model, with optimistic concurrency and no
 * transactions. Every change to an existing memory is a new *version*, claimed by
 * inserting `<memory _id>:v<n>` into memoryVersions (docs/TEMPORAL_MODEL.md: "the n-th version of a
 * memory"): of two changes made from the same version, exactly one can insert its claim.
 * The claim carries the fields it sets (and, for a supersede, the successor memory), and
 * applying it writes exactly those values, only onto version n-1, so a retry or the next
 * writer that finds a claim still unapplied after a grace period (its claimer crashed)
 * completes it without harm; within that period it waits for the claimer rather than
 * writing the same version twice (see APPLY_GRACE_MS). All changes to a memory
 * go through this one path, so no two code paths write different fields of one memory at
 * once (FerretDB would lose one of them).
 */

class MemoryNotFoundError extends StoreRefusal {
  override name = 'MemoryNotFoundError';
  readonly code = 'NOT_FOUND';
}

export class MemoryConflictError extends StoreRefusal {
  override name = 'MemoryConflictError';
  readonly code = 'CONFLICT';
}

/** What the store sets on a memory it creates, rather than its caller. */
const STORE_SET_FIELDS = [
  'version',
  'archivedAt',
  'createdAt',
  'updatedAt',
  'lastUsedAt',
  'validUntil',
  'supersededBy',
] as const satisfies (keyof MemoryDoc)[];
type StoreSetField = (typeof STORE_SET_FIELDS)[number];

/**
 * A memory to create: every field of `MemoryFields` but those the store sets, with an
 * optional id (given, a retried create is idempotent) and `validFrom` (default: now).
 */
export type NewMemory = Omit<MemoryFields, StoreSetField | 'memoryId' | 'validFrom'> & {
  memoryId?: string | null;
  validFrom: Date | null;
};

/** A memory as a create (or a supersede's successor) stores it: version 1, never used. */
function buildMemory(tenant: Tenant, memoryId: string, input: NewMemory, now: Date): MemoryDoc {
  return memoryDocument(tenant, {
    ...input,
    memoryId,
    version: 1,
    archivedAt: null,
    createdAt: now,
    updatedAt: now,
    lastUsedAt: null,
    validFrom: input.validFrom ?? now,
    validUntil: null,
    supersededBy: null,
  });
}

/** Not a create's content: the identity, what the store sets, and what derives from it. */
const NOT_CONTENT = new Set<string>([
  ...([
    '_id',
    'workspaceId',
    'dataset',
    'memoryId',
    'validFrom',
    'recallTerms',
  ] satisfies (keyof MemoryDoc)[]),
  ...STORE_SET_FIELDS,
]);

/**
 * The content of a memory, for "is this retry the same create?": every other field,
 * compared as the plain values content fields are.
 */
const sameContent = (a: MemoryDoc, b: MemoryDoc) =>
  (Object.keys(a) as (keyof MemoryDoc)[]).every((k) => NOT_CONTENT.has(k) || a[k] === b[k]);

/**
 * Creates a memory. With a `memoryId`, creating it again with the same content returns
 * the stored memory (a retry); with other content it is a conflict.
 */
export async function createMemory(
  db: Collections,
  tenant: Tenant,
  input: NewMemory,
  now: Date,
): Promise<{ memory: MemoryDoc; created: boolean }> {
  const memoryId = normalizeUuid(input.memoryId ?? newId());
  const doc = buildMemory(tenant, memoryId, input, now);
  await registerDataset(db, tenant, now);
  // Owed to the feed first, so a crash after the insert leaves the change to the repair.
  // A retry's, or a racing creator's, may be there already: whoever gets there pays it.
  await insertOnce(
    db.memoryCreations,
    {
      _id: doc._id,
      workspaceId: tenant.workspaceId,
      dataset: tenant.dataset,
      memoryId,
      pending: true,
      at: now,
    },
    'store:createMemory',
  );
  const created = await claimOnce(db.memories, doc, 'store:createMemory');
  if (!created.won) {
    const existing = created.winner;
    if (!existing)
      throw new MemoryConflictError(
        `Memory ${memoryId} was erased while it was created; try again`,
      );
    // The stored memory's creation is announced either way: a retry completes it.
    await announceCreation(db, tenant, existing);
    if (sameContent(existing, doc)) return { memory: existing, created: false };
    throw new MemoryConflictError(`Memory ${memoryId} already exists with other content`);
  }
  // Its terms, for a question's typos (after the memory: store/vocabulary.ts).
  await addToVocabulary(db, [doc]);
  await announceCreation(db, tenant, doc);
  return { memory: doc, created: true };
}

/** Appends a created memory's change, then clears what was owed for it. */
async function announceCreation(db: Collections, tenant: Tenant, memory: MemoryDoc) {
  await appendChanges(db, tenant, [createdChange(memory)]);
  await db.memoryCreations.deleteOne(
    { _id: memory._id, workspaceId: tenant.workspaceId, dataset: tenant.dataset },
    { comment: 'store:announceCreation' },
  );
}

/**
 * Claims a crash can leave half done are completed by the start-up repair only once they
 * are this old: a creator or writer still at work on another process finishes its own.
 */
const REPAIR_AFTER_MS = 60_000;

/**
 * Pays what memory writes a crash cut short owe the feed (run at start-up): each owed
 * creation whose memory exists is announced, one whose memory never got written is
 * dropped; each version claim not marked applied is applied (a no-op if it was) with its
 * change.
 */
export async function repairMemoryWrites(db: Collections, now: Date): Promise<number> {
  const before = new Date(now.getTime() - REPAIR_AFTER_MS);
  const owed = await db.memoryCreations
    .find({ pending: true, at: { $lt: before } }, { comment: 'store:repairMemoryWrites' })
    .toArray();
  for (const creation of owed) {
    const tenant = { workspaceId: creation.workspaceId, dataset: creation.dataset };
    const memory = await db.memories.findOne(
      { _id: creation._id, ...tenant },
      { comment: 'store:repairMemoryWrites' },
    );
    if (memory) await announceCreation(db, tenant, memory);
    else
      await db.memoryCreations.deleteOne(
        { _id: creation._id, ...tenant },
        { comment: 'store:repairMemoryWrites' },
      );
  }
  const versions = await db.memoryVersions
    .find({ applied: false, at: { $lt: before } }, { comment: 'store:repairMemoryWrites' })
    .toArray();
  for (const claim of versions) await applyMemoryVersion(db, claim);
  return owed.length + versions.length;
}

/** A memory's creation in the feed, keyed by the memory and the instant it was created. */
const createdChange = (memory: MemoryDoc): NewChange => ({
  changeId: `memory-created:${memory.memoryId}@${memory.createdAt.toISOString()}`,
  kind: 'MEMORY_CREATED',
  at: memory.createdAt,
  memoryId: memory.memoryId,
});

/**
 * Records that the dataset exists (as an import does), so `dataset(name:)` finds a dataset
 * whose first document is a memory. An insert, not an upsert: on FerretDB two racing
 * upserts can both insert, an insert of an existing `_id` fails atomically.
 */
async function registerDataset(db: Collections, tenant: Tenant, now: Date): Promise<void> {
  await insertOnce(
    db.datasets,
    {
      _id: datasetDocumentId(tenant.workspaceId, tenant.dataset),
      workspaceId: tenant.workspaceId,
      name: tenant.dataset,
      createdAt: now,
    },
    'store:registerDataset',
  );
}

/** What a change does to the current memory: fields to set, maybe a memory to create. */
export type MemoryChange = (
  current: MemoryDoc,
  version: number,
) => { set: Partial<MemoryDoc>; create?: MemoryDoc | null } | 'unchanged';

/**
 * Lost races retried without expectedVersion. Every lost race means another writer's
 * version landed, so N concurrent writers need up to N attempts; this only bounds a livelock.
 */
const MAX_ATTEMPTS = 50;

/**
 * How long a writer that lost a version claim waits for the winner to apply it before
 * applying it itself (the winner may have crashed after its claim). Applying it while the
 * winner is still at work is not harmless on FerretDB: an update there reads the document
 * and writes it back whole, so a duplicate apply that read version n-1 and wrote late
 * could overwrite version n+1 with version n, losing an update that was acknowledged.
 */
const APPLY_GRACE_MS = 500;

/**
 * Applies a change as the next version. With `expectedVersion`, the memory must be at that
 * version, else CONFLICT and nothing changes; without it, a lost race is retried on the
 * new version (a few times).
 */
export async function changeMemory(
  db: Collections,
  tenant: Tenant,
  memoryId: string,
  expectedVersion: number | null,
  change: MemoryChange,
  now: Date,
): Promise<MemoryDoc> {
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const current = await findMemory(db, tenant, memoryId);
    if (!current) throw new MemoryNotFoundError('Memory not found');
    if (expectedVersion !== null && current.version !== expectedVersion) {
      throw new MemoryConflictError(
        `Memory is at version ${current.version}, not the expected ${expectedVersion}; reload it and try again`,
      );
    }
    const version = current.version + 1;
    const planned = change(current, version);
    if (planned === 'unchanged') return current;
    const set: Partial<MemoryDoc> = { ...memoryChange(planned.set), version, updatedAt: now };
    const claim: MemoryVersionDoc = {
      _id: `${current._id}:v${version}`,
      workspaceId: tenant.workspaceId,
      dataset: tenant.dataset,
      memoryId: current.memoryId,
      version,
      set,
      // Version n-1's values of what this one sets: the claim applies onto n-1 only.
      before: Object.fromEntries(
        Object.keys(set).map((field) => [field, current[field as keyof MemoryDoc]]),
      ) as Partial<MemoryDoc>,
      create: planned.create ?? null,
      at: now,
      applied: false,
    };
    const claimed = await claimOnce(db.memoryVersions, claim, 'store:changeMemory');
    if (!claimed.won) {
      // Someone else made version n: complete it if it is not applied yet, then either
      // report the conflict or retry on top of it.
      if (claimed.winner) await awaitOrApplyMemoryVersion(db, claimed.winner);
      if (expectedVersion !== null) {
        throw new MemoryConflictError(
          `Memory changed concurrently (version ${version} was taken); reload it and try again`,
        );
      }
      continue;
    }
    await applyMemoryVersion(db, claim);
    return { ...current, ...claim.set } as MemoryDoc;
  }
  throw new MemoryConflictError('Memory is changing too quickly; try again');
}

/**
 * Waits (briefly) until the memory carries a version claimed by someone else; completes
 * it if it is still not applied APPLY_GRACE_MS later. (Not measured from the claim's `at`:
 * that is its request's start, which can be long before the claim under contention.)
 */
async function awaitOrApplyMemoryVersion(db: Collections, claim: MemoryVersionDoc): Promise<void> {
  const deadline = performance.now() + APPLY_GRACE_MS;
  for (let delay = 2; ; delay = Math.min(delay * 2, 20)) {
    const doc = await db.memories.findOne(
      { _id: memoryDocIdOf(claim), workspaceId: claim.workspaceId, dataset: claim.dataset },
      { projection: { version: 1 }, comment: 'store:awaitOrApplyMemoryVersion' },
    );
    if (!doc || doc.version >= claim.version) return;
    if (performance.now() >= deadline) break;
    await sleep(delay);
  }
  await applyMemoryVersion(db, claim);
}

const memoryDocIdOf = (claim: MemoryVersionDoc) => claim._id.slice(0, claim._id.lastIndexOf(':v'));

/** Writes a version's values onto version n-1 (and creates its successor first). */
async function applyMemoryVersion(db: Collections, claim: MemoryVersionDoc): Promise<void> {
  if (claim.create) {
    await insertOnce(db.memories, claim.create, 'store:applyMemoryVersion');
    await addToVocabulary(db, [claim.create]);
  }
  await db.memories.updateOne(
    {
      _id: memoryDocIdOf(claim),
      workspaceId: claim.workspaceId,
      dataset: claim.dataset,
      version: claim.version - 1,
    },
    { $set: claim.set },
    { comment: 'store:applyMemoryVersion' },
  );
  // A new text's terms, for a question's typos (store/vocabulary.ts).
  if (claim.set.recallTerms) {
    await addToVocabulary(db, [
      {
        workspaceId: claim.workspaceId,
        dataset: claim.dataset,
        recallTerms: claim.set.recallTerms,
      },
    ]);
  }
  await appendChanges(db, { workspaceId: claim.workspaceId, dataset: claim.dataset }, [
    {
      changeId: `${claim._id}@${claim.at.toISOString()}`,
      kind: 'MEMORY_CHANGED',
      at: claim.at,
      memoryId: claim.memoryId,
    },
    ...(claim.create ? [createdChange(claim.create)] : []),
  ]);
  await db.memoryVersions.updateOne(
    { _id: claim._id, workspaceId: claim.workspaceId, dataset: claim.dataset },
    { $set: { applied: true } },
    { comment: 'store:applyMemoryVersion' },
  );
}

/** The successor's id of a supersede: fixed by the old memory and the version. */
function successorId(tenant: Tenant, memoryId: string, version: number): string {
  return derivedUuid(
    'memory-successor',
    tenant.workspaceId,
    tenant.dataset,
    normalizeUuid(memoryId),
    String(version),
  );
}

/**
 * Supersedes a memory at most once: stamps `validUntil` and `supersededBy` on it and
 * creates its successor (valid from now), in one version claim.
 */
export function supersedeMemory(
  db: Collections,
  tenant: Tenant,
  memoryId: string,
  expectedVersion: number | null,
  input: NewMemory,
  now: Date,
): Promise<MemoryDoc> {
  return changeMemory(
    db,
    tenant,
    memoryId,
    expectedVersion,
    (current, version) => {
      if (
        current.supersededBy !== null ||
        (current.validUntil !== null && current.validUntil <= now)
      ) {
        throw new MemoryConflictError('Memory is already superseded or no longer valid');
      }
      const successor = buildMemory(
        tenant,
        successorId(tenant, current.memoryId, version),
        { ...input, validFrom: now },
        now,
      );
      return { set: { validUntil: now, supersededBy: successor.memoryId }, create: successor };
    },
    now,
  );
}
