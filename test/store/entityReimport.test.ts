import { describe, expect, it } from 'vitest';
import { importJsonl } from '../../src/transfer/importJsonl.js';
import { openTestDatabase } from '../helpers/database.js';

/**
 * writeBulk inserts entities and upserts only the stored ones a re-import changes. These
 * pin the result to what an upsert of every entity gave: the type set, `updatedAt` moved
 * forward only, `entityId` kept. 300 entities: more than FerretDB 1.x answers in one
 * update command of stored documents (about 100), which used to hang the re-import.
 */

const N = 300;
const entityLines = (fields: (i: number) => Record<string, unknown>) =>
  Array.from({ length: N }, (_, i) =>
    JSON.stringify({
      type: 'entity',
      dataset: 'people',
      name: `Person ${i}`,
      entityType: 'PERSON',
      updatedAt: '2025-06-01T00:00:00.000Z',
      ...fields(i),
    }),
  ).join('\n');

describe('re-importing stored entities', () => {
  it('the same file again writes nothing and changes nothing', async () => {
    const { collections: db } = await openTestDatabase();
    const content = entityLines(() => ({}));
    const first = await importJsonl(db, { now: new Date(), workspace: 'w', content });
    expect(first.ok && first.counts.entities).toBe(N);
    const before = await db.entities.find({}).sort({ _id: 1 }).toArray();
    const again = await importJsonl(db, { now: new Date(), workspace: 'w', content });
    expect(again.ok && again.counts).toEqual({ entities: 0, episodes: 0, facts: 0, memories: 0 });
    expect(await db.entities.find({}).sort({ _id: 1 }).toArray()).toEqual(before);
  });

  it('sets the type, moves updatedAt only forward, keeps entityId, and adds the new ones', async () => {
    const { collections: db } = await openTestDatabase();
    await importJsonl(db, { now: new Date(), workspace: 'w', content: entityLines(() => ({})) });
    const before = new Map(
      (await db.entities.find({}).toArray()).map((d) => [d.name, { ...d }] as const),
    );
    const changed = entityLines(
      (i) =>
        [
          { entityType: 'ORG' }, // another type
          { updatedAt: '2026-01-01T00:00:00.000Z' }, // later: moves forward
          { updatedAt: '2024-01-01T00:00:00.000Z', entityType: 'PLACE' }, // earlier: kept
          { updatedAt: undefined }, // none: kept
          { entityId: '00000000-0000-4000-8000-000000000001' }, // another entityId: kept
        ][i % 5]!,
    );
    const added = JSON.stringify({
      type: 'entity',
      dataset: 'people',
      name: 'Newcomer',
      entityType: 'TOPIC',
    });
    const now = new Date('2026-03-01T00:00:00.000Z');
    const outcome = await importJsonl(db, {
      workspace: 'w',
      content: `${changed}\n${added}`,
      now,
    });
    expect(outcome.ok && outcome.counts.entities).toBe(1);

    const after = new Map((await db.entities.find({}).toArray()).map((d) => [d.name, d] as const));
    expect(after.size).toBe(N + 1);
    for (let i = 0; i < N; i++) {
      const was = before.get(`person ${i}`)!;
      const is = after.get(`person ${i}`)!;
      const expected = {
        ...was,
        type: (['ORG', 'PERSON', 'PLACE', 'PERSON', 'PERSON'] as const)[i % 5],
        updatedAt: i % 5 === 1 ? new Date('2026-01-01T00:00:00.000Z') : was.updatedAt,
      };
      expect(is, `person ${i}`).toEqual(expected);
    }
    expect(after.get('newcomer')).toMatchObject({ type: 'TOPIC', updatedAt: now });
  });
});
