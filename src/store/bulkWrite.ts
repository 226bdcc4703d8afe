import type { AnyBulkWriteOperation, Collection, Document, MongoBulkWriteError } from 'mongodb';
import { systemClock } from '../clock.js';
import { factText } from '../domain/recallTerms.js';
import { bulkWriteFailure, duplicateKeyIndexes } from './bulkErrors.js';
import type { Collections } from './collections.js';
import { UPSERTS_PER_COMMAND } from './database.js';
import { ensureDatasets } from './datasets.js';
import type { EntityDoc, EpisodeDoc, FactDoc, FactRecordDoc, MemoryDoc } from './documents.js';
import { embeddedWith, type StatementVectors } from './embeddings.js';
import { distinctPairs, type Pair, pairKey, recordsFromFactDocs } from './factRecords.js';
import { materialisePairs, storedAsStated } from './materialise.js';
import type { Tenant } from './tenant.js';
import { addToVocabulary } from './vocabulary.js';

export const BATCH_SIZE = 1000;

export interface BulkInput {
  workspaceId: string;
  datasets: Iterable<string>;
  entities: { doc: EntityDoc; hasUpdatedAt: boolean }[];
  episodes: EpisodeDoc[];
  facts: FactDoc[];
  memories: MemoryDoc[];
  now: Date;
  /** The vectors of texts (recall by meaning on): facts and memories are stored with them. */
  embed?: (texts: readonly string[]) => Promise<StatementVectors>;
}

export interface BulkCounts {
  entities: number;
  episodes: number;
  facts: number;
  memories: number;
}

/** What a bulk write stored: how many documents were new, and how its facts came out. */
export interface BulkWritten {
  counts: BulkCounts;
  /**
   * Fact lines stored otherwise than they state (their derived fields disagreed with the
   * history their records derive, or they were a version the derivation names otherwise):
   * docs/IMPORT_EXPORT.md, "Facts are imported as records".
   */
  rederived: number;
}

/**
 * A bulk write that failed part-way (the database went away, say). `written` counts, per
 * kind, the records confirmed stored (new, or found already there) before the failure;
 * the others were not written, or not confirmed (part of the batch in flight may be
 * stored). Writing the same input again completes it: every write is idempotent.
 */
export class BulkWriteFailedError extends Error {
  override name = 'BulkWriteFailedError';
  constructor(
    readonly written: BulkCounts,
    readonly total: BulkCounts,
    cause: unknown,
  ) {
    super(`writing to the database failed: ${cause instanceof Error ? cause.message : cause}`, {
      cause,
    });
  }
}

/** Pairs materialised at a time by an import, between two reports of progress. */
const PAIRS_PER_STEP = 200;

/** The pairs of the records, per tenant. */
function pairsByTenant(records: readonly FactRecordDoc[]): { tenant: Tenant; pairs: Pair[] }[] {
  const byTenant = new Map<string, { tenant: Tenant; pairs: Pair[] }>();
  for (const r of records) {
    const key = JSON.stringify([r.workspaceId, r.dataset]);
    let entry = byTenant.get(key);
    if (!entry) {
      entry = { tenant: { workspaceId: r.workspaceId, dataset: r.dataset }, pairs: [] };
      byTenant.set(key, entry);
    }
    entry.pairs.push(r);
  }
  return [...byTenant.values()].map(({ tenant, pairs }) => ({
    tenant,
    pairs: distinctPairs(pairs),
  }));
}

/**
 * Writes validated documents in unordered batches. Idempotent: documents are keyed by
 * their natural `_id`, so a second import of the same file inserts nothing (the duplicate
 * keys are expected and ignored) and entity upserts only move `updatedAt` forward.
 * An invalidated fact also gets its (applied) invalidation claim, so it can never be
 * invalidated a second time. Returns how many documents were new.
 *
 * Any error but "already stored" stops it with a `BulkWriteFailedError` telling what was
 * confirmed written: an entity once its insert (or its upsert, when it was stored already
 * and the upsert changes it) is done, an invalidated fact once its claim is written too,
 * any other record once its batch is.
 */
export async function writeBulk(
  db: Collections,
  input: BulkInput,
  onProgress?: (done: number, total: number) => void,
): Promise<BulkWritten> {
  const totals: BulkCounts = {
    entities: input.entities.length,
    episodes: input.episodes.length,
    facts: input.facts.length,
    memories: input.memories.length,
  };
  const written: BulkCounts = { entities: 0, episodes: 0, facts: 0, memories: 0 };
  try {
    return await writeBulkBatches(db, input, written, onProgress);
  } catch (error) {
    throw new BulkWriteFailedError({ ...written }, totals, bulkWriteFailure(error));
  }
}

async function writeBulkBatches(
  db: Collections,
  input: BulkInput,
  written: BulkCounts,
  onProgress?: (done: number, total: number) => void,
): Promise<BulkWritten> {
  const total =
    input.entities.length + input.episodes.length + input.facts.length + input.memories.length;
  let done = 0;
  const progress = (n: number) => {
    done += n;
    onProgress?.(done, total);
  };
  await ensureDatasets(db, input.workspaceId, input.datasets, input.now);

  // Entities are inserted; the upsert (which keeps the stored entityId, sets the type and
  // moves `updatedAt` forward) goes only to those already stored that it would change.
  // Upserting every entity stores the same documents, but FerretDB 1.x runs a filter other
  // than `_id` alone by reading the whole collection, so each upsert scanned every entity:
  // 10,000 facts with 2,000 entities imported in 210 s, against 9 s this way.
  const stored: { doc: EntityDoc; hasUpdatedAt: boolean }[] = [];
  let entities = await insertNew(
    db.entities,
    input.entities.map((e) => e.doc),
    (_start, size, duplicates) => {
      for (const i of duplicates) stored.push(input.entities[i]!);
      written.entities += size - duplicates.length;
      progress(size);
    },
  );
  const changed = await entitiesToUpdate(db, stored);
  written.entities += stored.length - changed.length;
  // An upsert's filter holds the shard key (a sharded cluster requires it); an insert
  // takes it from there.
  const entityOps: AnyBulkWriteOperation<EntityDoc>[] = changed.map(({ doc, hasUpdatedAt }) => {
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
  });
  entities += await bulkInBatches(
    db.entities,
    entityOps,
    (r) => r.upsertedCount,
    (_start, size) => {
      written.entities += size;
    },
    UPSERTS_PER_COMMAND,
  );
  const episodes = await insertNew(db.episodes, input.episodes, (_start, size) => {
    written.episodes += size;
    progress(size);
  });
  // Facts: the records their documents imply (store/factRecords.ts), then each pair's
  // history derived from them (store/materialise.ts), as recording them would; the fact
  // documents stored are the derivation's, whatever derived fields the input carried.
  // A fact counts as written once its pair is materialised.
  const records = recordsFromFactDocs(input.facts);
  await insertNew(db.factRecords, records, () => {});
  // Their terms, for a question's typos (store/vocabulary.ts).
  await addToVocabulary(db, input.facts);
  let facts = 0;
  let rederived = 0;
  for (const { tenant, pairs } of pairsByTenant(records)) {
    for (let i = 0; i < pairs.length; i += PAIRS_PER_STEP) {
      const step = pairs.slice(i, i + PAIRS_PER_STEP);
      const inStep = new Set(step.map(pairKey));
      const lines = input.facts.filter(
        (f) =>
          f.workspaceId === tenant.workspaceId &&
          f.dataset === tenant.dataset &&
          inStep.has(pairKey(f)),
      );
      const vectors = input.embed ? await input.embed(lines.map(factText)) : undefined;
      const { before, after } = await materialisePairs(db, tenant, step, {
        feed: false,
        redact: false,
        ...(vectors ? { vectors } : {}),
      });
      const had = new Set(before.map((d) => d._id));
      facts += after.filter((d) => !had.has(d._id)).length;
      const stored = new Map(
        (
          await db.facts
            .find(
              {
                _id: { $in: lines.map((f) => f._id) },
                workspaceId: tenant.workspaceId,
                dataset: tenant.dataset,
              },
              { projection: { recallTerms: 0, quoteTerms: 0 }, comment: 'store:writeBulk' },
            )
            .toArray()
        ).map((d) => [d._id, d]),
      );
      rederived += lines.filter((f) => !storedAsStated(f, stored.get(f._id))).length;
      const count = lines.length;
      written.facts += count;
      if (count > 0) progress(count);
    }
  }
  const memories = await insertNew(db.memories, await withVectors(input), (_start, size) => {
    written.memories += size;
    progress(size);
  });
  await addToVocabulary(db, input.memories);
  return { counts: { entities, episodes, facts, memories }, rederived };
}

/** The memories to insert, each with its text's vector when the import embeds. */
async function withVectors(input: BulkInput): Promise<MemoryDoc[]> {
  if (!input.embed) return input.memories;
  const out: MemoryDoc[] = [];
  for (let i = 0; i < input.memories.length; i += BATCH_SIZE) {
    const batch = input.memories.slice(i, i + BATCH_SIZE);
    const vectors = await input.embed(batch.map((m) => m.text));
    const at = systemClock();
    for (const m of batch) out.push({ ...m, ...embeddedWith(vectors.get(m.text)!, at) });
  }
  return out;
}

/**
 * The already-stored entities (their insert hit the `_id`) whose upsert would change
 * something: another type, or a later `updatedAt` (or the document has gone since).
 */
async function entitiesToUpdate(
  db: Collections,
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
          await db.entities
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

/**
 * Told, after each batch is written, where it starts (in the operations), how many
 * operations it has, and which of them (as indexes in the operations) found their `_id`
 * already stored.
 */
type OnBatch = (start: number, size: number, duplicates: number[]) => void;

async function insertNew<T extends Document & { _id: string }>(
  collection: Collection<T>,
  docs: T[],
  onBatch: OnBatch,
): Promise<number> {
  const ops = docs.map((document) => ({ insertOne: { document } })) as AnyBulkWriteOperation<T>[];
  return bulkInBatches(collection, ops, (r) => r.insertedCount, onBatch);
}

async function bulkInBatches<T extends Document>(
  collection: Collection<T>,
  ops: AnyBulkWriteOperation<T>[],
  count: (r: { insertedCount: number; upsertedCount: number }) => number,
  onBatch: OnBatch,
  batchSize = BATCH_SIZE,
): Promise<number> {
  let written = 0;
  for (let i = 0; i < ops.length; i += batchSize) {
    const batch = ops.slice(i, i + batchSize);
    let duplicates: number[] = [];
    try {
      written += count(
        await collection.bulkWrite(batch, { ordered: false, comment: 'store:writeBulk' }),
      );
    } catch (error) {
      // Duplicate keys are the idempotency at work; anything else is a real failure.
      duplicates = duplicateKeyIndexes(error).map((index) => i + index);
      written += count((error as MongoBulkWriteError).result);
    }
    onBatch(i, batch.length, duplicates);
  }
  return written;
}
