import { MongoClient } from 'mongodb';
import { beforeAll, describe, expect, it } from 'vitest';
import type { TemporalSelection } from '../../src/domain/factState.js';
import { collections } from '../../src/store/collections.js';
import type { Database } from '../../src/store/database.js';
import { deleteFact } from '../../src/store/factLifecycle.js';
import { lifecycleRecord } from '../../src/store/factRecords.js';
import { FactNotFoundError, findFact, listFacts } from '../../src/store/facts.js';
import { repairFactHistories } from '../../src/store/materialise.js';
import { workspaceIdFor } from '../../src/store/workspaces.js';
import { importJsonl } from '../../src/transfer/importJsonl.js';
import { openTestDatabase, testServerUri } from '../helpers/database.js';
import { DEMO } from '../helpers/demo.js';

const FACT = DEMO.facts.toyotaInterest;
const line = (factId: string, dataset = 'd1') =>
  JSON.stringify({
    type: 'fact',
    dataset,
    factId,
    subject: 'user',
    predicate: 'likes',
    object: 'tea',
    confidence: 0.9,
    validAt: '2026-01-01',
  });

let database: Database;
const tenant = { workspaceId: workspaceIdFor('w1'), dataset: 'd1' };
const liveNow = (): TemporalSelection => ({
  kind: 'point',
  validAt: new Date(),
  knownAt: new Date(),
});

beforeAll(async () => {
  database = await openTestDatabase();
  const outcome = await importJsonl(database.collections, {
    now: new Date(),
    workspace: 'w1',
    content: [line(FACT), line('11111111-1111-4111-8111-111111111111')].join('\n'),
  });
  expect(outcome.ok).toBe(true);
});

describe('soft delete (claimed by its record)', () => {
  it('of ten racing deletes over separate connections, exactly one succeeds', async () => {
    const clients = await Promise.all(
      Array.from({ length: 10 }, () => new MongoClient(testServerUri()).connect()),
    );
    try {
      const results = await Promise.allSettled(
        clients.map((client) =>
          deleteFact(collections(client.db(database.db.databaseName)), tenant, FACT, new Date()),
        ),
      );
      const won = results.filter((r) => r.status === 'fulfilled');
      expect(won).toHaveLength(1);
      // Every loser is the expected refusal, nothing else.
      for (const lost of results.filter((r) => r.status === 'rejected')) {
        expect(lost.reason).toBeInstanceOf(FactNotFoundError);
        expect(lost.reason.reason).toBe('already_invalidated');
      }
      const winner = won[0]!.value;
      const stored = await findFact(database.collections, tenant, FACT);
      expect(stored?.invalidReason).toBe('deleted');
      expect(stored?.invalidAt?.getTime()).toBe(winner.invalidAt!.getTime());
      const live = await listFacts(
        database.collections,
        tenant,
        { selection: liveNow() },
        { first: 10 },
      );
      expect(live.facts.map((f) => f.factId)).not.toContain(FACT);
    } finally {
      await Promise.all(clients.map((c) => c.close()));
    }
  });

  it('a second delete is not found, and so is an unknown id or another dataset', async () => {
    const refused = (reason: string) =>
      expect.objectContaining({ name: 'FactNotFoundError', reason, message: 'Fact not found' });
    await expect(deleteFact(database.collections, tenant, FACT, new Date())).rejects.toEqual(
      refused('already_invalidated'),
    );
    await expect(
      deleteFact(database.collections, tenant, '22222222-2222-4222-8222-222222222222', new Date()),
    ).rejects.toEqual(refused('not_found'));
    await expect(
      deleteFact(
        database.collections,
        { ...tenant, dataset: 'd2' },
        '11111111-1111-4111-8111-111111111111',
        new Date(),
      ),
    ).rejects.toEqual(refused('not_found'));
    await expect(
      deleteFact(
        database.collections,
        { ...tenant, workspaceId: workspaceIdFor('w2') },
        '11111111-1111-4111-8111-111111111111',
        new Date(),
      ),
    ).rejects.toEqual(refused('not_found'));
  });

  it('a claim whose follow-up was cut short is completed by the repair pass', async () => {
    const id = '11111111-1111-4111-8111-111111111111';
    const fact = (await findFact(database.collections, tenant, id))!;
    const at = new Date('2026-03-03T03:03:03.000Z');
    // The state a crash between the delete's record and its materialisation leaves behind.
    const pair = { subjectKey: fact.subjectKey, predicateKey: fact.predicateKey };
    await database.collections.factRecords.insertOne(
      lifecycleRecord(tenant, pair, 'deleted', id, 0, at),
    );
    expect((await findFact(database.collections, tenant, id))?.invalidAt).toBeNull();
    expect(await repairFactHistories(database.collections)).toBe(1);
    const repaired = await findFact(database.collections, tenant, id);
    expect(repaired?.invalidAt?.toISOString()).toBe(at.toISOString());
    expect(repaired?.invalidReason).toBe('deleted');
    expect(await repairFactHistories(database.collections)).toBe(0);
  });
});
