import type { AnyBulkWriteOperation, Collection, Filter, UpdateFilter } from 'mongodb';
import { normalizeUuid } from '../domain/ids.js';
import { factRecallTerms, quoteRecallTerms, recallTerms } from '../domain/recallTerms.js';
import { isOnlyDuplicateKeys } from './bulkErrors.js';
import { appendChanges, redactRepeatedChanges } from './changes.js';
import { type Collections, INDEXES } from './collections.js';
import { createIndex, isDuplicateKey, isRepeatedKey } from './database.js';
import {
  correctedFactDocument,
  episodeDocumentId,
  type FactDoc,
  type MemoryDoc,
} from './documents.js';
import { correctionChange } from './invalidations.js';
import { episodeFactId, episodeRecordInput } from './recordEpisode.js';
import { settlePairs } from './supersession.js';
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
    id: '2026-12-05-corrected-versions',
    describe: 'corrected versions of the facts a replacement superseded',
    run: recordCorrectedVersions,
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
 * The corrected version of each fact an earlier version superseded by the
 * `replaceExisting` rule although it began before its successor (docs/TEMPORAL_MODEL.md,
 * "One value per subject and predicate"): exactly what the supersession records today,
 * recorded at the instant of the supersession, with its FACT_CORRECTED change; then the
 * rule over each subject and predicate that got one, at the instants the facts arrived
 * (a fact that arrived later, between the version and its successor, ends the version in
 * turn, as it would have). A supersession is the rule's when its successor replaces and
 * did not list it in `supersedes` (read from the successor's episode record; an imported
 * fact has none, and its successor's flag decides). Idempotent: a version's id is derived
 * from its fact and successor, so a second run, or another process at once, inserts
 * nothing new, and the rule's supersessions go through their claims.
 */
async function recordCorrectedVersions(db: Collections): Promise<number> {
  const tag = { comment: 'store:recordCorrectedVersions' };
  let recorded = 0;
  for await (const tenant of tenantsOf(db, 'facts', tag)) {
    const { workspaceId, dataset } = tenant;
    // The dataset's facts in the tenant index's order, once, at start-up (rather than an
    // index on invalidReason that only this would use): the superseded whole, and of every
    // fact what a successor is judged by.
    const superseded: FactDoc[] = [];
    const successors = new Map<string, Successor>();
    for await (const fact of db.facts.find({ workspaceId, dataset }, tag)) {
      if (fact.invalidReason === 'superseded') superseded.push(fact);
      const { factId, episodeId, validAt, replaceExisting } = fact;
      successors.set(factId, { factId, episodeId, validAt, replaceExisting });
    }
    if (superseded.length === 0) continue;
    const listed = await listedTargets(
      db,
      tenant,
      superseded.map((f) => (f.supersededBy ? successors.get(f.supersededBy) : undefined)),
    );
    const versions = superseded.flatMap((fact) => {
      const by = fact.supersededBy ? successors.get(fact.supersededBy) : undefined;
      const replaced =
        by?.replaceExisting === true &&
        !listed.has(JSON.stringify([by.factId, fact.factId])) &&
        fact.validAt.getTime() < by.validAt.getTime() &&
        (fact.validUntil === null || fact.validUntil.getTime() > by.validAt.getTime());
      return replaced
        ? [
            correctedFactDocument(tenant, fact, {
              by: by.factId,
              until: by.validAt,
              at: fact.invalidAt!,
            }),
          ]
        : [];
    });
    if (versions.length === 0) continue;
    const there = new Set(
      (
        await db.facts
          .find(
            { _id: { $in: versions.map((v) => v._id) }, workspaceId, dataset },
            {
              projection: { _id: 1 },
              ...tag,
            },
          )
          .toArray()
      ).map((d) => d._id),
    );
    const missing = versions.filter((v) => !there.has(v._id));
    if (missing.length > 0) {
      try {
        await db.facts.insertMany(missing, { ordered: false, ...tag });
      } catch (error) {
        // Another process opening the store recorded them first: the same documents.
        if (!isOnlyDuplicateKeys(error)) throw error;
      }
    }
    recorded += missing.length;
    await appendChanges(db, tenant, versions.map(correctionChange));
    // The epoch: each supersession the rule now makes happens when its later fact arrived.
    await settlePairs(db, tenant, versions, new Date(0));
  }
  return recorded;
}

/** What the migration judges a superseding fact by. */
type Successor = Pick<FactDoc, 'factId' | 'episodeId' | 'validAt' | 'replaceExisting'>;

/** Which facts each of `facts` listed in `supersedes`, as `[lister, listed]` keys. */
async function listedTargets(
  db: Collections,
  tenant: Tenant,
  facts: readonly (Successor | undefined)[],
): Promise<Set<string>> {
  const episodes = [...new Set(facts.flatMap((f) => (f?.episodeId ? [f.episodeId] : [])))];
  const records = await db.episodeRecords
    .find(
      {
        _id: { $in: episodes.map((id) => episodeDocumentId(tenant, id)) },
        workspaceId: tenant.workspaceId,
        dataset: tenant.dataset,
      },
      { comment: 'store:recordCorrectedVersions' },
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
