import type { AnyBulkWriteOperation, Collection, Document } from 'mongodb';
import { MongoBulkWriteError } from 'mongodb';
import type { Collections } from './database.js';
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

  // An upsert's filter holds the shard key (a sharded cluster requires it); an insert
  // takes it from there.
  const entityOps: AnyBulkWriteOperation<EntityDoc>[] = input.entities.map(
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
  const entities = await bulkInBatches(c.entities, entityOps, progress, (r) => r.upsertedCount);
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

async function insertNew<T extends Document & { _id: string }>(
  collection: Collection<T>,
  docs: T[],
  progress: (n: number) => void,
): Promise<number> {
  const ops = docs.map((document) => ({ insertOne: { document } })) as AnyBulkWriteOperation<T>[];
  return bulkInBatches(collection, ops, progress, (r) => r.insertedCount);
}

async function bulkInBatches<T extends Document>(
  collection: Collection<T>,
  ops: AnyBulkWriteOperation<T>[],
  progress: (n: number) => void,
  count: (r: { insertedCount: number; upsertedCount: number }) => number,
): Promise<number> {
  let written = 0;
  for (let i = 0; i < ops.length; i += BATCH_SIZE) {
    const batch = ops.slice(i, i + BATCH_SIZE);
    try {
      written += count(
        await collection.bulkWrite(batch, { ordered: false, comment: 'store:writeBulk' }),
      );
    } catch (error) {
      // Duplicate keys are the idempotency at work; anything else is a real failure.
      if (!(error instanceof MongoBulkWriteError)) throw error;
      const errors = Array.isArray(error.writeErrors) ? error.writeErrors : [error.writeErrors];
      if (errors.some((e) => e.code !== 11000)) throw error;
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
