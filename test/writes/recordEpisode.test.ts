import { randomUUID } from 'node:crypto';
import {
  type Document,
  type Filter,
  MongoNetworkError,
  MongoServerError,
  MongoServerSelectionError,
  type TopologyDescription,
} from 'mongodb';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { recordEpisode as recordEpisodeInStore } from '../../src/store/recordEpisode.js';
import { workspaceIdFor } from '../../src/store/workspaces.js';
import {
  type FactInput,
  RecordEpisodeEntitiesDocument,
  RecordEpisodeFactDocument,
  RecordEpisodeIdsDocument,
  type RecordEpisodeInput,
  RecordEpisodeLiveFactsDocument,
  RecordEpisodeWriteDocument,
} from '../generated/operations.js';
import { DEMO } from '../helpers/demo.js';
import { openTestGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * recordEpisode through GraphQL: what one call stores, idempotency by episodeId, input
 * validation (nothing written on bad input), scopes and tenancy. The concurrency and
 * crash-recovery tests that need separate connections or a fixed clock are in
 * recordEpisode.store.test.ts.
 */

const DATASET = 'user_42';

const HOUR = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();

let t: TestGateway;
let writer: string;
let reader: string;
let writeOnly: string;
let globexWriter: string;

beforeAll(async () => {
  // Two workspaces with the same demo data: same dataset names, same public fact ids.
  t = await openTestGateway({ demoWorkspaces: ['acme', 'globex'] });
  writer = await t.key('acme', ['read', 'write']);
  reader = await t.key('acme', ['read']);
  writeOnly = await t.key('acme', ['write']);
  globexWriter = await t.key('globex', ['read', 'write']);
});

/** A stored document of any collection: every `_id` of the store is a string. */
type AnyDoc = { _id: string } & Document;

/** Every document of every collection of the test database (or those the filter keeps). */
async function snapshot(filter: Filter<AnyDoc> = {}): Promise<Record<string, AnyDoc[]>> {
  const names = (await t.database.db.listCollections({}, { nameOnly: true }).toArray())
    .map((c) => c.name)
    .sort();
  const out: Record<string, AnyDoc[]> = {};
  for (const name of names) {
    out[name] = await t.database.db
      .collection<AnyDoc>(name)
      .find(filter)
      .sort({ _id: 1 })
      .toArray();
  }
  return out;
}

function episode(episodeId: string | null = randomUUID(), occurredAt = iso(Date.now() - HOUR)) {
  return { episodeId, occurredAt, source: 'chat', content: `user: something (${episodeId})` };
}

function fact(subject: string, predicate: string, object: string, more: Partial<FactInput> = {}) {
  return { subject, predicate, object, confidence: 0.8, ...more };
}

function record(dataset: string, input: RecordEpisodeInput, key: string | null = writer) {
  return t.graphql(RecordEpisodeWriteDocument, { dataset, input }, key);
}

/** Records and returns the payload, failing the test on any error. */
async function recorded(dataset: string, input: RecordEpisodeInput, key: string = writer) {
  const { status, body } = await record(dataset, input, key);
  expect(body.errors).toBeUndefined();
  expect(status).toBe(200);
  return body.data!.recordEpisode;
}

async function readFact(dataset: string, id: string, key = writer) {
  const { body } = await t.graphql(RecordEpisodeFactDocument, { dataset, id }, key);
  expect(body.errors).toBeUndefined();
  return body.data!.dataset!.fact!;
}

async function entities(dataset: string, key = writer) {
  const { body } = await t.graphql(RecordEpisodeEntitiesDocument, { dataset }, key);
  expect(body.errors).toBeUndefined();
  return new Map(body.data!.dataset!.entities.edges.map((e) => [e.node.name, e.node]));
}

describe('recording an episode', () => {
  it('stores the episode, entities and facts, and supersedes the listed and replaced facts', async () => {
    const acme = { workspaceId: workspaceIdFor('acme'), dataset: DATASET };
    // An entity already mentioned "later" than this call: its updatedAt must not move back.
    const later = new Date(Date.now() + 365 * 24 * HOUR);
    await recordEpisodeInStore(
      t.database.collections,
      acme,
      {
        episodeId: randomUUID(),
        occurredAt: later,
        source: 'seed',
        content: '',
        entities: [{ name: 'future car', type: 'PRODUCT' }],
        facts: [],
      },
      later,
    );

    const episodeId = randomUUID();
    const start = Date.now();
    const occurredAt = iso(start - 2 * HOUR);
    const validAt = iso(start - 26 * HOUR);
    const validUntil = iso(start + 30 * 24 * HOUR);
    const result = await recorded(DATASET, {
      episode: {
        episodeId: episodeId.toUpperCase(),
        occurredAt,
        source: 'chat',
        content: 'user: I bought the Corolla Hybrid yesterday! Driven the Civic too.',
      },
      entities: [
        { name: 'Toyota Corolla Hybrid', type: 'PRODUCT' },
        { name: 'Toyota', type: 'ORG' },
        { name: 'FUTURE CAR', type: 'PRODUCT' },
      ],
      facts: [
        fact('user', 'owns', 'Toyota Corolla Hybrid', {
          objectIsEntity: true,
          confidence: 0.95,
          sourceQuote: 'I bought the Corolla Hybrid yesterday',
          validAt,
          supersedes: [DEMO.facts.familyCar.toUpperCase()],
        }),
        // Case-insensitive subject and predicate: replaces DEMO.facts.toyotaInterest (live), not DEMO.facts.hondaInterest
        // (already superseded) nor DEMO.facts.testDrive (another predicate).
        fact('User', 'IS INTERESTED IN', 'corolla accessories', {
          confidence: 0.6,
          replaceExisting: true,
        }),
        fact('Honda Civic', 'was test driven by', 'user', { objectIsEntity: true, validUntil }),
      ],
    });
    const end = Date.now();

    // The episode, with the call time as its transaction time.
    expect(result.alreadyRecorded).toBe(false);
    expect(result.episode).toEqual({
      episodeId,
      dataset: DATASET,
      occurredAt,
      recordedAt: expect.any(String),
      source: 'chat',
      content: 'user: I bought the Corolla Hybrid yesterday! Driven the Civic too.',
    });
    const recordedAt = result.episode.recordedAt;
    expect(Date.parse(recordedAt)).toBeGreaterThanOrEqual(start);
    expect(Date.parse(recordedAt)).toBeLessThanOrEqual(end);

    // The facts, in input order, recorded at the call time; validAt defaults to occurredAt.
    const live = { recordedAt, episodeId, invalidAt: null, invalidReason: null, state: 'LIVE' };
    expect(result.facts).toEqual([
      {
        ...live,
        factId: expect.any(String),
        subject: 'user',
        predicate: 'owns',
        object: 'Toyota Corolla Hybrid',
        objectIsEntity: true,
        confidence: 0.95,
        sourceQuote: 'I bought the Corolla Hybrid yesterday',
        validAt,
        validUntil: null,
      },
      {
        ...live,
        factId: expect.any(String),
        subject: 'User',
        predicate: 'IS INTERESTED IN',
        object: 'corolla accessories',
        objectIsEntity: false,
        confidence: 0.6,
        sourceQuote: null,
        validAt: occurredAt,
        validUntil: null,
      },
      {
        ...live,
        factId: expect.any(String),
        subject: 'Honda Civic',
        predicate: 'was test driven by',
        object: 'user',
        objectIsEntity: true,
        confidence: 0.8,
        sourceQuote: null,
        validAt: occurredAt,
        validUntil,
      },
    ]);
    const [owns, interested, testDriven] = result.facts.map((f) => f.factId);
    expect(new Set([owns, interested, testDriven]).size).toBe(3);
    for (const f of result.facts) expect(await readFact(DATASET, f.factId)).toMatchObject(f);

    // Superseded: the listed fact and, with replaceExisting, the live same-subject/predicate one.
    expect([...result.supersededIds].sort()).toEqual(
      [DEMO.facts.familyCar, DEMO.facts.toyotaInterest].sort(),
    );
    expect(result.superseded.map((f) => f.factId).sort()).toEqual(
      [DEMO.facts.familyCar, DEMO.facts.toyotaInterest].sort(),
    );
    for (const f of result.superseded) {
      expect(f).toMatchObject({ invalidAt: recordedAt, invalidReason: 'SUPERSEDED' });
      expect(f.state).toBe('SUPERSEDED');
    }
    expect(await readFact(DATASET, DEMO.facts.familyCar)).toMatchObject({
      invalidAt: recordedAt,
      invalidReason: 'SUPERSEDED',
      state: 'SUPERSEDED',
      supersededBy: { factId: owns },
    });
    expect(await readFact(DATASET, DEMO.facts.toyotaInterest)).toMatchObject({
      invalidAt: recordedAt,
      invalidReason: 'SUPERSEDED',
      supersededBy: { factId: interested },
    });
    // Already superseded before: left as it was.
    expect(await readFact(DATASET, DEMO.facts.hondaInterest)).toMatchObject({
      invalidAt: '2026-08-16T09:14:06.000Z',
      supersededBy: { factId: DEMO.facts.toyotaInterest },
    });
    expect(await readFact(DATASET, DEMO.facts.testDrive)).toMatchObject({ invalidAt: null });

    // Entities: listed ones upserted by lower-cased name, mentioned ones touched,
    // updatedAt moved forward to recordedAt and never back.
    const after = await entities(DATASET);
    expect([...after.keys()].every((name) => name === name.toLowerCase())).toBe(true);
    expect(after.get('toyota')).toMatchObject({ type: 'ORG', updatedAt: recordedAt });
    expect(after.get('toyota corolla hybrid')).toMatchObject({
      type: 'PRODUCT',
      updatedAt: recordedAt,
    });
    expect(after.get('user')?.updatedAt).toBe(recordedAt);
    expect(after.get('honda civic')?.updatedAt).toBe(recordedAt);
    expect(after.get('future car')?.updatedAt).toBe(later.toISOString());
    expect(after.get('honda')?.updatedAt).toBe('2026-05-10T18:30:00.000Z');
    expect(after.get('berlin')?.updatedAt).toBe('2026-04-01T08:00:00.000Z');
    expect(after.has('corolla accessories')).toBe(false);
    expect(after.size).toBe(7);
  });

  it('records into a dataset the workspace has not used yet, which then reads like any other', async () => {
    const dataset = 'a new dataset/ü?#%';
    const result = await recorded(dataset, {
      episode: episode(),
      entities: [{ name: 'Tea', type: 'FOOD' }],
      facts: [fact('user', 'likes', 'tea', { objectIsEntity: true })],
    });
    const { body } = await t.graphql(RecordEpisodeLiveFactsDocument, { dataset }, writer);
    expect(body.errors).toBeUndefined();
    expect(body.data!.dataset?.facts.edges.map((e) => e.node.factId)).toEqual([
      result.facts[0]!.factId,
    ]);
    expect([...(await entities(dataset)).keys()]).toEqual(['tea']);
  });

  it('without an episodeId, the id is derived from the episode: the same episode sent twice is one', async () => {
    const input = { episode: episode(null), facts: [fact('user', 'likes', 'coffee')] };
    const before = await t.graphql(RecordEpisodeLiveFactsDocument, { dataset: 'no-ids' }, writer);
    const first = await recorded('no-ids', input);
    expect(first.outcome).toBe('RECORDED');
    const again = await recorded('no-ids', input);
    expect(again).toEqual({ ...first, alreadyRecorded: true, outcome: 'ALREADY_RECORDED' });
    const live = await t.graphql(RecordEpisodeLiveFactsDocument, { dataset: 'no-ids' }, writer);
    expect(live.body.data!.dataset!.facts.edges.length).toBe(
      (before.body.data?.dataset?.facts.edges.length ?? 0) + 1,
    );
    // Another source, instant or text is another episode...
    for (const other of [
      { ...input.episode, source: 'email' },
      { ...input.episode, occurredAt: iso(Date.parse(input.episode.occurredAt) + 1) },
      { ...input.episode, content: `${input.episode.content}!` },
    ]) {
      const next = await recorded('no-ids', { ...input, episode: other });
      expect(next.outcome).toBe('RECORDED');
      expect(next.episode.episodeId).not.toBe(first.episode.episodeId);
    }
    // ...and the same episode with other facts is the same episode: a CONFLICT, which an
    // id of its own avoids.
    const { body } = await record('no-ids', { ...input, facts: [fact('user', 'likes', 'tea')] });
    expect(body.errors?.[0]?.extensions?.code).toBe('CONFLICT');
    const own = await recorded('no-ids', {
      episode: { ...input.episode, episodeId: randomUUID() },
      facts: [fact('user', 'likes', 'tea')],
    });
    expect(own.outcome).toBe('RECORDED');
  });
});

describe('idempotent by episodeId', () => {
  const dataset = 'retries';
  let input: RecordEpisodeInput;
  let first: Awaited<ReturnType<typeof recorded>>;

  beforeAll(async () => {
    const base = await recorded(dataset, {
      episode: episode(),
      facts: [fact('user', 'likes', 'tea'), fact('user', 'drinks', 'green tea')],
    });
    input = {
      episode: episode(),
      entities: [{ name: 'Coffee', type: 'FOOD' }],
      facts: [
        fact('user', 'likes', 'coffee', { supersedes: [base.facts[0]!.factId] }),
        fact('user', 'drinks', 'espresso', { replaceExisting: true }),
      ],
    };
    first = await recorded(dataset, input);
    expect([...first.supersededIds].sort()).toEqual(base.facts.map((f) => f.factId).sort());
  });

  it('a retry returns the same result, marked alreadyRecorded, and changes nothing', async () => {
    const before = await snapshot();
    const retry = await recorded(dataset, input);
    expect(first.outcome).toBe('RECORDED');
    expect(retry).toEqual({ ...first, alreadyRecorded: true, outcome: 'ALREADY_RECORDED' });
    // The episodeId is a UUID: its case does not matter.
    const upper = await recorded(dataset, {
      ...input,
      episode: { ...input.episode, episodeId: input.episode.episodeId!.toUpperCase() },
    });
    expect(upper).toEqual({ ...first, alreadyRecorded: true, outcome: 'ALREADY_RECORDED' });
    expect(await snapshot()).toEqual(before);
  });

  it('the same episodeId with other content is a CONFLICT and changes nothing', async () => {
    const before = await snapshot();
    const variants: RecordEpisodeInput[] = [
      { ...input, episode: { ...input.episode, content: 'user: something else' } },
      { ...input, facts: [fact('user', 'likes', 'coffee', { confidence: 0.1 })] },
      { ...input, entities: [] },
      { ...input, episode: { ...input.episode, occurredAt: iso(Date.now()) } },
    ];
    for (const variant of variants) {
      const { body } = await record(dataset, variant);
      expect(body.data).toBeNull();
      expect(body.errors?.[0]?.extensions?.code).toBe('CONFLICT');
      expect(body.errors?.[0]?.message).toMatch(/already recorded with different content/);
    }
    expect(await snapshot()).toEqual(before);
  });
});

describe('concurrent duplicates through GraphQL', () => {
  it('five concurrent requests with the same episodeId store it once and all return it', async () => {
    const dataset = 'concurrent';
    const base = await recorded(dataset, {
      episode: episode(),
      facts: [fact('user', 'has', 'a cat')],
    });
    const input: RecordEpisodeInput = {
      episode: episode(),
      entities: [{ name: 'Dog', type: 'THING' }],
      facts: [
        fact('user', 'has', 'a dog', { supersedes: [base.facts[0]!.factId] }),
        fact('user', 'walks', 'the dog'),
      ],
    };
    const results = await Promise.all(Array.from({ length: 5 }, () => record(dataset, input)));
    for (const r of results) expect(r.body.errors).toBeUndefined();
    const payloads = results.map((r) => r.body.data!.recordEpisode);
    // One recorded it; the others finished it with that one, or found it done.
    expect(payloads.filter((p) => p.outcome === 'RECORDED')).toHaveLength(1);
    for (const p of payloads) {
      expect(p.alreadyRecorded).toBe(p.outcome === 'ALREADY_RECORDED');
    }
    for (const p of payloads) {
      expect(p.facts.map((f) => f.factId)).toEqual(payloads[0]!.facts.map((f) => f.factId));
      expect(p.episode.recordedAt).toBe(payloads[0]!.episode.recordedAt);
      expect(p.supersededIds).toEqual([base.facts[0]!.factId]);
    }
    const db = t.database.collections;
    const tenant = { workspaceId: workspaceIdFor('acme'), dataset };
    const episodeId = input.episode.episodeId!;
    expect(await db.episodes.countDocuments({ ...tenant, episodeId })).toBe(1);
    expect(await db.episodeRecords.countDocuments({ ...tenant, episodeId })).toBe(1);
    expect(await db.facts.countDocuments({ ...tenant, episodeId })).toBe(2);
    expect(await db.entities.countDocuments({ ...tenant, name: 'dog' })).toBe(1);
    expect(await readFact(dataset, base.facts[0]!.factId)).toMatchObject({
      supersededBy: { factId: payloads[0]!.facts[0]!.factId },
    });
  });
});

describe('a failure half-way, then a retry', () => {
  it('after a crash before the facts are written, the retry says it completed the episode and stamps the facts with its own time', async () => {
    const dataset = 'crash';
    const base = await recorded(dataset, {
      episode: episode(),
      facts: [fact('user', 'uses', 'vim')],
    });
    const input: RecordEpisodeInput = {
      episode: episode(),
      facts: [fact('user', 'uses', 'emacs', { replaceExisting: true })],
    };
    const spy = vi
      .spyOn(t.database.collections.factRecords, 'insertMany')
      .mockRejectedValueOnce(new Error('injected crash'));
    let crashedAt: Date | undefined;
    try {
      const crashed = await record(dataset, input);
      expect(crashed.body.errors?.[0]?.extensions?.code).toBe('INTERNAL_SERVER_ERROR');
      crashedAt = (await t.database.collections.episodeRecords.findOne({
        episodeId: input.episode.episodeId!,
      }))!.recordedAt;
    } finally {
      spy.mockRestore();
    }
    // Nothing half-done is visible: the old fact is still live, no new fact exists.
    expect(await readFact(dataset, base.facts[0]!.factId)).toMatchObject({ state: 'LIVE' });
    const retry = await recorded(dataset, input);
    // Not "already recorded": this call stored the facts, which became visible with it.
    expect(retry).toMatchObject({ alreadyRecorded: false, outcome: 'COMPLETED' });
    // The episode document was stored by the crashed attempt, the fact by the retry.
    expect(retry.episode.recordedAt).toBe(crashedAt!.toISOString());
    const [stored] = retry.facts;
    expect(Date.parse(stored!.recordedAt)).toBeGreaterThan(crashedAt!.getTime());
    expect(retry.supersededIds).toEqual([base.facts[0]!.factId]);
    expect(await readFact(dataset, base.facts[0]!.factId)).toMatchObject({
      invalidAt: stored!.recordedAt,
      supersededBy: { factId: stored!.factId },
    });
  });
});

describe('bad input', () => {
  let otherDatasetFact: string;
  let otherWorkspaceFact: string;

  beforeAll(async () => {
    const other = await recorded('other', { episode: episode(), facts: [fact('a', 'b', 'c')] });
    otherDatasetFact = other.facts[0]!.factId;
    const theirs = await recorded(
      DATASET,
      { episode: episode(), facts: [fact('x', 'y', 'z')] },
      globexWriter,
    );
    otherWorkspaceFact = theirs.facts[0]!.factId;
  });

  /** Runs the call; it must be BAD_USER_INPUT naming every path, and write nothing. */
  async function expectRejected(input: RecordEpisodeInput, paths: string[], key = writer) {
    const before = await snapshot();
    const { status, body } = await record(DATASET, input, key);
    expect(status).toBeLessThan(500);
    expect(body.data ?? null).toBeNull();
    expect(body.errors).toHaveLength(1);
    const error = body.errors![0]!;
    expect(error.extensions?.code).toBe('BAD_USER_INPUT');
    for (const path of paths) expect(error.message).toContain(path);
    expect(await snapshot()).toEqual(before);
    return error;
  }

  it('a confidence outside 0..1', async () => {
    const error = await expectRejected(
      {
        episode: episode(),
        facts: [
          fact('user', 'likes', 'tea', { confidence: 1.5 }),
          fact('a', 'b', 'c', { confidence: -0.1 }),
        ],
      },
      ['input.facts.0.confidence', 'input.facts.1.confidence'],
    );
    expect(error.message).toContain('input.facts.0.confidence: must be between 0 and 1');
    expect(error.extensions?.issues).toEqual([
      { path: ['input', 'facts', 0, 'confidence'], message: 'must be between 0 and 1' },
      { path: ['input', 'facts', 1, 'confidence'], message: 'must be between 0 and 1' },
    ]);
  });

  it('an empty or whitespace-only predicate', async () => {
    await expectRejected(
      { episode: episode(), facts: [fact('user', '', 'tea'), fact('user', '  \t ', 'tea')] },
      ['input.facts.0.predicate', 'input.facts.1.predicate'],
    );
  });

  it('validUntil before or equal to validAt, or before occurredAt when validAt is omitted', async () => {
    const occurredAt = '2026-06-01T00:00:00.000Z';
    await expectRejected(
      {
        episode: episode(randomUUID(), occurredAt),
        facts: [
          fact('a', 'b', 'c', { validAt: '2026-06-10', validUntil: '2026-06-09' }),
          fact('a', 'b', 'c', { validAt: '2026-06-10', validUntil: '2026-06-10T00:00:00Z' }),
          fact('a', 'b', 'c', { validUntil: '2026-05-31T23:59:59Z' }),
          fact('a', 'b', 'c', { validUntil: occurredAt }),
        ],
      },
      [
        'input.facts.0.validUntil',
        'input.facts.1.validUntil',
        'input.facts.2.validUntil',
        'input.facts.3.validUntil',
      ],
    );
  });

  it('several problems at once are all reported', async () => {
    const error = await expectRejected(
      {
        episode: { ...episode(), episodeId: 'not-a-uuid' },
        facts: [
          fact('user', ' ', 'tea', { confidence: 7 }),
          fact('user', 'likes', 'tea', { supersedes: [DEMO.facts.toyotaInterest, '8b21…'] }),
          fact('user', 'likes', 'tea', { validAt: '2026-06-10', validUntil: '2026-06-01' }),
        ],
      },
      [
        'input.episode.episodeId',
        'input.facts.0.predicate',
        'input.facts.0.confidence',
        'input.facts.1.supersedes.1',
        'input.facts.2.validUntil',
      ],
    );
    expect(error.extensions?.issues).toHaveLength(5);
  });

  it('a supersedes entry that is not a UUID, or an episodeId that is not one', async () => {
    await expectRejected(
      { episode: episode(), facts: [fact('a', 'b', 'c', { supersedes: ['fact-1'] })] },
      ['input.facts.0.supersedes.0: must be a UUID'],
    );
    await expectRejected({ episode: { ...episode(), episodeId: '12345' } }, [
      'input.episode.episodeId: must be a UUID',
    ]);
  });

  it('supersedes naming an unknown fact, a fact of another dataset, or of another workspace', async () => {
    const unknown = randomUUID();
    const error = await expectRejected(
      {
        episode: episode(),
        facts: [
          fact('user', 'likes', 'tea', { supersedes: [DEMO.facts.toyotaInterest, unknown] }),
          fact('user', 'likes', 'tea', { supersedes: [otherDatasetFact] }),
          fact('user', 'likes', 'tea', { supersedes: [DEMO.facts.familyCar, otherWorkspaceFact] }),
        ],
      },
      [
        `input.facts.0.supersedes.1: no fact ${unknown} in this dataset`,
        'input.facts.1.supersedes.0',
        'input.facts.2.supersedes.1',
      ],
    );
    expect(error.extensions?.issues).toHaveLength(3);
  });

  it('an unknown entity type', async () => {
    const error = await expectRejected(
      { episode: episode(), entities: [{ name: 'x', type: 'ALIEN' as never }] },
      ['ALIEN'],
    );
    expect(error.message).toMatch(/input\.entities(\[0\]|\.0)\.type/);
  });

  it('more than 250 facts, entities or supersedes of one fact', async () => {
    const facts = Array.from({ length: 251 }, (_, i) => fact('user', 'counted', String(i)));
    await expectRejected({ episode: episode(), facts }, [
      'input.facts: must list at most 250 facts',
    ]);
    const entities = Array.from({ length: 251 }, (_, i) => ({
      name: `e ${i}`,
      type: 'THING' as const,
    }));
    await expectRejected({ episode: episode(), entities }, [
      'input.entities: must list at most 250 entities',
    ]);
    const supersedes = Array.from({ length: 251 }, () => randomUUID());
    await expectRejected(
      { episode: episode(), facts: [fact('user', 'counted', 'x', { supersedes })] },
      ['input.facts.0.supersedes: must list at most 250 facts'],
    );
  });
});

describe('a replaceExisting fact is the one value of its subject and predicate in an episode', () => {
  it('another fact of the episode with the same subject, predicate and validAt is BAD_USER_INPUT, and nothing is written', async () => {
    const before = await snapshot();
    const { body } = await record(DATASET, {
      episode: episode(),
      facts: [
        fact('user', 'drives', 'a honda', { validAt: '2026-05-01T00:00:00Z' }),
        fact('User', 'Drives', 'a toyota', {
          validAt: '2026-05-01T00:00:00Z',
          replaceExisting: true,
        }),
      ],
    });
    expect(body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(body.errors?.[0]?.message).toContain(
      'input.facts.1.replaceExisting: facts.0 has the same subject, predicate and validAt',
    );
    expect(await snapshot()).toEqual(before);
  });

  it('with different validAt both are kept, the earlier ending where the later begins', async () => {
    const result = await recorded('one value', {
      episode: episode(),
      facts: [
        fact('user', 'drives', 'a honda', {
          validAt: '2026-01-01T00:00:00Z',
          replaceExisting: true,
        }),
        fact('user', 'drives', 'a toyota', {
          validAt: '2026-05-01T00:00:00Z',
          replaceExisting: true,
        }),
      ],
    });
    expect(result.facts.map((f) => [f.object, f.validUntil, f.invalidAt])).toEqual([
      ['a honda', '2026-05-01T00:00:00.000Z', null],
      ['a toyota', null, null],
    ]);
  });
});

describe('what a write answers when the database is lost', () => {
  const lost = () => new MongoNetworkError('connection lost');
  const noServer = () =>
    new MongoServerSelectionError('Server selection timed out', {} as TopologyDescription);

  /** Makes one of the store's collection methods fail once, after or instead of running. */
  function failOnce<K extends 'episodeRecords' | 'facts' | 'factRecords'>(
    collection: K,
    method: 'insertOne' | 'insertMany',
    error: () => Error,
    afterRunning: boolean,
  ) {
    const target = t.database.collections[collection] as unknown as Record<
      string,
      (...args: unknown[]) => Promise<unknown>
    >;
    const original = target[method]!.bind(target);
    return vi.spyOn(target, method).mockImplementationOnce(async (...args: unknown[]) => {
      if (afterRunning) await original(...args);
      throw error();
    });
  }

  it('lost after a write went out: WRITE_OUTCOME_UNKNOWN (503), and a retry with the same episode completes it, once', async () => {
    const input = {
      episode: episode(null),
      facts: [fact('user', 'prefers', 'trains', { replaceExisting: true })],
    };
    const spy = failOnce('facts', 'insertMany', lost, true);
    const { status, body } = await record('outcomes', input);
    spy.mockRestore();
    expect(status).toBe(503);
    expect(body.data).toBeNull();
    expect(body.errors?.[0]?.extensions?.code).toBe('WRITE_OUTCOME_UNKNOWN');
    expect(body.errors?.[0]?.message).toMatch(
      /may or may not have been done\. Retrying it with the same id is safe/,
    );
    // No episodeId was sent: the retry is the same episode all the same.
    const retry = await recorded('outcomes', input);
    expect(retry).toMatchObject({ alreadyRecorded: false, outcome: 'COMPLETED' });
    expect((await recorded('outcomes', input)).outcome).toBe('ALREADY_RECORDED');
    const live = await t.graphql(RecordEpisodeLiveFactsDocument, { dataset: 'outcomes' }, writer);
    expect(live.body.data!.dataset!.facts.edges.map((e) => e.node.object)).toEqual(['trains']);
  });

  it('a command failed by the database after a write went out: WRITE_OUTCOME_UNKNOWN, and the retry completes it', async () => {
    // What the embedded FerretDB answers when SQLite fails in the middle of a command.
    const internal = () =>
      new MongoServerError({
        ok: 0,
        code: 1,
        codeName: 'InternalError',
        errmsg: 'interrupted (9)',
      });
    const input = { episode: episode(), facts: [fact('user', 'prefers', 'ferries')] };
    const spy = failOnce('facts', 'insertMany', internal, true);
    const { status, body } = await record('outcomes internal', input);
    spy.mockRestore();
    expect(status).toBe(503);
    expect(body.errors?.[0]?.extensions?.code).toBe('WRITE_OUTCOME_UNKNOWN');
    expect(JSON.stringify(body)).not.toContain('interrupted');
    const retry = await recorded('outcomes internal', input);
    expect(retry).toMatchObject({ alreadyRecorded: false, outcome: 'COMPLETED' });
  });

  it('lost at the claim itself (it may have been written): WRITE_OUTCOME_UNKNOWN', async () => {
    const input = { episode: episode(), facts: [fact('user', 'prefers', 'buses')] };
    const spy = failOnce('episodeRecords', 'insertOne', lost, false);
    const { status, body } = await record('outcomes claim', input);
    spy.mockRestore();
    expect(status).toBe(503);
    expect(body.errors?.[0]?.extensions?.code).toBe('WRITE_OUTCOME_UNKNOWN');
    // It was not: the retry records it.
    expect((await recorded('outcomes claim', input)).outcome).toBe('RECORDED');
  });

  it('no server for the first write (nothing was sent): DATABASE_UNAVAILABLE, nothing written', async () => {
    const input = { episode: episode(), facts: [fact('user', 'prefers', 'bikes')] };
    const before = await snapshot();
    const spy = failOnce('episodeRecords', 'insertOne', noServer, false);
    const { status, body } = await record('outcomes none', input);
    spy.mockRestore();
    expect(status).toBe(503);
    expect(body.errors?.[0]?.extensions?.code).toBe('DATABASE_UNAVAILABLE');
    expect(await snapshot()).toEqual(before);
  });

  it('a soft delete lost after its claim: WRITE_OUTCOME_UNKNOWN in GraphQL and in Memory Soda’s shape; the retry deletes it once', async () => {
    const [target] = (
      await recorded('outcomes delete', {
        episode: episode(),
        facts: [fact('user', 'owns', 'a kite')],
      })
    ).facts;
    const spy = failOnce('factRecords', 'insertOne', lost, true);
    const response = await t.request(
      `/v1/memory/semantic/datasets/${encodeURIComponent('outcomes delete')}/facts/${target!.factId}`,
      { method: 'DELETE', key: writer },
    );
    spy.mockRestore();
    expect(response.status).toBe(503);
    expect(await response.json()).toEqual({
      error: expect.stringMatching(
        /^The database stopped answering or failed after this write began/,
      ),
    });
    // The delete was recorded: the retry (or the start-up repair) materialises it, and says it is gone.
    const retry = await t.request(
      `/v1/memory/semantic/datasets/${encodeURIComponent('outcomes delete')}/facts/${target!.factId}`,
      { method: 'DELETE', key: writer },
    );
    expect(retry.status).toBe(404);
  });
});

describe('scopes and tenancy', () => {
  const input = () => ({ episode: episode(), facts: [fact('user', 'likes', 'scopes')] });

  it('no key: 401 and nothing written', async () => {
    const before = await snapshot();
    const { status, body } = await record(DATASET, input(), null);
    expect(status).toBe(401);
    expect(body.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    expect(await snapshot()).toEqual(before);
  });

  it('a read-only key: FORBIDDEN and nothing written', async () => {
    const before = await snapshot();
    const { status, body } = await record(DATASET, input(), reader);
    expect(status).toBe(403);
    expect(body.data).toBeUndefined();
    expect(body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect(body.errors?.[0]?.message).toMatch(
      /^This operation needs the write scope \(for Mutation\.recordEpisode\)/,
    );
    expect(await snapshot()).toEqual(before);
  });

  it('a key with only the write scope records and reads back ids; a selection of content is refused whole and writes nothing', async () => {
    const ids = await t.graphql(
      RecordEpisodeIdsDocument,
      { dataset: 'write-only', input: input() },
      writeOnly,
    );
    expect(ids.body.errors).toBeUndefined();
    const result = ids.body.data!.recordEpisode;
    expect(result.alreadyRecorded).toBe(false);
    expect(result.facts).toHaveLength(1);
    // The full payload (episode text, facts' content) needs read: refused before anything ran.
    const before = await snapshot();
    const full = await record('write-only-full', input(), writeOnly);
    expect(full.status).toBe(403);
    expect(full.body.data).toBeUndefined();
    expect(full.body.errors?.map((e) => e.extensions?.code)).toEqual(['FORBIDDEN']);
    expect(full.body.errors?.[0]?.message).toMatch(
      /^This operation needs the read scope \(for Episode\.dataset, /,
    );
    expect(await snapshot()).toEqual(before);
    const { body } = await t.graphql(
      RecordEpisodeLiveFactsDocument,
      { dataset: 'write-only' },
      writer,
    );
    expect(body.data!.dataset!.facts.edges.map((e) => e.node.factId)).toEqual([
      result.facts[0]!.factId,
    ]);
  });

  it("recording with workspace B's key into a dataset name A also has never touches A", async () => {
    const acmeDocs = {
      $or: [{ workspaceId: workspaceIdFor('acme') }, { _id: workspaceIdFor('acme') }],
    };
    const before = await snapshot(acmeDocs);
    const result = await recorded(
      DATASET,
      {
        episode: episode(),
        entities: [{ name: 'Toyota Corolla Hybrid', type: 'THING' }],
        facts: [
          fact('user', 'is interested in', 'bicycles', { replaceExisting: true }),
          fact('user', 'owns', 'a bicycle', { supersedes: [DEMO.facts.familyCar] }),
        ],
      },
      globexWriter,
    );
    // Globex's own copies of the demo facts were superseded ...
    expect([...result.supersededIds].sort()).toEqual(
      [DEMO.facts.familyCar, DEMO.facts.toyotaInterest].sort(),
    );
    expect(await readFact(DATASET, DEMO.facts.toyotaInterest, globexWriter)).toMatchObject({
      supersededBy: { factId: result.facts[0]!.factId },
    });
    // ... and nothing of acme's changed.
    expect(await snapshot(acmeDocs)).toEqual(before);
    expect(await readFact(DATASET, result.facts[0]!.factId, writer)).toBeNull();
  });
});
