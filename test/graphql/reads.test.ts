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
} from '../../src/generated/operations.js';
import { clockFrom, openTestGateway, type TestGateway } from '../helpers/gateway.js';

const DATASET = 'user_42';
const TOYOTA = '3a91c6e8-0f2d-4b57-a8e3-5d1c9b7f2a40';
const HONDA_INTEREST = '4b8e2c6a-1d93-4e7f-b052-8c3a9d6e1f27';
const BERLIN = '7d3e9a1c-6b28-4f05-9e74-2a8c5d1b3f96';
const FAMILY_CAR = '6c1a8e3d-5f27-4b90-8d46-e2b7c9a5d138';
const BUDGET = '9e5d2b7f-3a61-4c08-a9e4-7f1b6d3c8a52';
const MADE_BY = '2f7c4e9a-8b13-4d65-9c2e-a5d8b1f63e70';
const TEST_DRIVE = '8a2d6f1e-4c79-4b3a-9e58-d7c2a1b6f094';
const EPISODE_MAY = '5c0d9e2a-7b41-4f3c-8e15-a9d2b6c47f30';

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
    expect(await factIds({})).toEqual([TOYOTA, FAMILY_CAR, MADE_BY]);
  });

  it('includeInvalidated returns every fact whatever its state', async () => {
    expect(await factIds({ includeInvalidated: true })).toEqual([
      TEST_DRIVE,
      TOYOTA,
      BUDGET,
      FAMILY_CAR,
      HONDA_INTEREST,
      MADE_BY,
      BERLIN,
    ]);
  });

  it('asOf is what was believed true then, on both axes, and overrides includeInvalidated', async () => {
    const believed = [BUDGET, FAMILY_CAR, HONDA_INTEREST, MADE_BY, BERLIN];
    expect(await factIds({ asOf: '2026-06-01' })).toEqual(believed);
    expect(await factIds({ asOf: '2026-06-01T00:00:00Z', includeInvalidated: true })).toEqual(
      believed,
    );
  });

  it('validAt alone is corrected history: valid then, as known now', async () => {
    expect(await factIds({ validAt: '2026-06-01' })).toEqual([BUDGET, FAMILY_CAR, MADE_BY]);
  });

  it('knownAt alone is audit: what the store believed then about now', async () => {
    expect(await factIds({ knownAt: '2026-06-01' })).toEqual([
      FAMILY_CAR,
      HONDA_INTEREST,
      MADE_BY,
      BERLIN,
    ]);
  });

  it('validAt and knownAt together equal asOf when equal, and differ otherwise', async () => {
    expect(await factIds({ validAt: '2026-06-01', knownAt: '2026-06-01' })).toEqual(
      await factIds({ asOf: '2026-06-01' }),
    );
    // Valid in July as believed in June: Berlin was still believed then.
    expect(await factIds({ validAt: '2026-07-15', knownAt: '2026-06-01' })).toContain(BERLIN);
    // Valid in June as believed in July: Berlin had been deleted by then.
    expect(await factIds({ validAt: '2026-06-01', knownAt: '2026-07-15' })).not.toContain(BERLIN);
  });

  it('episodeId returns everything the episode produced, unless asOf is given', async () => {
    expect(await factIds({ episodeId: EPISODE_MAY })).toEqual([
      BUDGET,
      FAMILY_CAR,
      HONDA_INTEREST,
      MADE_BY,
    ]);
    expect(await factIds({ episodeId: EPISODE_MAY.toUpperCase() })).toHaveLength(4);
    expect(await factIds({ episodeId: EPISODE_MAY, asOf: '2026-09-15' })).toEqual([
      FAMILY_CAR,
      MADE_BY,
    ]);
    expect(await factIds({ episodeId: '00000000-0000-4000-8000-000000000000' })).toEqual([]);
  });

  it('states filters on the state now, over the full history', async () => {
    expect(await factIds({ states: ['SUPERSEDED'] })).toEqual([HONDA_INTEREST, BERLIN]);
    expect(await factIds({ states: ['FUTURE'] })).toEqual([TEST_DRIVE]);
    expect(await factIds({ states: ['EXPIRED'] })).toEqual([BUDGET]);
    expect(await factIds({ states: ['LIVE', 'FUTURE'] })).toEqual([
      TEST_DRIVE,
      TOYOTA,
      FAMILY_CAR,
      MADE_BY,
    ]);
  });

  it('q matches whole words in any order, case-insensitively, ignoring punctuation', async () => {
    expect(await factIds({ q: 'CAR' })).toEqual([FAMILY_CAR]);
    expect(await factIds({ q: 'interested, USER!' })).toEqual([TOYOTA]);
    expect(await factIds({ q: 'interested user', includeInvalidated: true })).toEqual([
      TOYOTA,
      HONDA_INTEREST,
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
    expect(await stateAt(HONDA_INTEREST, '2026-08-16T09:14:06.000Z')).toBe('SUPERSEDED');
    expect(await stateAt(HONDA_INTEREST, '2026-08-16T09:14:05.999Z')).toBe('LIVE');
  });

  it('expired from validUntil on, live just before', async () => {
    expect(await stateAt(BUDGET, '2026-09-01T00:00:00.000Z')).toBe('EXPIRED');
    expect(await stateAt(BUDGET, '2026-08-31T23:59:59.999Z')).toBe('LIVE');
  });

  it('future until validAt, live from validAt on', async () => {
    expect(await stateAt(TEST_DRIVE, '2035-01-15T09:59:59.999Z')).toBe('FUTURE');
    expect(await stateAt(TEST_DRIVE, '2035-01-15T10:00:00.000Z')).toBe('LIVE');
    expect(await stateAt(TEST_DRIVE, '2035-01-15T11:00:00+01:00')).toBe('LIVE');
  });

  it('superseded wins over expired and future', async () => {
    expect(await stateAt(BERLIN, '2030-01-01')).toBe('SUPERSEDED');
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
      [TEST_DRIVE]: 'FUTURE',
      [TOYOTA]: 'LIVE',
      [BUDGET]: 'EXPIRED',
      [FAMILY_CAR]: 'LIVE',
      [HONDA_INTEREST]: 'SUPERSEDED',
      [MADE_BY]: 'LIVE',
      [BERLIN]: 'SUPERSEDED',
    });
  });
});

describe('Fact fields and links', () => {
  it('carries every Memory Soda field in its documented form', async () => {
    const { body } = await t.graphql(FactsDocument, { dataset: DATASET, first: 1 }, key);
    expect(body.data!.dataset!.facts.edges[0]!.node).toMatchObject({
      factId: TOYOTA,
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
      episodeId: '8b21f0c4-5d2e-4a7b-9c31-2f6e8d4a1b07',
      recordedAt: '2026-08-16T09:14:06.000Z',
      state: 'LIVE',
    });
  });

  it('links to its entities, episode, the fact that superseded it, and its history', async () => {
    const { body } = await t.graphql(
      FactDetailDocument,
      { dataset: DATASET, id: HONDA_INTEREST },
      key,
    );
    expect(body.errors).toBeUndefined();
    expect(body.data!.dataset!.fact).toEqual({
      factId: HONDA_INTEREST,
      state: 'SUPERSEDED',
      subjectEntity: { name: 'user', type: 'PERSON' },
      objectEntity: { name: 'honda civic', type: 'PRODUCT' },
      episode: { episodeId: EPISODE_MAY, content: expect.stringContaining('honda civic') },
      supersededBy: { factId: TOYOTA, object: 'toyota corolla hybrid' },
      history: [
        { factId: TOYOTA, object: 'toyota corolla hybrid', state: 'LIVE' },
        { factId: HONDA_INTEREST, object: 'honda civic', state: 'SUPERSEDED' },
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
    expect((await get('Honda Civic'))?.facts.map((f) => f.factId)).toEqual([MADE_BY]);
    expect(await get('hond')).toBeNull();
    expect(
      (await get('honda civic', { includeInvalidated: true }))?.facts.map((f) => f.factId),
    ).toEqual([HONDA_INTEREST, MADE_BY]);
    expect((await get('HONDA CIVIC', { asOf: '2026-06-01' }))?.facts.map((f) => f.factId)).toEqual([
      HONDA_INTEREST,
      MADE_BY,
    ]);
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
      BUDGET,
      FAMILY_CAR,
      HONDA_INTEREST,
      MADE_BY,
    ]);
    expect(body.data!.dataset!.episode?.episodeId).toBe('8b21f0c4-5d2e-4a7b-9c31-2f6e8d4a1b07');
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
