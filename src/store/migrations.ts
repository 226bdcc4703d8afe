import type { AnyBulkWriteOperation, Collection, Filter, UpdateFilter } from 'mongodb';
import { normalizeUuid } from '../domain/ids.js';
import { factRecallTerms, quoteRecallTerms, recallTerms } from '../domain/recallTerms.js';
import { isOnlyDuplicateKeys } from './bulkErrors.js';
import { redactRepeatedChanges } from './changes.js';
import { type Collections, INDEXES } from './collections.js';
import { createIndex, isDuplicateKey, isRepeatedKey } from './database.js';
import { episodeDocumentId, type FactDoc, type MemoryDoc } from './documents.js';
import { distinctPairs, pairKey, recordsFromFactDocs, recordsOfPairs } from './factRecords.js';
import { materialisePairs } from './materialise.js';
import { episodeFactId, episodeRecordInput } from './recordEpisode.js';
import type { Tenant } from './tenant.js';
import { addToVocabulary } from './vocabulary.js';

/**
 * Versioned migrations of stored documents, run when the store is opened (the server's
 * start-up and every CLI command, `npm run import` included). Each has an id; once it has
 * run to the end, a document `{ _id: <id>, appliedAt }` in `migrations` records it and it
 * is never run again. Each is idempotent (it only fills what is missing, with the values
 * the document builders of store/documents.ts would give), so a run cut short, or two
 * processes opening the store at once, simply do it again. An import needs none of them:
 * it writes its documents through the same builders.
 */
const MIGRATIONS: { id: string; describe: string; run: (db: Collections) => Promise<number> }[] = [
  {
    id: '2026-12-01-recall-terms',
    describe: 'recall terms on facts and memories',
    run: addRecallTerms,
  },
  {
    id: '2026-12-04-changes-once',
    describe: 'each change once in the change feeds',
    run: changesOnce,
  },
  {
    id: '2026-12-06-quote-terms',
    describe: "recall terms of facts' source quotes",
    run: addQuoteTerms,
  },
  {
    id: '2026-12-07-vocabulary',
    describe: "the datasets' vocabularies, for the typos of a question",
    run: fillVocabulary,
  },
  {
    id: '2026-12-08-derived-histories',
    describe: "facts' histories derived from their records",
    run: deriveHistories,
  },
  {
    id: '2026-12-09-embeddings',
    describe: 'facts and memories marked for their vectors (recall by meaning)',
    run: markForEmbedding,
  },
];

const UPDATES_PER_COMMAND = 500;

/** Runs the migrations this store has not recorded; returns what each changed. */
export async function migrateStore(
  db: Collections,
  now: Date,
): Promise<{ id: string; describe: string; changed: number }[]> {
  const done = new Set(
    (
      await db.migrations
        .find({ _id: { $in: MIGRATIONS.map((m) => m.id) } }, { comment: 'store:migrateStore' })
        .toArray()
    ).map((m) => m._id),
  );
  const applied = [];
  for (const migration of MIGRATIONS) {
    if (done.has(migration.id)) continue;
    const changed = await migration.run(db);
    await db.migrations
      .updateOne(
        { _id: migration.id },
        { $setOnInsert: { appliedAt: now } },
        { upsert: true, comment: 'store:migrateStore' },
      )
      .catch((error: unknown) => {
        // Racing upserts (not atomic on FerretDB, and possible on MongoDB too): another
        // process opening the store recorded it first, which is all this one meant to do.
        if (!isDuplicateKey(error)) throw error;
      });
    applied.push({ id: migration.id, describe: migration.describe, changed });
  }
  return applied;
}

/** `recallTerms` on every fact and memory written before it existed, tenant by tenant. */
async function addRecallTerms(db: Collections): Promise<number> {
  const tag = { comment: 'store:addRecallTerms' };
  return (
    (await fillDerivedField<FactDoc>(
      db,
      'facts',
      'recallTerms',
      { subject: 1, predicate: 1, object: 1 },
      factRecallTerms,
      tag,
    )) +
    (await fillDerivedField<MemoryDoc>(
      db,
      'memories',
      'recallTerms',
      { text: 1 },
      (m) => recallTerms(m.text),
      tag,
    ))
  );
}

/** `quoteTerms` on every fact written before it existed, tenant by tenant. */
async function addQuoteTerms(db: Collections): Promise<number> {
  const tag = { comment: 'store:addQuoteTerms' };
  return fillDerivedField<FactDoc>(
    db,
    'facts',
    'quoteTerms',
    { sourceQuote: 1 },
    quoteRecallTerms,
    tag,
  );
}

/** Every dataset's vocabulary, from its facts' and memories' terms (store/vocabulary.ts). */
async function fillVocabulary(db: Collections): Promise<number> {
  const tag = { comment: 'store:fillVocabulary' };
  let added = 0;
  for await (const { workspaceId, dataset } of tenantsOf(db, 'facts', tag)) {
    const facts = db.facts.find(
      { workspaceId, dataset },
      { projection: { _id: 0, workspaceId: 1, dataset: 1, recallTerms: 1, quoteTerms: 1 }, ...tag },
    );
    for await (const batch of batches(facts)) added += await addToVocabulary(db, batch);
  }
  for await (const { workspaceId, dataset } of tenantsOf(db, 'memories', tag)) {
    const memories = db.memories.find(
      { workspaceId, dataset },
      { projection: { _id: 0, workspaceId: 1, dataset: 1, recallTerms: 1 }, ...tag },
    );
    for await (const batch of batches(memories)) added += await addToVocabulary(db, batch);
  }
  return added;
}

/**
 * A field derived from a document's own values (as store/documents.ts derives it), set on
 * every document of the collection written before the field existed, tenant by tenant, in
 * bulk writes of UPDATES_PER_COMMAND; how many documents it changed.
 */
async function fillDerivedField<T extends { _id: string; workspaceId: string; dataset: string }>(
  db: Collections,
  name: 'facts' | 'memories',
  field: keyof T & string,
  reads: Record<string, 1>,
  derive: (doc: T) => unknown,
  tag: { comment: string },
): Promise<number> {
  const collection = db[name] as unknown as Collection<T>;
  let changed = 0;
  for await (const { workspaceId, dataset } of tenantsOf(db, name, tag)) {
    const missing = collection.find(
      { workspaceId, dataset, [field]: { $exists: false } } as Filter<T>,
      { projection: { _id: 1, ...reads }, ...tag },
    );
    for await (const batch of batches(missing)) {
      const ops = batch.map((doc) => ({
        updateOne: {
          filter: { _id: doc._id, workspaceId, dataset } as Filter<T>,
          update: { $set: { [field]: derive(doc as T) } } as UpdateFilter<T>,
        },
      })) as AnyBulkWriteOperation<T>[];
      changed += (await collection.bulkWrite(ops, { ordered: false, ...tag })).modifiedCount;
    }
  }
  return changed;
}

/**
 * Changes an earlier version appended twice (two writers at once) redacted, all but the
 * first copy, feed by feed; then the index that makes the database refuse a repeat
 * (`tenant_change_once`). A writer of an earlier version still running (a rolling
 * upgrade) may append a repeat meanwhile, so the index is tried again after another pass.
 */
async function changesOnce(db: Collections): Promise<number> {
  const tag = { comment: 'store:changesOnce' };
  const index = INDEXES.changes.find((i) => i.name === 'tenant_change_once')!;
  let redacted = 0;
  for (let attempt = 1; ; attempt++) {
    for await (const tenant of tenantsOf(db, 'changes', tag)) {
      redacted += await redactRepeatedChanges(db, tenant);
    }
    try {
      await createIndex(db, 'changes', index);
      return redacted;
    } catch (error) {
      if (!isRepeatedKey(error) || attempt >= 5) throw error;
    }
  }
}

/**
 * Each fact's history derived from its records (docs/TEMPORAL_MODEL.md, "The history is
 * derived"): the records each pair's stored documents imply (store/factRecords.ts
 * `recordsFromFactDocs`; a supersession is an explicit `supersedes` where the successor's
 * episode record lists it), then the pair materialised from them. A pair that has records
 * already is left alone, so a second run, or another process at once, changes nothing.
 * Returns the documents it wrote.
 */
async function deriveHistories(db: Collections): Promise<number> {
  const tag = { comment: 'store:deriveHistories' };
  let written = 0;
  for await (const tenant of tenantsOf(db, 'facts', tag)) {
    const { workspaceId, dataset } = tenant;
    // The dataset's facts pair by pair (the subject/predicate index's order), a few
    // thousand at a time, cut between pairs.
    let docs: FactDoc[] = [];
    const flush = async () => {
      const pairs = distinctPairs(docs);
      const recorded = new Set((await recordsOfPairs(db, tenant, pairs)).map(pairKey));
      const unrecorded = docs.filter((d) => !recorded.has(pairKey(d)));
      docs = [];
      if (unrecorded.length === 0) return;
      const listed = await listedTargets(
        db,
        tenant,
        unrecorded.map((d) => d.episodeId),
      );
      const records = recordsFromFactDocs(unrecorded, listed);
      try {
        await db.factRecords.insertMany(records, { ordered: false, ...tag });
      } catch (error) {
        // Another process opening the store wrote them first: the same documents.
        if (!isOnlyDuplicateKeys(error)) throw error;
      }
      written += (
        await materialisePairs(db, tenant, distinctPairs(unrecorded), {
          feed: false,
          redact: false,
        })
      ).written;
    };
    const cursor = db.facts
      .find({ workspaceId, dataset }, tag)
      .sort({ subjectKey: 1, predicateKey: 1, validAt: -1, factId: -1 });
    let last: string | null = null;
    for await (const doc of cursor) {
      const key = pairKey(doc);
      if (docs.length >= FACTS_PER_FLUSH && key !== last) await flush();
      docs.push(doc);
      last = key;
    }
    await flush();
  }
  return written;
}

const FACTS_PER_FLUSH = 2000;

/** Which facts the given episodes' facts listed in `supersedes`, as `[lister, listed]` keys. */
async function listedTargets(
  db: Collections,
  tenant: Tenant,
  episodeIds: readonly (string | null)[],
): Promise<Set<string>> {
  const episodes = [...new Set(episodeIds.flatMap((id) => (id ? [id] : [])))];
  const records = await db.episodeRecords
    .find(
      {
        _id: { $in: episodes.map((id) => episodeDocumentId(tenant, id)) },
        workspaceId: tenant.workspaceId,
        dataset: tenant.dataset,
      },
      { comment: 'store:deriveHistories' },
    )
    .toArray();
  const listed = new Set<string>();
  for (const record of records) {
    episodeRecordInput(record).facts.forEach((f, i) => {
      const lister = episodeFactId(tenant, record.episodeId, i);
      for (const target of f.supersedes)
        listed.add(JSON.stringify([lister, normalizeUuid(target)]));
    });
  }
  return listed;
}

/** Every tenant with documents in `collection`, workspace by workspace in name order. */
async function* tenantsOf(
  db: Collections,
  collection: 'facts' | 'memories' | 'changes',
  tag: { comment: string },
): AsyncGenerator<Tenant> {
  const workspaces = await db.workspaces.find({}, tag).sort({ name: 1 }).toArray();
  for (const { _id: workspaceId } of workspaces) {
    for (const dataset of await db[collection].distinct('dataset', { workspaceId }, tag)) {
      yield { workspaceId, dataset };
    }
  }
}

/** A cursor's documents, a command's worth of updates at a time. */
async function* batches<T>(cursor: AsyncIterable<T>): AsyncGenerator<T[]> {
  let batch: T[] = [];
  for await (const doc of cursor) {
    batch.push(doc);
    if (batch.length === UPDATES_PER_COMMAND) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}

/**
 * Marks every fact and memory written before vectors existed as not yet embedded; the
 * start-up's `embedPending` (store/embeddings.ts) then computes their vectors, round by
 * round, so a start cut short carries on where it stopped.
 */
async function markForEmbedding(db: Collections): Promise<number> {
  const tag = { comment: 'store:markForEmbedding' };
  const unembedded = () => false;
  return (
    (await fillDerivedField<FactDoc>(db, 'facts', 'embedded', {}, unembedded, tag)) +
    (await fillDerivedField<MemoryDoc>(db, 'memories', 'embedded', {}, unembedded, tag))
  );
}
