import { beforeAll, describe, expect, it } from 'vitest';
import {
  EntitiesDocument,
  EntityWithFactsDocument,
  EpisodesDocument,
  FactDetailDocument,
  FactsDocument,
  type FactsQueryVariables,
  MemoriesDocument,
  NodeDocument,
  ViewerDocument,
} from '../generated/operations.js';
import { DEMO } from '../helpers/demo.js';
import { clockFrom, openTestGateway, type TestGateway } from '../helpers/gateway.js';

const DATASET = 'user_42';

let t: TestGateway;
let key: string;

beforeAll(async () => {
  // The expectations are the demo's states on this date (the test drive still ahead).
  t = await openTestGateway({
    demoWorkspaces: ['acme'],
    gateway: { clock: clockFrom('2026-12-01T00:00:00Z') },
  });
  key = await t.key('acme', ['read']);
});

async function factIds(variables: Partial<FactsQueryVariables>): Promise<string[]> {
  const { body } = await t.graphql(FactsDocument, { dataset: DATASET, ...variables }, key);
  expect(body.errors).toBeUndefined();
  const facts = body.data!.dataset!.facts;
  expect(facts.totalCount).toBe(facts.edges.length);
  return facts.edges.map((e) => e.node.factId);
}

describe('Dataset.facts on the two time axes', () => {
  it('defaults to the facts live now, validAt descending with factId breaking ties', async () => {
    expect(await factIds({})).toEqual([
      DEMO.facts.toyotaInterest,
      DEMO.facts.familyCar,
      DEMO.facts.hondaMadeBy,
    ]);
  });

  it('includeInvalidated returns every fact whatever its state', async () => {
    expect(await factIds({ includeInvalidated: true })).toEqual([
      DEMO.facts.testDrive,
      DEMO.facts.toyotaInterest,
      DEMO.facts.budget,
      DEMO.facts.hondaInterestUntilToyota,
      DEMO.facts.familyCar,
      DEMO.facts.hondaInterest,
      DEMO.facts.hondaMadeBy,
      DEMO.facts.livesInBerlin,
    ]);
  });

  it('asOf is what was believed true then, on both axes, and overrides includeInvalidated', async () => {
    const believed = [
      DEMO.facts.budget,
      DEMO.facts.familyCar,
      DEMO.facts.hondaInterest,
      DEMO.facts.hondaMadeBy,
      DEMO.facts.livesInBerlin,
    ];
    expect(await factIds({ asOf: '2026-06-01' })).toEqual(believed);
    expect(await factIds({ asOf: '2026-06-01T00:00:00Z', includeInvalidated: true })).toEqual(
      believed,
    );
  });

  it('validAt alone is corrected history: valid then, as known now', async () => {
    // The Honda interest was true in June: as known now, through its corrected version,
    // which ends where the Toyota interest began.
    expect(await factIds({ validAt: '2026-06-01' })).toEqual([
      DEMO.facts.budget,
      DEMO.facts.hondaInterestUntilToyota,
      DEMO.facts.familyCar,
      DEMO.facts.hondaMadeBy,
    ]);
  });

  it('knownAt alone is audit: what the store believed then about now', async () => {
    expect(await factIds({ knownAt: '2026-06-01' })).toEqual([
      DEMO.facts.familyCar,
      DEMO.facts.hondaInterest,
      DEMO.facts.hondaMadeBy,
      DEMO.facts.livesInBerlin,
    ]);
  });

  it('validAt and knownAt together equal asOf when equal, and differ otherwise', async () => {
    expect(await factIds({ validAt: '2026-06-01', knownAt: '2026-06-01' })).toEqual(
      await factIds({ asOf: '2026-06-01' }),
    );
    // Valid in July as believed in June: Berlin was still believed then.
    expect(await factIds({ validAt: '2026-07-15', knownAt: '2026-06-01' })).toContain(
      DEMO.facts.livesInBerlin,
    );
    // Valid in June as believed in July: Berlin had been deleted by then.
    expect(await factIds({ validAt: '2026-06-01', knownAt: '2026-07-15' })).not.toContain(
      DEMO.facts.livesInBerlin,
    );
  });

  it('episodeId returns everything the episode produced, unless asOf is given', async () => {
    expect(await factIds({ episodeId: DEMO.episodes.hondaCivic })).toEqual([
      DEMO.facts.budget,
      DEMO.facts.hondaInterestUntilToyota,
      DEMO.facts.familyCar,
      DEMO.facts.hondaInterest,
      DEMO.facts.hondaMadeBy,
    ]);
    expect(await factIds({ episodeId: DEMO.episodes.hondaCivic.toUpperCase() })).toHaveLength(5);
    expect(await factIds({ episodeId: DEMO.episodes.hondaCivic, asOf: '2026-09-15' })).toEqual([
      DEMO.facts.familyCar,
      DEMO.facts.hondaMadeBy,
    ]);
    expect(await factIds({ episodeId: '00000000-0000-4000-8000-000000000000' })).toEqual([]);
  });

  it('states filters on the state now, over the full history', async () => {
    expect(await factIds({ states: ['SUPERSEDED'] })).toEqual([
      DEMO.facts.hondaInterest,
      DEMO.facts.livesInBerlin,
    ]);
    expect(await factIds({ states: ['FUTURE'] })).toEqual([DEMO.facts.testDrive]);
    expect(await factIds({ states: ['EXPIRED'] })).toEqual([
      DEMO.facts.budget,
      DEMO.facts.hondaInterestUntilToyota,
    ]);
    expect(await factIds({ states: ['LIVE', 'FUTURE'] })).toEqual([
      DEMO.facts.testDrive,
      DEMO.facts.toyotaInterest,
      DEMO.facts.familyCar,
      DEMO.facts.hondaMadeBy,
    ]);
  });

  it('q matches whole words in any order, case-insensitively, ignoring punctuation', async () => {
    expect(await factIds({ q: 'CAR' })).toEqual([DEMO.facts.familyCar]);
    expect(await factIds({ q: 'interested, USER!' })).toEqual([DEMO.facts.toyotaInterest]);
    expect(await factIds({ q: 'interested user', includeInvalidated: true })).toEqual([
      DEMO.facts.toyotaInterest,
      DEMO.facts.hondaInterestUntilToyota,
      DEMO.facts.hondaInterest,
    ]);
    expect(await factIds({ q: 'ca' })).toEqual([]);
    expect(await factIds({ q: 'car toyota' })).toEqual([]);
    expect(await factIds({ q: '!!!' })).toHaveLength(3);
  });

  it('q of 1000 characters is accepted and of 1001 is a BAD_USER_INPUT naming q', async () => {
    expect(await factIds({ q: 'a'.repeat(1000) })).toEqual([]);
    const { status, body } = await t.graphql(
      FactsDocument,
      { dataset: DATASET, q: 'a'.repeat(1001) },
      key,
    );
    expect(status).toBe(200);
    expect(body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(body.errors?.[0]?.message).toMatch(/q: must be at most 1000 characters/);
  });
});

describe('Fact.state at its boundaries', () => {
  const stateAt = async (factId: string, at: string) => {
    const { body } = await t.graphql(
      FactsDocument,
      { dataset: DATASET, includeInvalidated: true, stateAt: at },
      key,
    );
    return body.data!.dataset!.facts.edges.find((e) => e.node.factId === factId)!.node.state;
  };

  it('superseded from invalidAt on, live just before', async () => {
    expect(await stateAt(DEMO.facts.hondaInterest, '2026-08-16T09:14:06.000Z')).toBe('SUPERSEDED');
    expect(await stateAt(DEMO.facts.hondaInterest, '2026-08-16T09:14:05.999Z')).toBe('LIVE');
  });

  it('expired from validUntil on, live just before', async () => {
    expect(await stateAt(DEMO.facts.budget, '2026-09-01T00:00:00.000Z')).toBe('EXPIRED');
    expect(await stateAt(DEMO.facts.budget, '2026-08-31T23:59:59.999Z')).toBe('LIVE');
  });

  it('future until validAt, live from validAt on', async () => {
    expect(await stateAt(DEMO.facts.testDrive, '2035-01-15T09:59:59.999Z')).toBe('FUTURE');
    expect(await stateAt(DEMO.facts.testDrive, '2035-01-15T10:00:00.000Z')).toBe('LIVE');
    expect(await stateAt(DEMO.facts.testDrive, '2035-01-15T11:00:00+01:00')).toBe('LIVE');
  });

  it('superseded wins over expired and future', async () => {
    expect(await stateAt(DEMO.facts.livesInBerlin, '2030-01-01')).toBe('SUPERSEDED');
  });

  it('defaults to now', async () => {
    const { body } = await t.graphql(
      FactsDocument,
      { dataset: DATASET, includeInvalidated: true },
      key,
    );
    const states = Object.fromEntries(
      body.data!.dataset!.facts.edges.map((e) => [e.node.factId, e.node.state]),
    );
    expect(states).toEqual({
      [DEMO.facts.testDrive]: 'FUTURE',
      [DEMO.facts.toyotaInterest]: 'LIVE',
      [DEMO.facts.budget]: 'EXPIRED',
      [DEMO.facts.hondaInterestUntilToyota]: 'EXPIRED',
      [DEMO.facts.familyCar]: 'LIVE',
      [DEMO.facts.hondaInterest]: 'SUPERSEDED',
      [DEMO.facts.hondaMadeBy]: 'LIVE',
      [DEMO.facts.livesInBerlin]: 'SUPERSEDED',
    });
  });
});

describe('Fact fields and links', () => {
  it('carries every Memory Soda field in its documented form', async () => {
    const { body } = await t.graphql(FactsDocument, { dataset: DATASET, first: 1 }, key);
    expect(body.data!.dataset!.facts.edges[0]!.node).toMatchObject({
      factId: DEMO.facts.toyotaInterest,
      subject: 'user',
      predicate: 'is interested in',
      object: 'toyota corolla hybrid',
      objectIsEntity: true,
      confidence: 0.9,
      sourceQuote: 'yeah the corola hybrid looks great',
      validAt: '2026-08-16T09:14:02.000Z',
      validUntil: null,
      invalidAt: null,
      invalidReason: null,
      episodeId: DEMO.episodes.toyota,
      recordedAt: '2026-08-16T09:14:06.000Z',
      state: 'LIVE',
    });
  });

  it('links to its entities, episode, the fact that superseded it, and its history', async () => {
    const { body } = await t.graphql(
      FactDetailDocument,
      { dataset: DATASET, id: DEMO.facts.hondaInterest },
      key,
    );
    expect(body.errors).toBeUndefined();
    expect(body.data!.dataset!.fact).toEqual({
      factId: DEMO.facts.hondaInterest,
      state: 'SUPERSEDED',
      subjectEntity: { name: 'user', type: 'PERSON' },
      objectEntity: { name: 'honda civic', type: 'PRODUCT' },
      episode: {
        episodeId: DEMO.episodes.hondaCivic,
        content: expect.stringContaining('honda civic'),
      },
      supersededBy: { factId: DEMO.facts.toyotaInterest, object: 'toyota corolla hybrid' },
      history: [
        { factId: DEMO.facts.toyotaInterest, object: 'toyota corolla hybrid', state: 'LIVE' },
        // Its corrected version: true until the Toyota interest began, so expired now.
        { factId: DEMO.facts.hondaInterestUntilToyota, object: 'honda civic', state: 'EXPIRED' },
        { factId: DEMO.facts.hondaInterest, object: 'honda civic', state: 'SUPERSEDED' },
      ],
    });
  });

  it('an unknown fact id is null', async () => {
    const { body } = await t.graphql(
      FactDetailDocument,
      { dataset: DATASET, id: '00000000-0000-4000-8000-000000000000' },
      key,
    );
    expect(body.data!.dataset!.fact).toBeNull();
  });
});

describe('entities, episodes and memories', () => {
  it('lists entities by updatedAt descending, filters by type, and paginates', async () => {
    const { body } = await t.graphql(EntitiesDocument, { dataset: DATASET }, key);
    expect(body.data!.dataset!.entities.edges.map((e) => e.node.name)).toEqual([
      'user',
      'toyota corolla hybrid',
      'honda civic',
      'honda',
      'berlin',
    ]);
    const products = await t.graphql(EntitiesDocument, { dataset: DATASET, type: 'PRODUCT' }, key);
    expect(products.body.data!.dataset!.entities.totalCount).toBe(2);
    const page1 = await t.graphql(EntitiesDocument, { dataset: DATASET, first: 3 }, key);
    const conn = page1.body.data!.dataset!.entities;
    expect(conn.pageInfo.hasNextPage).toBe(true);
    const page2 = await t.graphql(
      EntitiesDocument,
      { dataset: DATASET, first: 3, after: conn.pageInfo.endCursor },
      key,
    );
    expect(page2.body.data!.dataset!.entities.edges.map((e) => e.node.name)).toEqual([
      'honda',
      'berlin',
    ]);
    expect(page2.body.data!.dataset!.entities.pageInfo.hasNextPage).toBe(false);
  });

  it('finds an entity by name case-insensitively but exactly, with its facts per temporal argument', async () => {
    const get = async (name: string, extra: { asOf?: string; includeInvalidated?: boolean } = {}) =>
      (await t.graphql(EntityWithFactsDocument, { dataset: DATASET, name, ...extra }, key)).body
        .data!.dataset!.entity;
    expect((await get('Honda Civic'))?.facts.map((f) => f.factId)).toEqual([
      DEMO.facts.hondaMadeBy,
    ]);
    expect(await get('hond')).toBeNull();
    expect(
      (await get('honda civic', { includeInvalidated: true }))?.facts.map((f) => f.factId),
    ).toEqual([
      DEMO.facts.hondaInterestUntilToyota,
      DEMO.facts.hondaInterest,
      DEMO.facts.hondaMadeBy,
    ]);
    expect((await get('HONDA CIVIC', { asOf: '2026-06-01' }))?.facts.map((f) => f.factId)).toEqual([
      DEMO.facts.hondaInterest,
      DEMO.facts.hondaMadeBy,
    ]);
  });

  describe('Entity.facts on the two time axes (the same rule as Dataset.facts)', () => {
    type TimeArgs = {
      asOf?: string;
      validAt?: string;
      knownAt?: string;
      includeInvalidated?: boolean;
    };
    const entityFacts = async (name: string, args: TimeArgs = {}) => {
      const { body } = await t.graphql(
        EntityWithFactsDocument,
        { dataset: DATASET, name, ...args },
        key,
      );
      expect(body.errors).toBeUndefined();
      return body.data!.dataset!.entity!.facts.map((f) => f.factId);
    };

    it('knownAt: what the store believed then (the Civic interest until its supersede)', async () => {
      const believed = [DEMO.facts.hondaInterest, DEMO.facts.hondaMadeBy];
      expect(await entityFacts('honda civic', { knownAt: '2026-06-01' })).toEqual(believed);
      expect(await entityFacts('honda civic', { knownAt: '2026-08-16T09:14:05.999Z' })).toEqual(
        believed,
      );
      // invalidAt <= K: superseded at that instant, no longer believed.
      expect(await entityFacts('honda civic', { knownAt: '2026-08-16T09:14:06Z' })).toEqual([
        DEMO.facts.hondaMadeBy,
      ]);
      expect(await entityFacts('honda civic', { knownAt: '2026-08-17' })).toEqual([
        DEMO.facts.hondaMadeBy,
      ]);
      // Not yet recorded.
      expect(await entityFacts('honda civic', { knownAt: '2026-05-10T18:30:03Z' })).toEqual([]);
      // The deleted fact, until its delete.
      expect(await entityFacts('berlin', { knownAt: '2026-06-30' })).toEqual([
        DEMO.facts.livesInBerlin,
      ]);
      expect(await entityFacts('berlin', { knownAt: '2026-07-01T10:00:00Z' })).toEqual([]);
    });

    it('validAt: what we now know was true then (the value that changed, until it changed)', async () => {
      // Valid on 1 June, superseded since by the Corolla interest (from 16 August): as known
      // now, true until then, through its corrected version.
      expect(await entityFacts('honda civic', { validAt: '2026-06-01' })).toEqual([
        DEMO.facts.hondaInterestUntilToyota,
        DEMO.facts.hondaMadeBy,
      ]);
      expect(await entityFacts('honda civic', { validAt: '2026-09-01' })).toEqual([
        DEMO.facts.hondaMadeBy,
      ]);
      // Before either became valid.
      expect(await entityFacts('honda civic', { validAt: '2026-05-01' })).toEqual([]);
      // The Corolla interest, valid since 16 August; the test drive only from 2035.
      expect(await entityFacts('toyota corolla hybrid', { validAt: '2026-09-01' })).toEqual([
        DEMO.facts.toyotaInterest,
      ]);
      expect(await entityFacts('toyota corolla hybrid', { validAt: '2035-02-01' })).toEqual([
        DEMO.facts.testDrive,
        DEMO.facts.toyotaInterest,
      ]);
    });

    it('validAt and knownAt together: believed true at T as known at K', async () => {
      expect(
        await entityFacts('honda civic', { validAt: '2026-06-01', knownAt: '2026-07-01' }),
      ).toEqual([DEMO.facts.hondaInterest, DEMO.facts.hondaMadeBy]);
      expect(
        await entityFacts('honda civic', { validAt: '2026-06-01', knownAt: '2026-09-01' }),
      ).toEqual([DEMO.facts.hondaInterestUntilToyota, DEMO.facts.hondaMadeBy]);
      expect(
        await entityFacts('honda civic', { validAt: '2026-05-01', knownAt: '2026-07-01' }),
      ).toEqual([]);
      // Known in September, the test drive is valid in 2035 but not yet in 2026.
      expect(
        await entityFacts('toyota corolla hybrid', {
          validAt: '2026-09-01',
          knownAt: '2026-09-01',
        }),
      ).toEqual([DEMO.facts.toyotaInterest]);
    });

    it('asOf sets both axes and overrides validAt, knownAt and includeInvalidated', async () => {
      const asOf = await entityFacts('honda civic', { asOf: '2026-06-01' });
      expect(asOf).toEqual([DEMO.facts.hondaInterest, DEMO.facts.hondaMadeBy]);
      expect(
        await entityFacts('honda civic', {
          asOf: '2026-06-01',
          validAt: '2026-05-01',
          knownAt: '2026-09-01',
          includeInvalidated: true,
        }),
      ).toEqual(asOf);
      expect(
        await entityFacts('honda civic', { validAt: '2026-06-01', knownAt: '2026-06-01' }),
      ).toEqual(asOf);
    });

    it('includeInvalidated applies only without a time argument', async () => {
      expect(await entityFacts('honda civic', { includeInvalidated: true })).toEqual([
        DEMO.facts.hondaInterestUntilToyota,
        DEMO.facts.hondaInterest,
        DEMO.facts.hondaMadeBy,
      ]);
      expect(
        await entityFacts('honda civic', { validAt: '2026-06-01', includeInvalidated: true }),
      ).toEqual([DEMO.facts.hondaInterestUntilToyota, DEMO.facts.hondaMadeBy]);
      expect(
        await entityFacts('honda civic', { knownAt: '2026-08-17', includeInvalidated: true }),
      ).toEqual([DEMO.facts.hondaMadeBy]);
    });

    it("answers every selection as Dataset.facts does, for every entity's facts", async () => {
      const selections: TimeArgs[] = [
        {},
        { includeInvalidated: true },
        { asOf: '2026-06-01' },
        { validAt: '2026-06-01' },
        { validAt: '2026-09-15' },
        { knownAt: '2026-06-01' },
        { knownAt: '2026-08-16T09:14:06Z' },
        { validAt: '2026-06-01', knownAt: '2026-07-15' },
        { validAt: '2035-02-01', knownAt: '2026-09-01' },
        { asOf: '2026-07-15', validAt: '2026-05-01', knownAt: '2026-12-01' },
        { knownAt: '2026-06-01', includeInvalidated: true },
      ];
      const names = ['user', 'honda civic', 'honda', 'berlin', 'toyota corolla hybrid'];
      for (const args of selections) {
        const { body } = await t.graphql(
          FactsDocument,
          { dataset: DATASET, first: 100, ...args },
          key,
        );
        expect(body.errors).toBeUndefined();
        const all = body.data!.dataset!.facts.edges.map((e) => e.node);
        for (const name of names) {
          const expected = all
            .filter((f) => [f.subject, f.object].some((s) => s.toLowerCase() === name))
            .map((f) => f.factId);
          expect({ name, args, facts: await entityFacts(name, args) }).toEqual({
            name,
            args,
            facts: expected,
          });
        }
      }
    });
  });

  it('lists episodes newest first with everything each produced', async () => {
    const { body } = await t.graphql(EpisodesDocument, { dataset: DATASET }, key);
    const episodes = body.data!.dataset!.episodes;
    expect(episodes.totalCount).toBe(3);
    expect(episodes.edges.map((e) => e.node.occurredAt)).toEqual([
      '2026-08-16T09:14:02.000Z',
      '2026-05-10T18:30:00.000Z',
      '2026-04-01T08:00:00.000Z',
    ]);
    expect(episodes.edges[1]!.node.facts.map((f) => f.factId)).toEqual([
      DEMO.facts.budget,
      DEMO.facts.hondaInterestUntilToyota,
      DEMO.facts.familyCar,
      DEMO.facts.hondaInterest,
      DEMO.facts.hondaMadeBy,
    ]);
    expect(body.data!.dataset!.episode?.episodeId).toBe(DEMO.episodes.toyota);
  });

  it("memories: live view, includeArchived, and asOf with today's metadata", async () => {
    const texts = async (v: { includeArchived?: boolean; asOf?: string }) =>
      (
        await t.graphql(MemoriesDocument, { dataset: DATASET, ...v }, key)
      ).body.data!.dataset!.memories.edges.map((e) => e.node.text);
    expect(await texts({})).toEqual([
      'The user is interested in a Toyota Corolla Hybrid.',
      'The user prefers short, direct answers.',
    ]);
    expect(await texts({ includeArchived: true })).toEqual([
      'The user is interested in a Toyota Corolla Hybrid.',
      'The user lives in Berlin.',
      'The user prefers short, direct answers.',
    ]);
    expect(await texts({ asOf: '2026-06-01T00:00:00Z' })).toEqual([
      'The user is considering a Honda Civic.',
      'The user prefers short, direct answers.',
    ]);
    expect(await texts({ asOf: '2026-06-01T00:00:00Z', includeArchived: true })).toEqual([
      'The user is considering a Honda Civic.',
      'The user lives in Berlin.',
      'The user prefers short, direct answers.',
    ]);
  });
});

describe('Node interface', () => {
  it('every node type round-trips through node(id)', async () => {
    const facts = await t.graphql(FactsDocument, { dataset: DATASET, first: 1 }, key);
    const entity = await t.graphql(EntitiesDocument, { dataset: DATASET, first: 1 }, key);
    for (const [id, typename] of [
      [facts.body.data!.dataset!.facts.edges[0]!.node.id, 'Fact'],
      [entity.body.data!.dataset!.entities.edges[0]!.node.id, 'Entity'],
    ] as const) {
      const { body } = await t.graphql(NodeDocument, { id }, key);
      expect(body.data!.node).toMatchObject({ __typename: typename, id });
    }
  });

  it('a malformed global id is a BAD_USER_INPUT, never a crash', async () => {
    const { status, body } = await t.graphql(NodeDocument, { id: 'not-a-global-id' }, key);
    expect(status).toBe(200);
    expect(body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(body.errors?.[0]?.message).toMatch(/Invalid global ID/);
  });

  it('a well-formed global id of nothing, or of an unknown dataset, is null', async () => {
    const id = Buffer.from('Fact:["user_42","00000000-0000-4000-8000-000000000000"]').toString(
      'base64',
    );
    expect((await t.graphql(NodeDocument, { id }, key)).body.data!.node).toBeNull();
    const odd = Buffer.from('Fact:garbage').toString('base64');
    expect((await t.graphql(NodeDocument, { id: odd }, key)).body.data!.node).toBeNull();
  });
});

describe('viewer', () => {
  it("shows the key's workspace and scopes", async () => {
    const { body } = await t.graphql(ViewerDocument, {}, key);
    expect(body.data!.viewer).toMatchObject({ workspace: 'acme', scopes: ['READ'] });
  });
});
