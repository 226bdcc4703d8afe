import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ensureDatasets } from '../../src/store/datasets.js';
import { recordEpisode } from '../../src/store/recordEpisode.js';
import { workspaceIdFor } from '../../src/store/workspaces.js';
import { openTestDatabase } from '../helpers/database.js';

/**
 * An episode that lists many entities the dataset already has. FerretDB 1.x never answers
 * an update command in which more than about 100 upserts find their document, so the
 * entity upserts go out in small commands; this pins that a second episode naming 300
 * stored entities is recorded (it hung before) and moves their updatedAt.
 */
describe('recordEpisode with many stored entities', () => {
  it('records a second episode that lists 300 entities already stored', async () => {
    const { collections: db } = await openTestDatabase();
    const tenant = { workspaceId: workspaceIdFor('many'), dataset: 'people' };
    const entities = Array.from({ length: 300 }, (_, i) => ({
      name: `Person ${i}`,
      type: 'PERSON' as const,
    }));
    const episode = (occurredAt: string) => ({
      episodeId: randomUUID(),
      occurredAt: new Date(occurredAt),
      source: 'chat',
      content: 'a crowd',
      entities,
      facts: [],
    });
    const first = new Date('2026-01-01T00:00:00Z');
    const second = new Date('2026-02-01T00:00:00Z');
    await recordEpisode(db, tenant, episode('2026-01-01T00:00:00Z'), first);
    const again = await recordEpisode(db, tenant, episode('2026-02-01T00:00:00Z'), second);
    expect(again.outcome).toBe('recorded');
    const stored = await db.entities.find({ workspaceId: tenant.workspaceId }).toArray();
    expect(stored).toHaveLength(300);
    expect(stored.every((e) => e.updatedAt.getTime() === second.getTime())).toBe(true);
  });
});

describe('ensureDatasets with many stored datasets', () => {
  it('records 150 datasets a second time (more than one FerretDB update command answers)', async () => {
    const { collections: db } = await openTestDatabase();
    const workspaceId = workspaceIdFor('many');
    const names = Array.from({ length: 150 }, (_, i) => `dataset_${i}`);
    await ensureDatasets(db, workspaceId, names, new Date('2026-01-01T00:00:00Z'));
    await ensureDatasets(db, workspaceId, names, new Date('2026-02-01T00:00:00Z'));
    const stored = await db.datasets.find({ workspaceId }).toArray();
    expect(stored).toHaveLength(150);
    // The first write's createdAt stays.
    expect(stored.every((d) => d.createdAt.getTime() === Date.UTC(2026, 0, 1))).toBe(true);
  });
});
