import { MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it, type MockInstance, vi } from 'vitest';
import { prng } from '../../bench/generate.js';
import { loadDemoDataset } from '../../src/demo/seed.js';
import { type Collections, collections } from '../../src/store/collections.js';
import type { Database } from '../../src/store/database.js';
import { type FactDoc, factDocumentId, factRecordId } from '../../src/store/documents.js';
import { listFacts } from '../../src/store/facts.js';
import {
  type EpisodeInput,
  episodeFactId,
  recordEpisode,
  repairEpisodeRecords,
} from '../../src/store/recordEpisode.js';
import type { Tenant } from '../../src/store/tenant.js';
import { everyDocument, openTestDatabase, testServerUri } from '../helpers/database.js';
import { DEMO } from '../helpers/demo.js';
import { episodeInput, factInput, testTenant } from '../helpers/episodeInput.js';
import {
  believedIdsAt,
  expectHistoryKept,
  expectOwnInstants,
  writtenDocuments,
} from '../helpers/history.js';

/**
 * recordEpisode at the store: races over separate connections (the way several gateway
 * replicas share one database) and crash recovery, with a fixed clock so that the state a
 * crashed-then-retried call leaves can be compared with a clean run's, document by document.
 */

const DATASET = 'user_42';

const DEMO_LOADED_AT = new Date('2026-09-01T00:00:00.000Z');
const T = new Date('2026-11-20T17:00:00.000Z');
const T2 = new Date('2026-11-20T17:05:00.000Z');

let database: Database;
let db: Collections;
let clients: MongoClient[];

beforeAll(async () => {
  database = await openTestDatabase();
  db = database.collections;
  clients = await Promise.all(
    Array.from({ length: 4 }, () => new MongoClient(testServerUri()).connect()),
  );
});

afterAll(async () => {
  await Promise.all(clients.map((client) => client.close()));
});

/** The store over client i's own connection pool. */
const over = (i: number): Collections => collections(clients[i]!.db(database.db.databaseName));

const fact = factInput;
const episode = episodeInput;

const snapshot = () => everyDocument(database.db);

/**
 * What a reader relies on at every moment, whatever crashed: a fact's `supersededBy` names
 * a fact that exists, a fact's episode exists, and a superseded fact is stamped whole.
 */
async function expectReaderInvariant(settled = true): Promise<void> {
  const facts = await db.facts.find({}).toArray();
  const episodes = await db.episodes.find({}).toArray();
  const key = (d: { workspaceId: string; dataset: string }, id: string) =>
    JSON.stringify([d.workspaceId, d.dataset, id]);
  const factKeys = new Set(facts.map((f) => key(f, f.factId)));
  const episodeKeys = new Set(episodes.map((e) => key(e, e.episodeId)));
  // A write cut short may have closed a fact before storing the one that ends it (what
  // stops being believed is written first: docs/TEMPORAL_MODEL.md); once completed, every
  // fact a document names exists.
  if (settled) {
    expect(facts.filter((f) => f.supersededBy && !factKeys.has(key(f, f.supersededBy)))).toEqual(
      [],
    );
  }
  expect(facts.filter((f) => f.episodeId && !episodeKeys.has(key(f, f.episodeId)))).toEqual([]);
  expect(
    facts.filter(
      (f) =>
        (f.supersededBy !== null) !== (f.invalidReason === 'superseded') ||
        (f.invalidReason !== null) !== (f.invalidAt !== null),
    ),
  ).toEqual([]);
  // Never one fact twice: at every instant a document begins or ends, each fact is believed
  // through one document at most.
  const instants = new Set(
    facts.flatMap((f) => [f.recordedAt.getTime(), f.invalidAt?.getTime() ?? 0]),
  );
  for (const k of instants) {
    const believed = facts.filter(
      (f) => f.recordedAt.getTime() <= k && (f.invalidAt === null || f.invalidAt.getTime() > k),
    );
    const roots = believed.map((f) => key(f, f.correctionOf ?? f.factId));
    expect(roots.length, `one document a fact at ${new Date(k).toISOString()}`).toBe(
      new Set(roots).size,
    );
  }
}

describe('the same episode recorded concurrently over separate connections', () => {
  it('is stored once, and every caller gets it (five rounds of four callers)', async () => {
    const tenant = testTenant('duplicates', 'd');
    const base = await recordEpisode(
      db,
      tenant,
      episode(Array.from({ length: 5 }, (_, r) => fact('user', 'likes', `thing ${r}`))),
      T,
    );
    for (let round = 0; round < 5; round++) {
      const target = base.facts[round]!.factId;
      const input = episode(
        [
          fact('user', 'likes', `other thing ${round}`, {
            supersedes: [target],
            objectIsEntity: true,
          }),
          fact('user', 'owns', `thing ${round}`),
        ],
        { entities: [{ name: `Other Thing ${round}`, type: 'THING' }] },
      );
      const results = await Promise.all(
        clients.map((_, i) => recordEpisode(over(i), tenant, input, new Date(T2.getTime() + i))),
      );
      // One claimed it; the others finished it with it, or found it done.
      expect(results.filter((r) => r.outcome === 'recorded')).toHaveLength(1);
      for (const r of results)
        expect(['recorded', 'completed', 'alreadyRecorded']).toContain(r.outcome);
      const winner = results[0]!;
      const ids = input.facts.map((_, i) => episodeFactId(tenant, input.episodeId, i));
      for (const r of results) {
        // Every caller gets the same stored episode and facts, each stamped by the attempt
        // whose insert stored it.
        expect(r.facts.map((f) => f.factId)).toEqual(ids);
        expect(r.episode).toEqual(winner.episode);
        expect(r.facts).toEqual(winner.facts);
        expect(r.superseded.map((f) => f.factId)).toEqual([target]);
      }
      const filter = { ...tenant, episodeId: input.episodeId };
      expect(await db.episodeRecords.countDocuments(filter)).toBe(1);
      expect(await db.episodes.countDocuments(filter)).toBe(1);
      expect(await db.facts.countDocuments(filter)).toBe(2);
      expect(await db.entities.countDocuments({ ...tenant, name: `other thing ${round}` })).toBe(1);
      expect(
        await db.factRecords.countDocuments({ ...tenant, factId: target, kind: 'saidWrong' }),
      ).toBe(1);
      const superseded = (await db.facts.findOne({ _id: factDocumentId(tenant, target) }))!;
      expect(superseded).toMatchObject({ invalidReason: 'superseded', supersededBy: ids[0] });
      // Superseded no earlier than its successor was recorded.
      expect(superseded.invalidAt!.getTime()).toBeGreaterThanOrEqual(
        winner.facts[0]!.recordedAt.getTime(),
      );
      expect(await db.episodeRecords.countDocuments({ ...filter, completedAt: null })).toBe(0);
    }
    await expectReaderInvariant();
  });
});

describe('two episodes superseding the same fact at once', () => {
  it('the fact is superseded by one of them, the first recorded; both new facts are kept and live (10 rounds)', async () => {
    const tenant = testTenant('races', 'd');
    const rounds = 10;
    const base = await recordEpisode(
      db,
      tenant,
      episode(Array.from({ length: rounds }, (_, r) => fact('user', 'lives in', `city ${r}`))),
      T,
    );
    for (let round = 0; round < rounds; round++) {
      const target = base.facts[round]!.factId;
      const inputs = [0, 1].map((side) =>
        episode([fact('user', 'lives in', `city ${round}-${side}`, { supersedes: [target] })]),
      );
      const results = await Promise.all(
        inputs.map((input, side) => recordEpisode(over(side), tenant, input, new Date())),
      );
      const newIds = results.map((r) => r.facts[0]!.factId);

      const old = (await db.facts.findOne({ _id: factDocumentId(tenant, target) }))!;
      expect(newIds).toContain(old.supersededBy);
      const by = results[newIds.indexOf(old.supersededBy!)]!;
      expect(old.invalidAt).toEqual(by.facts[0]!.recordedAt);
      expect(old.invalidReason).toBe('superseded');
      // The caller whose record decides reports the supersession. The other may have too,
      // if it answered before the deciding record (recorded earlier, stored later) landed:
      // its answer was the history as it stood (docs/TEMPORAL_MODEL.md, "Where racing
      // writers meet the audit").
      expect(by.superseded.map((f) => f.factId)).toEqual([target]);

      for (const id of newIds) {
        const stored = await db.facts.findOne({ _id: factDocumentId(tenant, id) });
        expect(stored).toMatchObject({ invalidAt: null, supersededBy: null });
      }
      // Both said it wrong, each a record; the first recorded decides, in every view.
      const said = await db.factRecords
        .find({ ...tenant, factId: target, kind: 'saidWrong' })
        .sort({ at: 1, by: 1 })
        .toArray();
      expect(said.map((r) => r.by).sort()).toEqual([...newIds].sort());
      expect(said.every((r) => r.materialised)).toBe(true);
      expect(old.supersededBy).toBe(said[0]!.by);
    }
    await expectReaderInvariant();
  });
});

const DAY = 86_400_000;

/** validAt, then recordedAt, then factId: the order that decides (domain/pairHistory.ts). */
const timelineOrder = (a: FactDoc, b: FactDoc) =>
  a.validAt.getTime() - b.validAt.getTime() ||
  a.recordedAt.getTime() - b.recordedAt.getTime() ||
  (a.factId < b.factId ? -1 : 1);

/**
 * The converged state of one subject and predicate whose facts were all recorded with
 * replaceExisting: the latest in the order is the one open fact; every other believed fact
 * ends at or before the next one begins (past truth); every superseded fact was superseded
 * by a later fact; every corrected version is its fact's statement ending where the fact
 * that ends it begins; and a read of what is live now finds exactly the latest.
 */
async function expectConverged(tenant: Tenant, predicate: string, expected: number) {
  const facts = await db.facts.find({ ...tenant, predicateKey: predicate }).toArray();
  expect(facts.filter((f) => !f.correctionOf)).toHaveLength(expected);
  const byId = new Map(facts.map((f) => [f.factId, f]));
  for (const version of facts.filter((f) => f.correctionOf)) {
    const root = byId.get(version.correctionOf!)!;
    expect(version).toMatchObject({
      object: root.object,
      episodeId: root.episodeId,
      validAt: root.validAt,
      validUntil: byId.get(version.correctedBy!)!.validAt,
    });
  }
  const ordered = [...facts].sort(timelineOrder);
  const latest = ordered.at(-1)!;
  expect(latest).toMatchObject({ invalidAt: null, validUntil: null });
  const believed = ordered.filter((f) => f.invalidAt === null);
  for (let i = 0; i + 1 < believed.length; i++) {
    const [f, next] = [believed[i]!, believed[i + 1]!];
    expect(f.validUntil, `${f.object} ends before ${next.object} begins`).not.toBeNull();
    expect(f.validUntil!.getTime()).toBeLessThanOrEqual(next.validAt.getTime());
  }
  const rank = new Map(ordered.map((f, i) => [f.factId, i]));
  for (const f of ordered.filter((d) => d.invalidAt !== null)) {
    expect(f.invalidReason).toBe('superseded');
    expect(rank.get(f.supersededBy!)!).toBeGreaterThan(rank.get(f.factId)!);
    expect(f.invalidAt!.getTime()).toBeGreaterThanOrEqual(f.recordedAt.getTime());
  }
  const live = await listFacts(
    db,
    tenant,
    {
      selection: { kind: 'point', validAt: T2, knownAt: new Date(T2.getTime() + DAY) },
      subjectPredicate: { subject: 'user', predicate },
    },
    { first: 100 },
  );
  expect(live.facts.map((f) => f.factId)).toEqual([latest.factId]);
  return { latest, believed, ordered };
}

describe('replaceExisting from racing episodes converges on one value, and valid time decides', () => {
  it.each([10, 25, 50])(
    '%i concurrent episodes over four connections, in random order, with ties in valid and transaction time',
    async (writers) => {
      const next = prng(writers);
      const tenant = testTenant(`replace-race-${writers}`, 'd');
      const predicate = 'drives';
      // One fact there before, from another pipeline run.
      await recordEpisode(
        db,
        tenant,
        episode([
          fact('user', predicate, 'a bicycle', { validAt: new Date(T.getTime() - 30 * DAY) }),
        ]),
        T,
      );
      const inputs = Array.from({ length: writers }, (_, i) => ({
        input: episode([
          fact('user', predicate, `car ${i}`, {
            // A few days only, so many share a validAt; all before T2.
            validAt: new Date(T.getTime() - Math.floor(next() * 5) * DAY),
            replaceExisting: true,
          }),
        ]),
        // Some writers read the same clock millisecond.
        at: new Date(T2.getTime() + Math.floor(next() * 4)),
        delay: Math.floor(next() * 20),
      }));
      const order = inputs.map((_, i) => i).sort(() => next() - 0.5);
      await Promise.all(
        order.map(async (i, n) => {
          const { input, at, delay } = inputs[i]!;
          await new Promise((resolve) => setTimeout(resolve, delay));
          return recordEpisode(over(n % clients.length), tenant, input, at);
        }),
      );
      await expectConverged(tenant, predicate, writers + 1);
      await expectReaderInvariant();
    },
  );

  it('an episode interrupted after storing its fact converges once it is completed, whatever ran meanwhile', async () => {
    const tenant = testTenant('replace-interrupted', 'd');
    const predicate = 'lives in';
    const at = (days: number) => new Date(T.getTime() + days * DAY);
    const late = episode([
      fact('user', predicate, 'oslo', { validAt: at(-1), replaceExisting: true }),
    ]);
    await recordEpisode(
      db,
      tenant,
      episode([fact('user', predicate, 'rome', { validAt: at(-3), replaceExisting: true })]),
      T,
    );
    // Cut short after its records are stored: its pair not materialised yet.
    const spy = vi
      .spyOn(db.facts, 'insertMany')
      .mockRejectedValueOnce(
        Object.assign(new Error('socket closed'), { name: 'MongoNetworkError' }),
      );
    try {
      await expect(recordEpisode(db, tenant, late, T)).rejects.toThrow('socket closed');
    } finally {
      spy.mockRestore();
    }
    // Meanwhile, episodes before and after it in valid time.
    await Promise.all([
      recordEpisode(
        over(0),
        tenant,
        episode([fact('user', predicate, 'paris', { validAt: at(-2), replaceExisting: true })]),
        at(0.1),
      ),
      recordEpisode(
        over(1),
        tenant,
        episode([fact('user', predicate, 'lima', { validAt: at(-5), replaceExisting: true })]),
        at(0.1),
      ),
    ]);
    // Completed later (a retry): the same state as if it had never been cut short.
    const completed = await recordEpisode(db, tenant, late, at(0.2));
    expect(completed.outcome).toBe('completed');
    const { latest, believed } = await expectConverged(tenant, 'lives in', 4);
    expect(latest.object).toBe('oslo');
    // lima arrived after rome and paris, with an earlier validAt: kept as past truth, ending
    // where the next believed fact begins.
    expect(believed.map((f) => f.object)).toContain('lima');
  });
});

/**
 * Crash injection: the call fails at one step (the collection method that step uses throws
 * once), then the same call is made again. The input exercises every step: a new and an
 * existing entity, a mentioned entity, three facts, a listed supersession and a
 * replaceExisting one.
 */
const EPISODE = '5f0c1d2e-3a4b-4c5d-8e6f-7a8b9c0d1e2f';
const CRASH_INPUT: EpisodeInput = {
  episodeId: EPISODE,
  occurredAt: new Date('2026-11-20T16:45:00.000Z'),
  source: 'chat',
  content: 'user: I bought the Corolla Hybrid yesterday! Loving it.',
  entities: [
    { name: 'Toyota', type: 'ORG' },
    { name: 'Toyota Corolla Hybrid', type: 'PRODUCT' },
  ],
  facts: [
    fact('user', 'owns', 'Toyota Corolla Hybrid', {
      objectIsEntity: true,
      validAt: new Date('2026-11-19T00:00:00.000Z'),
      supersedes: [DEMO.facts.familyCar],
    }),
    fact('user', 'is interested in', 'corolla accessories', {
      validAt: new Date('2026-11-20T16:45:00.000Z'),
      replaceExisting: true,
    }),
    fact('toyota corolla hybrid', 'is made by', 'Toyota', {
      objectIsEntity: true,
      validAt: new Date('2026-11-20T16:45:00.000Z'),
      validUntil: new Date('2030-01-01T00:00:00.000Z'),
    }),
  ],
};

/**
 * Every document of one workspace, with what is derived from the workspace (document ids,
 * this episode's fact ids) and the transaction time replaced by labels, so two
 * workspaces' states compare equal when the same call had the same effect.
 */
async function workspaceState(workspace: string, ...recordedAt: Date[]) {
  const tenant = testTenant(workspace, DATASET);
  const { workspaceId } = tenant;
  const labels = new Map<string, string>([
    [workspaceId, '<workspace>'],
    ...recordedAt.map((at) => [at.toISOString(), '<recordedAt>'] as [string, string]),
  ]);
  // A corrected version's id is derived from the tenant: named by what it corrects.
  for (const v of await db.facts.find({ workspaceId, correctionOf: { $ne: null } }).toArray()) {
    labels.set(v.factId, `<version of ${v.correctionOf} ended by ${v.correctedBy}>`);
  }
  CRASH_INPUT.facts.forEach((_, i) => {
    labels.set(episodeFactId(tenant, EPISODE, i), `<fact ${i}>`);
  });
  const state: Record<string, unknown[]> = {};
  for (const name of [
    'datasets',
    'episodeRecords',
    'episodes',
    'entities',
    'facts',
    'factRecords',
  ]) {
    const docs = await database.db.collection(name).find({ workspaceId }).toArray();
    state[name] = docs
      .map(({ _id, ...doc }) => {
        // `_id` is derived from the workspace and the natural key the other fields hold.
        if (doc.entityId === _id) doc.entityId = '<derived from the name>';
        // When the record was completed is the only value a re-run may set differently.
        if ('completedAt' in doc) doc.completedAt = doc.completedAt !== null;
        let json = JSON.stringify(doc);
        for (const [from, to] of labels) json = json.split(from).join(to);
        return json;
      })
      .sort()
      .map((json) => JSON.parse(json));
  }
  return state;
}

type Method = 'insertOne' | 'insertMany' | 'bulkWrite' | 'updateOne' | 'updateMany';
interface Step {
  name: string;
  collection: keyof Collections;
  method: Method;
  /** Which call of the method throws (default the first). */
  nth?: number;
  /** Write the first document (or operation) of the batch, then throw (a crash half-way). */
  partial?: boolean;
}

const STEPS: Step[] = [
  { name: '1: the claim', collection: 'episodeRecords', method: 'insertOne' },
  { name: '2: the dataset', collection: 'datasets', method: 'bulkWrite' },
  { name: '2: the episode', collection: 'episodes', method: 'insertOne' },
  { name: '3: the entities', collection: 'entities', method: 'bulkWrite' },
  { name: '4: the records', collection: 'factRecords', method: 'insertMany' },
  {
    name: '4: the records, half-way',
    collection: 'factRecords',
    method: 'insertMany',
    partial: true,
  },
  // Step 5 materialises the pairs (store/materialise.ts): the documents that stop being
  // believed first (a bulk write), then the new ones, then the feed, then the records
  // marked seen.
  { name: '5: the documents closed', collection: 'facts', method: 'bulkWrite' },
  {
    name: '5: the documents closed, half-way',
    collection: 'facts',
    method: 'bulkWrite',
    partial: true,
  },
  { name: '5: the new documents', collection: 'facts', method: 'insertMany' },
  {
    name: '5: the new documents, half-way',
    collection: 'facts',
    method: 'insertMany',
    partial: true,
  },
  { name: '5: the records marked seen', collection: 'factRecords', method: 'updateMany' },
  { name: '6: the record marked complete', collection: 'episodeRecords', method: 'updateOne' },
];

/** Makes `step`'s method throw once (at its nth call); every other call goes through. */
function injectCrash(step: Step): MockInstance {
  const target = db[step.collection] as unknown as Record<
    Method,
    (...args: unknown[]) => Promise<unknown>
  >;
  const original = target[step.method].bind(target);
  let calls = 0;
  return vi.spyOn(target, step.method).mockImplementation(async (...args: unknown[]) => {
    calls += 1;
    if (calls !== (step.nth ?? 1)) return original(...args);
    if (step.partial) {
      const [docs, ...rest] = args as [unknown[], ...unknown[]];
      await original(docs.slice(0, 1), ...rest);
    }
    throw new Error(`injected crash at step ${step.name}`);
  });
}

async function crashOnce(workspace: string, step: Step): Promise<void> {
  const spy = injectCrash(step);
  try {
    await expect(recordEpisode(db, testTenant(workspace, DATASET), CRASH_INPUT, T)).rejects.toThrow(
      /injected crash/,
    );
  } finally {
    spy.mockRestore();
  }
}

/** The state a clean run of CRASH_INPUT at T leaves (computed once, in its own workspace). */
let referenceState: Promise<Awaited<ReturnType<typeof workspaceState>>> | undefined;
function cleanRunState() {
  referenceState ??= (async () => {
    await loadDemoDataset(db, 'reference', DEMO_LOADED_AT);
    const clean = await recordEpisode(db, testTenant('reference', DATASET), CRASH_INPUT, T);
    expect(clean.outcome).toBe('recorded');
    expect(clean.superseded.map((f) => f.factId).sort()).toEqual(
      [DEMO.facts.familyCar, DEMO.facts.toyotaInterest].sort(),
    );
    return workspaceState('reference', T);
  })();
  return referenceState;
}

/** Every document of a workspace's write path, by collection and `_id`. */
const workspaceDocuments = (workspace: string) =>
  writtenDocuments(database.db, { workspaceId: testTenant(workspace, DATASET).workspaceId });

describe('a crash between steps, then the same call again', () => {
  let reference: Awaited<ReturnType<typeof workspaceState>>;

  beforeAll(async () => {
    reference = await cleanRunState();
  });

  it('the clean run did what the input says', () => {
    const tenant = testTenant('reference', DATASET);
    const facts = reference.facts as FactDoc[];
    const byId = new Map(facts.map((f) => [f.factId, f]));
    expect(byId.get(DEMO.facts.familyCar)).toMatchObject({
      invalidAt: '<recordedAt>',
      supersededBy: '<fact 0>',
    });
    expect(byId.get(DEMO.facts.toyotaInterest)).toMatchObject({
      invalidAt: '<recordedAt>',
      supersededBy: '<fact 1>',
    });
    for (let i = 0; i < 3; i++) {
      expect(byId.get(`<fact ${i}>`)).toMatchObject({
        recordedAt: '<recordedAt>',
        invalidAt: null,
      });
    }
    expect(reference.episodes).toContainEqual(
      expect.objectContaining({ episodeId: EPISODE, recordedAt: '<recordedAt>' }),
    );
    expect(reference.entities).toContainEqual(
      expect.objectContaining({ name: 'toyota', type: 'ORG', updatedAt: '<recordedAt>' }),
    );
    expect(reference.episodeRecords).toEqual([
      expect.objectContaining({
        episodeId: EPISODE,
        recordedAt: '<recordedAt>',
        completedAt: true,
      }),
    ]);
    // Its records: each fact asserted, all seen through by a materialisation.
    const records = reference.factRecords as {
      kind: string;
      factId: string;
      materialised: boolean;
    }[];
    for (let i = 0; i < 3; i++) {
      expect(records).toContainEqual(
        expect.objectContaining({ kind: 'asserted', factId: `<fact ${i}>`, materialised: true }),
      );
    }
    expect(records.every((r) => r.materialised)).toBe(true);
    expect(tenant.dataset).toBe(DATASET);
  });

  it.each(STEPS.map((step, i) => [step.name, i] as const))(
    'crash at step %s: readers never see a broken state; the re-run says it completed the episode, stamps what it writes with its own time, and leaves the history before it as it was',
    async (_name, i) => {
      const step = STEPS[i]!;
      const workspace = `crash-${i}`;
      const tenant = testTenant(workspace, DATASET);
      await loadDemoDataset(db, workspace, DEMO_LOADED_AT);
      await crashOnce(workspace, step);
      await expectReaderInvariant(false);
      const crashed = await workspaceDocuments(workspace);

      const neverClaimed = step.collection === 'episodeRecords' && step.method === 'insertOne';
      const rerun = await recordEpisode(db, tenant, CRASH_INPUT, T2);
      // Not "already recorded": this call did the work (or finished it).
      expect(rerun.outcome).toBe(neverClaimed ? 'recorded' : 'completed');
      expect(rerun.facts.map((f) => f.factId)).toEqual(
        CRASH_INPUT.facts.map((_, n) => episodeFactId(tenant, EPISODE, n)),
      );
      // Each stored part carries the time it became visible: the crashed attempt's for what
      // it had stored, the re-run's for the rest.
      const stored = new Set(crashed.keys());
      expect(rerun.episode.recordedAt).toEqual(
        stored.has(`episodes/${rerun.episode._id}`) ? T : T2,
      );
      // A fact is recorded when its record was: a record keeps the attempt's instant.
      const recordedBefore = (f: FactDoc) =>
        stored.has(`factRecords/${factRecordId(tenant, 'asserted', f.factId)}`);
      for (const f of rerun.facts) {
        expect(f.recordedAt, f.factId).toEqual(recordedBefore(f) ? T : T2);
      }
      expect(rerun.superseded.map((f) => f.factId).sort()).toEqual(
        [DEMO.facts.familyCar, DEMO.facts.toyotaInterest].sort(),
      );
      await expectReaderInvariant();

      // The same documents as a clean run, whichever attempt wrote each...
      expect(await workspaceState(workspace, T, T2)).toEqual(reference);
      const completed = await workspaceDocuments(workspace);
      // ...each instant the crashed attempt wrote kept, each one written since the re-run's...
      expectOwnInstants(crashed, completed, T2, [DEMO_LOADED_AT]);
      // ...and what the store believed before the crashed attempt unchanged. Its records
      // keep its instant, so from T on the history holds what they say (docs/TEMPORAL_MODEL.md,
      // "Where racing writers meet the audit"); without them, from the re-run's T2 on.
      expectHistoryKept(crashed, completed, [new Date(T.getTime() - 1)]);
      const recordsStored = rerun.facts.some(recordedBefore);
      const between = believedIdsAt(completed, new Date(T.getTime() + 60_000));
      for (const f of rerun.facts) {
        if (recordedBefore(f)) expect(between).toContain(f.factId);
        else expect(between).not.toContain(f.factId);
      }
      if (!recordsStored) {
        expectHistoryKept(crashed, completed, [T, new Date(T2.getTime() - 1)]);
      }
      const afterRerun = believedIdsAt(completed, T2);
      expect(afterRerun).toEqual(
        expect.arrayContaining(CRASH_INPUT.facts.map((_, n) => episodeFactId(tenant, EPISODE, n))),
      );
      expect(afterRerun).not.toContain(DEMO.facts.familyCar);
      expect(afterRerun).not.toContain(DEMO.facts.toyotaInterest);

      // And from now on it is a plain retry: same answer, nothing written.
      const before = await snapshot();
      const retry = await recordEpisode(db, tenant, CRASH_INPUT, new Date());
      expect(retry.outcome).toBe('alreadyRecorded');
      expect(retry.facts).toEqual(rerun.facts);
      expect(await snapshot()).toEqual(before);
    },
  );
});

describe('repairEpisodeRecords', () => {
  const repairSteps = STEPS.filter((s) =>
    [
      '2: the episode',
      '4: the records, half-way',
      '5: the documents closed',
      '5: the new documents, half-way',
      '6: the record marked complete',
    ].includes(s.name),
  );

  it.each(repairSteps.map((s) => [s.name, s] as const))(
    'completes a record abandoned after a crash at step %s, with no re-run by the client',
    async (_name, step) => {
      const workspace = `repair-${STEPS.indexOf(step)}`;
      const tenant = testTenant(workspace, DATASET);
      await loadDemoDataset(db, workspace, DEMO_LOADED_AT);
      const reference = await cleanRunState();
      await crashOnce(workspace, step);
      expect(await db.episodeRecords.countDocuments({ completedAt: null })).toBe(1);

      const crashed = await workspaceDocuments(workspace);
      expect(await repairEpisodeRecords(db, T2)).toBe(1);
      await expectReaderInvariant();
      expect(await workspaceState(workspace, T, T2)).toEqual(reference);
      expectOwnInstants(crashed, await workspaceDocuments(workspace), T2, [DEMO_LOADED_AT]);
      expect(await db.episodeRecords.countDocuments({ completedAt: null })).toBe(0);
      expect(await repairEpisodeRecords(db, T2)).toBe(0);

      // The client's later retry finds it recorded and changes nothing.
      const before = await snapshot();
      const retry = await recordEpisode(db, tenant, CRASH_INPUT, new Date());
      expect(retry.outcome).toBe('alreadyRecorded');
      expect(retry.episode.recordedAt).toEqual(step.name === '2: the episode' ? T2 : T);
      expect(retry.superseded.map((f) => f.factId).sort()).toEqual(
        [DEMO.facts.familyCar, DEMO.facts.toyotaInterest].sort(),
      );
      expect(await snapshot()).toEqual(before);
    },
  );
});
