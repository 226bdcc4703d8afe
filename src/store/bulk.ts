import type { AnyBulkWriteOperation, Collection, Document } from 'mongodb';
import { MongoBulkWriteError } from 'mongodb';
import { type Collections, UPSERTS_PER_COMMAND } from './database.js';
import { ensureDatasets } from './datasets.js';
import type {
  EntityDoc,
  EpisodeDoc,
  FactDoc,
  InvalidationClaimDoc,
  MemoryDoc,
} from './documents.js';
import { invalidationClaimId } from './facts.js';

export const BATCH_SIZE = 1000;

export interface BulkInput {
  workspaceId: string;
  datasets: Iterable<string>;
  entities: { doc: EntityDoc; hasUpdatedAt: boolean }[];
  episodes: EpisodeDoc[];
  facts: FactDoc[];
  memories: MemoryDoc[];
  now: Date;
}

export interface BulkCounts {
  entities: number;
  episodes: number;
  facts: number;
  memories: number;
}

/**
 * Writes validated documents in unordered batches. Idempotent: documents are keyed by
 * their natural `_id`, so a second import of the same file inserts nothing (the duplicate
 * keys are expected and ignored) and entity upserts only move `updatedAt` forward.
 * An invalidated fact also gets its (applied) invalidation claim, so it can never be
 * invalidated a second time. Returns how many documents were new.
 */
export async function writeBulk(
  c: Collections,
  input: BulkInput,
  onProgress?: (done: number, total: number) => void,
): Promise<BulkCounts> {
  const total =
    input.entities.length + input.episodes.length + input.facts.length + input.memories.length;
  let done = 0;
  const progress = (n: number) => {
    done += n;
    onProgress?.(done, total);
  };
  await ensureDatasets(c, input.workspaceId, input.datasets, input.now);

  // Entities are inserted; the upsert (which keeps the stored entityId, sets the type and
  // moves `updatedAt` forward) goes only to those already stored that it would change.
  // Upserting every entity stores the same documents, but FerretDB 1.x runs a filter other
  // than `_id` alone by reading the whole collection, so each upsert scanned every entity:
  // 10,000 facts with 2,000 entities imported in 210 s, against 9 s this way.
  const stored: { doc: EntityDoc; hasUpdatedAt: boolean }[] = [];
  let entities = await insertNew(
    c.entities,
    input.entities.map((e) => e.doc),
    progress,
    (i) => stored.push(input.entities[i]!),
  );
  // An upsert's filter holds the shard key (a sharded cluster requires it); an insert
  // takes it from there.
  const entityOps: AnyBulkWriteOperation<EntityDoc>[] = (await entitiesToUpdate(c, stored)).map(
    ({ doc, hasUpdatedAt }) => {
      const { updatedAt, type, workspaceId, dataset, ...rest } = doc;
      return {
        updateOne: {
          filter: { _id: doc._id, workspaceId, dataset },
          update: hasUpdatedAt
            ? { $setOnInsert: { ...rest }, $set: { type }, $max: { updatedAt } }
            : { $setOnInsert: { ...rest, updatedAt }, $set: { type } },
          upsert: true,
        },
      };
    },
  );
  entities += await bulkInBatches(
    c.entities,
    entityOps,
    () => {},
    (r) => r.upsertedCount,
    undefined,
    UPSERTS_PER_COMMAND,
  );
  const episodes = await insertNew(c.episodes, input.episodes, progress);
  const facts = await insertNew(c.facts, input.facts, progress);
  const claims: InvalidationClaimDoc[] = input.facts
    .filter((f) => f.invalidAt !== null && f.invalidReason !== null)
    .map((f) => ({
      _id: invalidationClaimId(f._id),
      workspaceId: f.workspaceId,
      dataset: f.dataset,
      factId: f.factId,
      reason: f.invalidReason!,
      invalidAt: f.invalidAt!,
      supersededBy: f.supersededBy,
      applied: true,
    }));
  await insertNew(c.claims, claims, () => {});
  const memories = await insertNew(c.memories, input.memories, progress);
  return { entities, episodes, facts, memories };
}

/**
 * The already-stored entities (their insert hit the `_id`) whose upsert would change
 * something: another type, or a later `updatedAt` (or the document has gone since).
 */
async function entitiesToUpdate(
  c: Collections,
  stored: { doc: EntityDoc; hasUpdatedAt: boolean }[],
): Promise<{ doc: EntityDoc; hasUpdatedAt: boolean }[]> {
  const byTenant = new Map<string, { doc: EntityDoc; hasUpdatedAt: boolean }[]>();
  for (const e of stored) {
    const key = JSON.stringify([e.doc.workspaceId, e.doc.dataset]);
    const group = byTenant.get(key);
    if (group) group.push(e);
    else byTenant.set(key, [e]);
  }
  const changed: { doc: EntityDoc; hasUpdatedAt: boolean }[] = [];
  for (const group of byTenant.values()) {
    const { workspaceId, dataset } = group[0]!.doc;
    for (let i = 0; i < group.length; i += BATCH_SIZE) {
      const batch = group.slice(i, i + BATCH_SIZE);
      const current = new Map(
        (
          await c.entities
            .find(
              { _id: { $in: batch.map((e) => e.doc._id) }, workspaceId, dataset },
              { projection: { type: 1, updatedAt: 1 }, comment: 'store:writeBulk' },
            )
            .batchSize(BATCH_SIZE)
            .toArray()
        ).map((d) => [d._id, d]),
      );
      for (const e of batch) {
        const now = current.get(e.doc._id);
        if (
          !now ||
          now.type !== e.doc.type ||
          (e.hasUpdatedAt && e.doc.updatedAt.getTime() > now.updatedAt.getTime())
        ) {
          changed.push(e);
        }
      }
    }
  }
  return changed;
}

async function insertNew<T extends Document & { _id: string }>(
  collection: Collection<T>,
  docs: T[],
  progress: (n: number) => void,
  onDuplicate?: (index: number) => void,
): Promise<number> {
  const ops = docs.map((document) => ({ insertOne: { document } })) as AnyBulkWriteOperation<T>[];
  return bulkInBatches(collection, ops, progress, (r) => r.insertedCount, onDuplicate);
}

async function bulkInBatches<T extends Document>(
  collection: Collection<T>,
  ops: AnyBulkWriteOperation<T>[],
  progress: (n: number) => void,
  count: (r: { insertedCount: number; upsertedCount: number }) => number,
  /** Told the index (in `ops`) of each operation that found its `_id` already stored. */
  onDuplicate?: (index: number) => void,
  batchSize = BATCH_SIZE,
): Promise<number> {
  let written = 0;
  for (let i = 0; i < ops.length; i += batchSize) {
    const batch = ops.slice(i, i + batchSize);
    try {
      written += count(
        await collection.bulkWrite(batch, { ordered: false, comment: 'store:writeBulk' }),
      );
    } catch (error) {
      // Duplicate keys are the idempotency at work; anything else is a real failure.
      if (!(error instanceof MongoBulkWriteError)) throw error;
      const errors = Array.isArray(error.writeErrors) ? error.writeErrors : [error.writeErrors];
      if (errors.some((e) => e.code !== 11000)) throw error;
      for (const e of errors) onDuplicate?.(i + e.index);
      written += count(error.result);
    }
    progress(batch.length);
  }
  return written;
}

/** Every document of a workspace (or one dataset), in a stable order, for export. */
export async function* exportDocuments(
  c: Collections,
  workspaceId: string,
  dataset?: string | null,
): AsyncGenerator<
  | { kind: 'entity'; doc: EntityDoc }
  | { kind: 'episode'; doc: EpisodeDoc }
  | { kind: 'fact'; doc: FactDoc }
  | { kind: 'memory'; doc: MemoryDoc }
> {
  const filter = dataset != null ? { workspaceId, dataset } : { workspaceId };
  const tag = { comment: 'store:exportDocuments' };
  for await (const doc of c.entities.find(filter, tag).sort({ dataset: 1, name: 1 })) {
    yield { kind: 'entity', doc };
  }
  for await (const doc of c.episodes.find(filter, tag).sort({ dataset: 1, episodeId: 1 })) {
    yield { kind: 'episode', doc };
  }
  for await (const doc of c.facts.find(filter, tag).sort({ dataset: 1, factId: 1 })) {
    yield { kind: 'fact', doc };
  }
  for await (const doc of c.memories.find(filter, tag).sort({ dataset: 1, memoryId: 1 })) {
    yield { kind: 'memory', doc };
  }
}
