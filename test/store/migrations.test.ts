import { describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { loadDemoDataset } from '../../src/demo/seed.js';
import { openStore } from '../../src/openStore.js';
import { changesAfter, countChanges, lastChangeSeq } from '../../src/store/changes.js';
import type { Collections } from '../../src/store/collections.js';
import { deleteFact, restoreFact } from '../../src/store/factLifecycle.js';
import { listFacts } from '../../src/store/facts.js';
import { createMemory } from '../../src/store/memoryWrites.js';
import { migrateStore } from '../../src/store/migrations.js';
import { type FactInput, recordEpisode } from '../../src/store/recordEpisode.js';
import type { Tenant } from '../../src/store/tenant.js';
import { createApiKey } from '../../src/store/workspaces.js';
import { openTestDatabase, testServerUri } from '../helpers/database.js';
import { episodeInput, factInput, testTenant } from '../helpers/episodeInput.js';
import { memoryInput } from '../helpers/memoryInput.js';

/**
 * The store's migrations on a store written by the previous version: documents without
 * the fields added since (written here by today's code, then stripped of them, which is
 * exactly what the previous version stored). A migration must give every document what
 * today's builders give it, touch nothing else, record itself, and change nothing when
 * run again.
 */

const AT = new Date('2026-12-01T00:00:00.000Z');

async function everything(db: Collections) {
  return {
    facts: await db.facts.find({}).sort({ _id: 1 }).toArray(),
    memories: await db.memories.find({}).sort({ _id: 1 }).toArray(),
    vocabulary: await db.vocabulary.find({}).sort({ _id: 1 }).toArray(),
  };
}

async function previousVersionStore() {
  const { collections: db } = await openTestDatabase();
  await loadDemoDataset(db, 'one', AT);
  await loadDemoDataset(db, 'two', AT);
  await createMemory(db, testTenant('two', 'notes'), memoryInput('Prefers peanuts to almonds'), AT);
  const current = await everything(db);
  await db.facts.updateMany({}, { $unset: { recallTerms: '', quoteTerms: '', embedded: '' } });
  await db.memories.updateMany({}, { $unset: { recallTerms: '', embedded: '' } });
  await db.vocabulary.deleteMany({});
  return { c: db, current };
}

/** Six gateway processes open the store at once (closed again once started): each must start. */
async function sixReplicasOpen(db: Collections) {
  // Without the embedding model: what the replicas' openings leave is the migrations'.
  const config = loadConfig({
    MONGODB_URI: testServerUri(),
    MONGODB_DB: db.facts.dbName,
    EMBEDDINGS: 'off',
  });
  const opened = await Promise.allSettled(
    Array.from({ length: 6 }, () => openStore(config, 'server')),
  );
  for (const run of opened) if (run.status === 'fulfilled') await run.value.close();
  expect(opened.map((run) => (run.status === 'rejected' ? String(run.reason) : 'started'))).toEqual(
    opened.map(() => 'started'),
  );
}

describe('migrating a store written by the previous version', () => {
  it('adds recall terms to every fact and memory, exactly as the builders do, once', async () => {
    const { c: db, current } = await previousVersionStore();
    expect(current.facts.length).toBeGreaterThan(0);
    expect(current.memories.length).toBeGreaterThan(0);
    expect(current.memories.at(-1)?.recallTerms).toBeDefined();
    expect(await db.facts.countDocuments({ recallTerms: { $exists: true } })).toBe(0);

    const applied = await migrateStore(db, AT);
    expect(applied).toEqual([
      {
        id: '2026-12-01-recall-terms',
        describe: 'recall terms on facts and memories',
        changed: current.facts.length + current.memories.length,
      },
      {
        id: '2026-12-04-changes-once',
        describe: 'each change once in the change feeds',
        changed: 0,
      },
      {
        id: '2026-12-06-quote-terms',
        describe: "recall terms of facts' source quotes",
        changed: current.facts.length,
      },
      {
        id: '2026-12-07-vocabulary',
        describe: "the datasets' vocabularies, for the typos of a question",
        changed: current.vocabulary.length,
      },
      {
        id: '2026-12-08-derived-histories',
        describe: "facts' histories derived from their records",
        changed: 0,
      },
      {
        id: '2026-12-09-embeddings',
        describe: 'facts and memories marked for their vectors (recall by meaning)',
        changed: current.facts.length + current.memories.length,
      },
    ]);
    expect(current.vocabulary.length).toBeGreaterThan(10);
    expect(await everything(db)).toEqual(current);
    expect(await db.migrations.find({}).sort({ _id: 1 }).toArray()).toEqual([
      { _id: '2026-12-01-recall-terms', appliedAt: AT },
      { _id: '2026-12-04-changes-once', appliedAt: AT },
      { _id: '2026-12-06-quote-terms', appliedAt: AT },
      { _id: '2026-12-07-vocabulary', appliedAt: AT },
      { _id: '2026-12-08-derived-histories', appliedAt: AT },
      { _id: '2026-12-09-embeddings', appliedAt: AT },
    ]);

    // Recorded: not run again, and nothing changes.
    expect(await migrateStore(db, new Date(AT.getTime() + 1000))).toEqual([]);
    expect(await everything(db)).toEqual(current);
  });

  it('a run cut short is completed by the next: only what is still missing is written', async () => {
    const { c: db, current } = await previousVersionStore();
    // The first few facts were done before the crash; the record was never written.
    const done = current.facts.slice(0, 3);
    for (const f of done) {
      await db.facts.updateOne({ _id: f._id }, { $set: { recallTerms: f.recallTerms } });
    }
    const [applied] = await migrateStore(db, AT);
    expect(applied?.changed).toBe(current.facts.length - done.length + current.memories.length);
    expect(await everything(db)).toEqual(current);
  });

  it('opening the store (the server, and every CLI command, import included) runs it', async () => {
    const { c: db, current } = await previousVersionStore();
    const logged: string[] = [];
    const store = await openStore(
      loadConfig({ MONGODB_URI: testServerUri(), MONGODB_DB: db.facts.dbName }),
      'cli',
      (line) => logged.push(line),
    );
    try {
      expect(await everything(db)).toEqual(current);
      expect(logged).toEqual([
        `Store: MongoDB (MONGODB_URI), database "${db.facts.dbName}".`,
        `Migrated the store: recall terms on facts and memories (${current.facts.length + current.memories.length} documents).`,
        `Migrated the store: recall terms of facts' source quotes (${current.facts.length} documents).`,
        `Migrated the store: the datasets' vocabularies, for the typos of a question (${current.vocabulary.length} documents).`,
        `Migrated the store: facts and memories marked for their vectors (recall by meaning) (${current.facts.length + current.memories.length} documents).`,
      ]);
    } finally {
      await store.close();
    }
  });

  it('six replicas opening one store at once all start, and leave it as one opening does', async () => {
    const { c: db, current } = await previousVersionStore();
    await sixReplicasOpen(db);
    expect(await everything(db)).toEqual(current);
    expect(await db.migrations.countDocuments({})).toBe(6);
  });

  it('a fresh store records the migrations with nothing to change', async () => {
    const { collections: db } = await openTestDatabase();
    expect(await migrateStore(db, AT)).toEqual([
      expect.objectContaining({ id: '2026-12-01-recall-terms', changed: 0 }),
      expect.objectContaining({ id: '2026-12-04-changes-once', changed: 0 }),
      expect.objectContaining({ id: '2026-12-06-quote-terms', changed: 0 }),
      expect.objectContaining({ id: '2026-12-07-vocabulary', changed: 0 }),
      expect.objectContaining({ id: '2026-12-08-derived-histories', changed: 0 }),
      expect.objectContaining({ id: '2026-12-09-embeddings', changed: 0 }),
    ]);
    expect(await migrateStore(db, AT)).toEqual([]);
  });

  it('processes opening a fresh store at once all start, and the migration is recorded once', async () => {
    const { collections: db } = await openTestDatabase();
    // On FerretDB an upsert is not atomic: racing ones may meet a duplicate key, which
    // means another process recorded the migration (the gateway beside a CLI command).
    for (let round = 0; round < 5; round++) {
      await db.migrations.deleteMany({});
      const runs = await Promise.allSettled(
        Array.from({ length: 6 }, (_, i) => migrateStore(db, new Date(AT.getTime() + i))),
      );
      expect(runs.map((r) => r.status)).toEqual(runs.map(() => 'fulfilled'));
      expect(await db.migrations.countDocuments({})).toBe(6);
    }
  });
});

describe('a change feed an earlier version wrote with repeats', () => {
  /** A store as the previous version left it: no unique index, some changes twice. */
  async function storeWithRepeats() {
    const { collections: db } = await openTestDatabase();
    // The workspace registered, as every workspace with data is (its first key made it).
    await createApiKey(db, 'one', ['read'], AT);
    const tenant = testTenant('one', 'repeats');
    await recordEpisode(
      db,
      tenant,
      episodeInput([factInput('user', 'likes', 'tea'), factInput('user', 'has', 'a cat')]),
      AT,
    );
    await db.changes.dropIndex('tenant_change_once');
    await db.migrations.insertOne({ _id: '2026-12-01-recall-terms', appliedAt: AT });
    const first = await db.changes.find({}).sort({ seq: 1 }).toArray();
    // Two writers appended the episode's changes at once: each again, at later numbers.
    const repeated = first.map((c, i) => ({
      ...c,
      _id: c._id.replace(/\d+$/, String(first.length + i + 1)),
      seq: first.length + i + 1,
    }));
    await db.changes.insertMany(repeated);
    return { db, tenant, first, repeated };
  }

  it('keeps the first copy of each change, redacts the others in place, then refuses repeats', async () => {
    const { db, tenant, first, repeated } = await storeWithRepeats();
    expect(await migrateStore(db, AT)).toEqual([
      {
        id: '2026-12-04-changes-once',
        describe: 'each change once in the change feeds',
        changed: repeated.length,
      },
      expect.objectContaining({ id: '2026-12-06-quote-terms', changed: 0 }),
      expect.objectContaining({ id: '2026-12-07-vocabulary', changed: 0 }),
      expect.objectContaining({ id: '2026-12-08-derived-histories', changed: 0 }),
      expect.objectContaining({ id: '2026-12-09-embeddings', changed: 0 }),
    ]);
    const served = await changesAfter(db, tenant, 0, 100);
    expect(served.map((c) => c.changeId)).toEqual(first.map((c) => c.changeId));
    // The repeats' numbers stay spent: a reader past them misses nothing.
    expect(await lastChangeSeq(db, tenant)).toBe(first.length + repeated.length);
    expect(await countChanges(db, tenant)).toBe(first.length);
    // From now on the database refuses a second copy.
    await expect(db.changes.insertOne({ ...first[0]!, _id: 'another', seq: 999 })).rejects.toThrow(
      /duplicate key|E11000/i,
    );
    expect(await migrateStore(db, AT)).toEqual([]);
  });

  it('six replicas opening it at once all start, and leave each change once', async () => {
    const { db, tenant, first } = await storeWithRepeats();
    await sixReplicasOpen(db);
    expect((await changesAfter(db, tenant, 0, 100)).map((c) => c.changeId)).toEqual(
      first.map((c) => c.changeId),
    );
    expect(await db.migrations.countDocuments({})).toBe(6);
  });
});

describe('facts an earlier version stored without the records their history derives from', () => {
  const day = (iso: string) => new Date(`${iso}T00:00:00.000Z`);
  const T1 = new Date('2026-09-01T00:00:00.000Z');
  const T2 = new Date('2026-09-02T00:00:00.000Z');
  const T3 = new Date('2026-09-03T00:00:00.000Z');
  const T4 = new Date('2026-09-04T00:00:00.000Z');
  const replacing = (
    predicate: string,
    object: string,
    validAt: string,
    supersedes: string[] = [],
  ) =>
    factInput('user', predicate, object, {
      validAt: day(validAt),
      replaceExisting: true,
      supersedes,
    });

  /**
   * The Honda (July) replaced by the Toyota (mid-August), then a VW (August 1st) arriving
   * late; Berlin replaced by Paris, which lists it (said wrong: no corrected history); a
   * bicycle deleted, restored and deleted again. Recorded by today's writes; a store of
   * the previous version holds the same fact documents and no records.
   */
  async function scenario(db: Collections, workspace: string) {
    await createApiKey(db, workspace, ['read'], AT);
    const tenant = testTenant(workspace, 'cars');
    const record = (facts: FactInput[], at: Date) =>
      recordEpisode(db, tenant, episodeInput(facts), at);
    const berlin = await record([replacing('lives in', 'berlin', '2026-01-01')], T1);
    await record([replacing('drives', 'a honda', '2026-07-01')], T1);
    const bike = await record([factInput('user', 'rides', 'a bicycle')], T1);
    await record(
      [
        replacing('drives', 'a toyota', '2026-08-16'),
        replacing('lives in', 'paris', '2026-03-01', [berlin.facts[0]!.factId]),
      ],
      T2,
    );
    await record([replacing('drives', 'a vw', '2026-08-01')], T3);
    const bikeId = bike.facts[0]!.factId;
    await deleteFact(db, tenant, bikeId, T2);
    await restoreFact(db, tenant, bikeId, T3);
    await deleteFact(db, tenant, bikeId, T4);
    return tenant;
  }

  /** What is true at `validAt` as known at `knownAt`, by object and valid time. */
  async function truth(
    db: Collections,
    tenant: Tenant,
    validAt: string,
    knownAt: Date,
    predicate = 'drives',
  ) {
    const page = await listFacts(
      db,
      tenant,
      {
        selection: { kind: 'point', validAt: day(validAt), knownAt },
        subjectPredicate: { subject: 'user', predicate },
      },
      { first: 100 },
    );
    return page.facts
      .map(
        (f) =>
          `${f.object} ${f.validAt.toISOString().slice(0, 10)}..${f.validUntil?.toISOString().slice(0, 10) ?? ''}`,
      )
      .sort();
  }

  async function previousVersionStore() {
    const { collections: db } = await openTestDatabase();
    const tenant = await scenario(db, 'one');
    const expected = {
      facts: await db.facts
        .find({ ...tenant })
        .sort({ _id: 1 })
        .toArray(),
      // The same records, marked untold: the feed told their changes when they were made.
      records: (
        await db.factRecords
          .find({ ...tenant })
          .sort({ _id: 1 })
          .toArray()
      ).map((r) => ({ ...r, untold: true })),
    };
    await db.factRecords.deleteMany({});
    await db.migrations.insertMany([
      { _id: '2026-12-01-recall-terms', appliedAt: AT },
      { _id: '2026-12-04-changes-once', appliedAt: AT },
      { _id: '2026-12-06-quote-terms', appliedAt: AT },
      { _id: '2026-12-07-vocabulary', appliedAt: AT },
    ]);
    return { db, tenant, expected };
  }

  const stored = async (db: Collections, tenant: Tenant) => ({
    facts: await db.facts
      .find({ ...tenant })
      .sort({ _id: 1 })
      .toArray(),
    records: await db.factRecords
      .find({ ...tenant })
      .sort({ _id: 1 })
      .toArray(),
  });

  it('writes the records the documents imply, and the history derived from them is the one stored, once', async () => {
    const { db, tenant, expected } = await previousVersionStore();
    expect(await migrateStore(db, AT)).toEqual([
      {
        id: '2026-12-08-derived-histories',
        describe: "facts' histories derived from their records",
        changed: 0,
      },
      {
        id: '2026-12-09-embeddings',
        describe: 'facts and memories marked for their vectors (recall by meaning)',
        changed: 0,
      },
    ]);
    expect(await stored(db, tenant)).toEqual(expected);
    // As known now: the Honda until the VW began, the VW until the Toyota; Berlin, said
    // wrong, nowhere; the bicycle deleted.
    expect(await truth(db, tenant, '2026-07-15', T4)).toEqual(['a honda 2026-07-01..2026-08-01']);
    expect(await truth(db, tenant, '2026-08-05', T4)).toEqual(['a vw 2026-08-01..2026-08-16']);
    expect(await truth(db, tenant, '2026-09-15', T4)).toEqual(['a toyota 2026-08-16..']);
    expect(await truth(db, tenant, '2026-02-15', T4, 'lives in')).toEqual([]);
    expect(await truth(db, tenant, '2026-11-15', T4, 'rides')).toEqual([]);
    expect(await truth(db, tenant, '2026-11-15', T3, 'rides')).toEqual(['a bicycle 2026-11-01..']);
    // As known before the VW arrived: the Honda until the Toyota; before the Toyota: open.
    expect(await truth(db, tenant, '2026-08-05', T2)).toEqual(['a honda 2026-07-01..2026-08-16']);
    expect(await truth(db, tenant, '2026-09-15', T1)).toEqual(['a honda 2026-07-01..']);
    expect(await migrateStore(db, AT)).toEqual([]);
  });

  it('a run cut short is completed by the next', async () => {
    const { db, tenant, expected } = await previousVersionStore();
    const spy = vi
      .spyOn(db.factRecords, 'insertMany')
      .mockRejectedValueOnce(
        Object.assign(new Error('socket closed'), { name: 'MongoNetworkError' }),
      );
    try {
      await expect(migrateStore(db, AT)).rejects.toThrow('socket closed');
    } finally {
      spy.mockRestore();
    }
    expect(await db.migrations.countDocuments({ _id: '2026-12-08-derived-histories' })).toBe(0);
    await migrateStore(db, AT);
    expect(await stored(db, tenant)).toEqual(expected);
  });

  it('six replicas opening it at once all start, and leave it as one opening does', async () => {
    const { db, tenant, expected } = await previousVersionStore();
    await sixReplicasOpen(db);
    expect(await stored(db, tenant)).toEqual(expected);
  });
});
