import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_DATASET, DEMO_WORKSPACE, ensureDevelopmentData } from '../../src/demo/seed.js';
import type { Database } from '../../src/store/database.js';
import { authenticateApiKey, workspaceIdFor } from '../../src/store/workspaces.js';
import { everyDocument, openTestDatabase } from '../helpers/database.js';

let database: Database;
let dataDir: string;

beforeAll(async () => {
  database = await openTestDatabase();
  dataDir = mkdtempSync(join(tmpdir(), 'demo-data-test-'));
});

afterAll(() => {
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

const snapshot = () => everyDocument(database.db);

describe('ensureDevelopmentData', () => {
  let key: string;

  it('on an empty store creates the workspace, an all-scope key and the demo dataset', async () => {
    const db = database.collections;
    const keyFile = join(dataDir, 'development-key.txt');
    // A stale, world-readable key file from earlier is replaced and locked down.
    writeFileSync(keyFile, 'stale\n', { mode: 0o644 });

    const returned = await ensureDevelopmentData(db, dataDir, new Date());
    expect(returned).toMatch(/^mk_[0-9a-f]{24}_[A-Za-z0-9_-]{43}$/);
    key = returned!;

    const workspaceId = workspaceIdFor(DEMO_WORKSPACE);
    expect(DEMO_WORKSPACE).toBe('development');
    expect(await db.workspaces.find({}).toArray()).toEqual([
      { _id: workspaceId, name: 'development', createdAt: expect.any(Date) },
    ]);
    const auth = await authenticateApiKey(db, key);
    expect(auth).toMatchObject({ workspaceId, workspace: 'development' });
    expect([...auth!.scopes].sort()).toEqual(['admin', 'read', 'write']);
    expect(await db.apiKeys.countDocuments({})).toBe(1);

    expect(DEMO_DATASET).toBe('user_42');
    const tenant = { workspaceId, dataset: 'user_42' };
    expect(await db.facts.countDocuments(tenant)).toBe(8);
    expect(await db.entities.countDocuments(tenant)).toBe(5);
    expect(await db.episodes.countDocuments(tenant)).toBe(3);
    expect(await db.memories.countDocuments(tenant)).toBe(4);
    expect(await db.datasets.find({}).toArray()).toMatchObject([{ workspaceId, name: 'user_42' }]);
    // Nothing outside the demo dataset.
    expect(await db.facts.countDocuments({})).toBe(8);
    expect(await db.memories.countDocuments({})).toBe(4);
    // The history the demo promises: superseded, soft-deleted, expired and future facts.
    const facts = await db.facts.find(tenant).toArray();
    expect(facts.filter((f) => f.invalidReason === 'superseded')).toHaveLength(1);
    expect(facts.filter((f) => f.invalidReason === 'deleted')).toHaveLength(1);
    expect(facts.filter((f) => f.validUntil !== null && !f.correctionOf)).toHaveLength(1);
    // The superseded fact's corrected version, recorded with its supersession, ending where
    // its successor begins.
    const [superseded] = facts.filter((f) => f.invalidReason === 'superseded');
    const successor = facts.find((f) => f.factId === superseded!.supersededBy)!;
    expect(facts.filter((f) => f.correctionOf)).toEqual([
      expect.objectContaining({
        correctionOf: superseded!.factId,
        correctedBy: successor.factId,
        validAt: superseded!.validAt,
        validUntil: successor.validAt,
        recordedAt: superseded!.invalidAt,
        invalidAt: null,
      }),
    ]);
    expect(facts.filter((f) => f.validAt > new Date('2026-12-31T00:00:00Z'))).toHaveLength(1);
    // One story: each episode was recorded when the facts it produced were, whatever day
    // the demo is loaded (the episode page, the timeline and "what changed" agree).
    const episodes = await db.episodes.find(tenant).toArray();
    for (const episode of episodes) {
      const produced = facts.filter((f) => f.episodeId === episode.episodeId && !f.correctionOf);
      expect(produced.length).toBeGreaterThan(0);
      for (const f of produced) expect(f.recordedAt).toEqual(episode.recordedAt);
      expect(episode.recordedAt.getTime()).toBeGreaterThanOrEqual(episode.occurredAt.getTime());
    }
    const memories = await db.memories.find(tenant).toArray();
    expect(memories.filter((m) => m.archivedAt !== null)).toHaveLength(1);
    expect(memories.filter((m) => m.supersededBy !== null)).toHaveLength(1);

    expect(await readFile(keyFile, 'utf8')).toBe(`${key}\n`);
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
  });

  it('a second call returns the same key and creates nothing', async () => {
    const before = await snapshot();
    expect(await ensureDevelopmentData(database.collections, dataDir, new Date())).toBe(key);
    expect(await snapshot()).toEqual(before);
    expect(statSync(join(dataDir, 'development-key.txt')).mode & 0o777).toBe(0o600);
  });

  it('on a store that already holds data, without a key file, returns null and creates nothing', async () => {
    const otherDir = mkdtempSync(join(tmpdir(), 'demo-data-test-'));
    try {
      const before = await snapshot();
      expect(await ensureDevelopmentData(database.collections, otherDir, new Date())).toBeNull();
      expect(await snapshot()).toEqual(before);
    } finally {
      rmSync(otherDir, { recursive: true, force: true });
    }
  });
});
