import { describe, expect, it } from 'vitest';
import { changeMemory, createMemory } from '../../src/store/memoryWrites.js';
import { openTestDatabase } from '../helpers/database.js';
import { testTenant } from '../helpers/episodeInput.js';
import { memoryInput } from '../helpers/memoryInput.js';

describe("a memory's recall terms follow its text", () => {
  it('on create, and on a change of text (not on other changes)', async () => {
    const { collections: db } = await openTestDatabase();
    const tenant = testTenant('w', 'd');
    const at = new Date('2026-12-01T00:00:00.000Z');
    const memory = await createMemory(db, tenant, memoryInput('Allergic to peanuts'), at);
    const stored = async () => (await db.memories.findOne({ _id: memory.memory._id }))!.recallTerms;
    expect(await stored()).toEqual(['allerg', 'peanut']);
    await changeMemory(
      db,
      tenant,
      memory.memory.memoryId,
      null,
      () => ({ set: { pinned: true } }),
      at,
    );
    expect(await stored()).toEqual(['allerg', 'peanut']);
    await changeMemory(
      db,
      tenant,
      memory.memory.memoryId,
      null,
      () => ({ set: { text: 'Loves driving convertibles' } }),
      at,
    );
    expect(await stored()).toEqual(['love', 'drive', 'convert']);
  });
});
