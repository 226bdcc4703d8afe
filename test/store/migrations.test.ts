import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { loadDemoDataset } from '../../src/demo/seed.js';
import { openStore } from '../../src/openStore.js';
import type { Collections } from '../../src/store/database.js';
import { createMemory } from '../../src/store/memoryWrites.js';
import { migrateStore } from '../../src/store/migrations.js';
import { openTestDatabase, testServerUri } from '../helpers/database.js';
import { testTenant } from '../helpers/episodeInput.js';
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
  };
}

async function previousVersionStore() {
  const { collections: db } = await openTestDatabase();
  await loadDemoDataset(db, 'one', AT);
  await loadDemoDataset(db, 'two', AT);
  await createMemory(db, testTenant('two', 'notes'), memoryInput('Prefers peanuts to almonds'), AT);
  const current = await everything(db);
  await db.facts.updateMany({}, { $unset: { recallTerms: '' } });
  await db.memories.updateMany({}, { $unset: { recallTerms: '' } });
  return { c: db, current };
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
    ]);
    expect(await everything(db)).toEqual(current);
    expect(await db.migrations.find({}).toArray()).toEqual([
      { _id: '2026-12-01-recall-terms', appliedAt: AT },
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
      ]);
    } finally {
      await store.close();
    }
  });

  it('six replicas opening one store at once all start, and leave it as one opening does', async () => {
    const { c: db, current } = await previousVersionStore();
    const config = loadConfig({ MONGODB_URI: testServerUri(), MONGODB_DB: db.facts.dbName });
    const opened = await Promise.allSettled(
      Array.from({ length: 6 }, () => openStore(config, 'server')),
    );
    for (const run of opened) if (run.status === 'fulfilled') await run.value.close();
    expect(
      opened.map((run) => (run.status === 'rejected' ? String(run.reason) : 'started')),
    ).toEqual(opened.map(() => 'started'));
    expect(await everything(db)).toEqual(current);
    expect(await db.migrations.countDocuments({})).toBe(1);
  });

  it('a fresh store records the migration with nothing to change', async () => {
    const { collections: db } = await openTestDatabase();
    expect(await migrateStore(db, AT)).toEqual([
      expect.objectContaining({ id: '2026-12-01-recall-terms', changed: 0 }),
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
      expect(await db.migrations.countDocuments({})).toBe(1);
    }
  });
});
