import { Kind, parse } from 'graphql';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseApiKey } from '../../src/domain/apiKey.js';
import type { Collections } from '../../src/store/collections.js';
import { openTestGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * Tenant isolation: workspace "alpha" holds the demo dataset `user_42` plus data added
 * through `recordEpisode` and `createMemory` (in `user_42` and in `alpha_private`);
 * workspace "beta" holds its own, different data, in a dataset that is also called
 * `user_42` (so the Dataset fields run for beta on a name alpha uses too) and in
 * `beta_only`. Beta's admin key then calls every REST route and every GraphQL Query,
 * Dataset and Mutation field with alpha's dataset names, fact ids, episode ids, memory
 * ids, entity names and global node ids. Beta must see nothing of alpha (nulls, empty
 * lists, NOT_FOUND, zero counts; nothing of alpha's anywhere in a response's data), and
 * alpha's stored documents must be exactly what they were. The last tests check that
 * the calls covered every field of the schema (by introspection) and every REST route
 * (from the OpenAPI document).
 */

const BASE = '/v1/memory/semantic';
const ALPHA_EPISODE = '0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d';
const ALPHA_PRIVATE_EPISODE = '1b2c3d4e-5f6a-4b7c-8d9e-0f1a2b3c4d5e';
const ZERO_COUNTS = { facts: 0, entities: 0, episodes: 0, memories: 0, restoredFacts: 0 };

interface GraphqlBody {
  data?: Record<string, unknown> | null;
  errors?: { message: string; extensions?: { code?: string } }[];
}

let t: TestGateway;
let alphaKey: string;
let betaKey: string;
let alphaWorkspaceId: string;
let betaWorkspaceId: string;

/** Alpha's documents, public ids, texts and global ids, read from the store. */
const alpha = {
  datasets: [] as string[],
  facts: [] as { dataset: string; factId: string; invalidReason: string | null }[],
  entities: [] as { dataset: string; entityId: string; name: string }[],
  episodes: [] as { dataset: string; episodeId: string; content: string }[],
  memories: [] as {
    dataset: string;
    memoryId: string;
    text: string;
    version: number;
    archivedAt: Date | null;
    validUntil: Date | null;
    pinned: boolean;
  }[],
  /** Strings only alpha's data contains: a response to beta must not contain any. */
  markers: [] as string[],
};
let alphaBefore: unknown;
let betaOwn: { facts: string[]; entities: string[]; episodes: string[]; memories: string[] };

const globalId = (type: string, key: string) => Buffer.from(`${type}:${key}`).toString('base64');
const nodeKey = (dataset: string, id: string) => JSON.stringify([dataset, id]);

async function graphql(key: string, query: string, variables: Record<string, unknown> = {}) {
  const response = await t.request('/graphql', {
    method: 'POST',
    key,
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  return { status: response.status, body: (await response.json()) as GraphqlBody };
}

/** Alpha's own calls: they must succeed. */
// biome-ignore lint/suspicious/noExplicitAny: a response's data, read by the test as it expects it
async function asAlpha(query: string, variables: Record<string, unknown> = {}): Promise<any> {
  const { status, body } = await graphql(alphaKey, query, variables);
  expect(body.errors, JSON.stringify(body.errors)).toBeUndefined();
  expect(status).toBe(200);
  return body.data;
}

const betaDocuments: string[] = [];
const betaRestCalls: { method: string; path: string }[] = [];

/** Beta's calls: recorded for the coverage check; never a 5xx. */
async function asBeta(query: string, variables: Record<string, unknown> = {}) {
  betaDocuments.push(query);
  const result = await graphql(betaKey, query, variables);
  expect(result.status, JSON.stringify(result.body)).toBeLessThan(500);
  return result;
}

interface RecallIds {
  recall: {
    facts: { fact: { factId: string } }[];
    memories: { memory: { memoryId: string } }[];
  };
}

async function betaRest(method: string, path: string, body?: unknown) {
  betaRestCalls.push({ method, path: new URL(`http://x${path}`).pathname });
  const response = await t.request(path, {
    method,
    key: betaKey,
    ...(body === undefined
      ? {}
      : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  expect(response.status).toBeLessThan(500);
  return { status: response.status, body: (await response.json()) as unknown };
}

/** No alpha-only string anywhere in `value` (except what the request itself supplied). */
function expectNothingOfAlpha(value: unknown, supplied: string[] = []) {
  const text = JSON.stringify(value ?? null).toLowerCase();
  const leaked = alpha.markers.filter(
    (m) => !supplied.some((s) => s.toLowerCase().includes(m)) && text.includes(m),
  );
  expect(leaked, `alpha's data in a response to beta: ${text.slice(0, 500)}`).toEqual([]);
}

function expectCode(body: GraphqlBody, code: string) {
  expect(
    body.errors?.map((e) => e.extensions?.code),
    JSON.stringify(body),
  ).toEqual([code]);
}

/** Every document of the workspace, every collection, sorted by _id (dates as ISO). */
async function workspaceSnapshot(db: Collections, workspaceId: string) {
  const out: Record<string, string[]> = {};
  for (const [name, collection] of Object.entries(db)) {
    const filter = name === 'workspaces' ? { _id: workspaceId } : { workspaceId };
    const docs = await (collection as Collections['facts']).find(filter as never).toArray();
    out[name] = docs
      .map((d) =>
        JSON.stringify(d, function (this: Record<string, unknown>, key, value) {
          const raw = this[key];
          return raw instanceof Date ? { $date: raw.toISOString() } : value;
        }),
      )
      .sort();
  }
  return out;
}

const RECORD_EPISODE = `mutation Record($dataset: String!, $input: RecordEpisodeInput!) {
  recordEpisode(dataset: $dataset, input: $input) {
    alreadyRecorded supersededIds
    episode { episodeId dataset content }
    facts { factId subject predicate object }
    superseded { factId }
  }
}`;
const CREATE_MEMORY = `mutation Create($dataset: String!, $input: MemoryInput!) {
  createMemory(dataset: $dataset, input: $input) { memoryId workspaceId dataset text version pinned }
}`;
const MISO_INPUT = {
  episode: {
    episodeId: ALPHA_EPISODE,
    occurredAt: '2026-09-01T10:00:00Z',
    source: 'chat',
    content: 'user: I adopted a cat named Misozuke yesterday',
  },
  entities: [{ name: 'misozuke', type: 'THING' }],
  facts: [
    {
      subject: 'user',
      predicate: 'has a pet',
      object: 'misozuke',
      objectIsEntity: true,
      confidence: 0.9,
      sourceQuote: 'I adopted a cat named Misozuke',
    },
  ],
};

beforeAll(async () => {
  t = await openTestGateway({ demoWorkspaces: ['alpha'] });
  alphaKey = await t.key('alpha', ['read', 'write', 'admin']);
  betaKey = await t.key('beta', ['read', 'write', 'admin']);
  const db = t.database.collections;

  // Alpha's extra data, through the mutations.
  await asAlpha(RECORD_EPISODE, { dataset: 'user_42', input: MISO_INPUT });
  await asAlpha(RECORD_EPISODE, {
    dataset: 'alpha_private',
    input: {
      episode: {
        episodeId: ALPHA_PRIVATE_EPISODE,
        occurredAt: '2026-09-02T10:00:00Z',
        source: 'chat',
        content: 'user: my passport number is XQ7734521',
      },
      entities: [{ name: 'passport xq7734521', type: 'THING' }],
      facts: [
        {
          subject: 'user',
          predicate: 'has passport',
          object: 'passport xq7734521',
          objectIsEntity: true,
          confidence: 1,
        },
      ],
    },
  });
  await asAlpha(CREATE_MEMORY, {
    dataset: 'alpha_private',
    input: {
      text: 'Alpha secret: the vault code is 0420-1337.',
      memoryKind: 'fact',
      scope: 'user',
      sourceType: 'conversation',
    },
  });
  await asAlpha(CREATE_MEMORY, {
    dataset: 'user_42',
    input: {
      text: 'The user adopted a cat called Misozuke.',
      memoryKind: 'fact',
      scope: 'user',
      sourceType: 'conversation',
      pinned: true,
    },
  });
  alphaWorkspaceId = (await asAlpha('{ viewer { workspaceId } }')).viewer.workspaceId;

  // Beta's own, different data: one dataset with alpha's name, one of its own.
  const betaRecord = await graphql(betaKey, RECORD_EPISODE, {
    dataset: 'user_42',
    input: {
      episode: { occurredAt: '2026-07-01T10:00:00Z', source: 'chat', content: 'user: zebras?' },
      entities: [
        { name: 'user', type: 'PERSON' },
        { name: 'zebra', type: 'THING' },
      ],
      facts: [
        {
          subject: 'user',
          predicate: 'is interested in',
          object: 'zebra',
          objectIsEntity: true,
          confidence: 0.5,
        },
      ],
    },
  });
  expect(betaRecord.body.errors).toBeUndefined();
  for (const [dataset, text] of [
    ['user_42', 'Beta note: zebras are striped.'],
    ['beta_only', 'Beta note: only beta has this dataset.'],
  ]) {
    const created = await graphql(betaKey, CREATE_MEMORY, {
      dataset,
      input: { text, memoryKind: 'fact', scope: 'user', sourceType: 'conversation' },
    });
    expect(created.body.errors).toBeUndefined();
  }
  betaWorkspaceId = (
    (await graphql(betaKey, '{ viewer { workspaceId } }')).body.data as never as {
      viewer: { workspaceId: string };
    }
  ).viewer.workspaceId;

  // Alpha's ids, texts and ids of every kind, from the store itself.
  const mine = { workspaceId: alphaWorkspaceId };
  alpha.datasets = (await db.datasets.find(mine).toArray()).map((d) => d.name).sort();
  alpha.facts = (await db.facts.find(mine).toArray()).map((f) => ({
    dataset: f.dataset,
    factId: f.factId,
    invalidReason: f.invalidReason,
  }));
  alpha.entities = (await db.entities.find(mine).toArray()).map((e) => ({
    dataset: e.dataset,
    entityId: e.entityId,
    name: e.name,
  }));
  alpha.episodes = (await db.episodes.find(mine).toArray()).map((e) => ({
    dataset: e.dataset,
    episodeId: e.episodeId,
    content: e.content,
  }));
  alpha.memories = (await db.memories.find(mine).toArray()).map((m) => ({
    dataset: m.dataset,
    memoryId: m.memoryId,
    text: m.text,
    version: m.version,
    archivedAt: m.archivedAt,
    validUntil: m.validUntil,
    pinned: m.pinned,
  }));
  const alphaFacts = await db.facts.find(mine).toArray();
  alpha.markers = [
    alphaWorkspaceId,
    ...alpha.facts.map((f) => f.factId),
    ...alpha.entities.map((e) => e.entityId),
    ...alpha.episodes.map((e) => e.episodeId),
    ...alpha.memories.map((m) => m.memoryId),
    ...alpha.episodes.map((e) => e.content),
    ...alpha.memories.map((m) => m.text),
    ...alphaFacts.flatMap((f) => [f.object, f.sourceQuote ?? '']),
    ...alpha.entities.map((e) => e.name),
    'alpha_private',
  ]
    .map((m) => m.toLowerCase())
    // 'user' is also beta's (an entity, and every fact's subject): not alpha-only.
    .filter((m) => m.length >= 5 && !['user'].includes(m));

  const betaDocs = { workspaceId: betaWorkspaceId };
  betaOwn = {
    facts: (await db.facts.find(betaDocs).toArray()).map((f) => f.factId),
    entities: (await db.entities.find(betaDocs).toArray()).map((e) => e.entityId),
    episodes: (await db.episodes.find(betaDocs).toArray()).map((e) => e.episodeId),
    memories: (await db.memories.find(betaDocs).toArray()).map((m) => m.memoryId),
  };
  alphaBefore = await workspaceSnapshot(db, alphaWorkspaceId);
});

describe("beta's admin key against alpha's data", () => {
  it('the fixture: alpha has demo and added data; beta has its own, under a shared name too', () => {
    expect(alpha.datasets).toEqual(['alpha_private', 'user_42']);
    expect(alpha.facts.length).toBe(10);
    expect(alpha.episodes.map((e) => e.episodeId)).toContain(ALPHA_EPISODE);
    expect(alpha.memories.length).toBe(6);
    expect(alpha.facts.some((f) => f.invalidReason === 'deleted')).toBe(true);
    expect(betaOwn.facts.length).toBe(1);
    expect(betaOwn.memories.length).toBe(2);
    for (const id of [...betaOwn.facts, ...betaOwn.entities, ...betaOwn.episodes]) {
      expect(alpha.markers).not.toContain(id);
    }
  });

  it('REST, Memory Soda: empty lists for alpha-only datasets, only beta’s own under a shared name, 404 on delete', async () => {
    for (const dataset of alpha.datasets) {
      const ds = encodeURIComponent(dataset);
      const queries = [
        '',
        '?includeInvalidated=true',
        '?asOf=2026-06-01',
        '?asOf=2026-09-05T00:00:00Z&includeInvalidated=true',
        ...alpha.episodes.map((e) => `?episodeId=${e.episodeId}`),
        ...alpha.episodes.map((e) => `?episodeId=${e.episodeId.toUpperCase()}&asOf=2026-09-05`),
        '?q=misozuke',
        '?q=passport',
        '?q=berlin&includeInvalidated=true',
      ];
      for (const q of queries) {
        const { status, body } = await betaRest('GET', `${BASE}/datasets/${ds}/facts${q}`);
        expect(status).toBe(200);
        expectNothingOfAlpha(body, [q]);
        const facts = (body as { facts: { factId: string }[] }).facts;
        expect(facts.every((f) => betaOwn.facts.includes(f.factId))).toBe(true);
        if (dataset !== 'user_42' || q.includes('episodeId') || q.includes('q=')) {
          expect(body).toEqual({ facts: [], total: 0 });
        }
      }
      const entities = await betaRest('GET', `${BASE}/datasets/${ds}/entities`);
      expect(entities.status).toBe(200);
      expectNothingOfAlpha(entities.body);
      if (dataset !== 'user_42') expect(entities.body).toEqual({ entities: [] });
    }
    for (const e of alpha.entities) {
      const { status, body } = await betaRest(
        'GET',
        `${BASE}/datasets/${encodeURIComponent(e.dataset)}/entities/${encodeURIComponent(e.name)}/facts`,
      );
      expect(status).toBe(200);
      expectNothingOfAlpha(body, [e.name]);
      // Beta has an entity called "user" in its own user_42: its facts are beta's only.
      if (e.name !== 'user') expect(body).toEqual({ facts: [] });
    }
    for (const f of alpha.facts) {
      for (const dataset of [f.dataset, ...alpha.datasets]) {
        const { status, body } = await betaRest(
          'DELETE',
          `${BASE}/datasets/${encodeURIComponent(dataset)}/facts/${f.factId}`,
        );
        expect({ status, body }).toEqual({ status: 404, body: { error: 'Fact not found' } });
      }
    }
  });

  it("REST, SupaCloud: /api/memories lists beta's memories only", async () => {
    for (const q of [
      '',
      '?include_archived=true',
      '?as_of=2026-09-05T00:00:00Z&include_archived=true',
    ]) {
      const { status, body } = await betaRest('GET', `/api/memories${q}`);
      expect(status).toBe(200);
      expectNothingOfAlpha(body);
      for (const m of body as { id: string; workspace_id: string }[]) {
        expect(m.workspace_id).toBe(betaWorkspaceId);
        expect(betaOwn.memories).toContain(m.id);
      }
    }
    const { body } = await betaRest('GET', '/api/memories?include_archived=true');
    expect((body as unknown[]).length).toBe(2);
  });

  it('GraphQL viewer, datasets, memories, allMemories: beta’s own only', async () => {
    const { body } = await asBeta(`{
      viewer { keyId workspaceId workspace scopes }
      datasets(first: 100) { totalCount edges { cursor node { id name createdAt } } }
      memories(first: 100, includeArchived: true) { totalCount edges { node { memoryId workspaceId dataset text } } }
      allMemories(includeArchived: true) { memoryId workspaceId dataset text }
    }`);
    expect(body.errors).toBeUndefined();
    expectNothingOfAlpha(body.data);
    const data = body.data as never as {
      viewer: { workspace: string; workspaceId: string };
      datasets: { totalCount: number; edges: { node: { name: string } }[] };
      memories: { totalCount: number; edges: { node: { memoryId: string } }[] };
      allMemories: { memoryId: string; workspaceId: string }[];
    };
    expect(data.viewer).toMatchObject({ workspace: 'beta', workspaceId: betaWorkspaceId });
    expect(data.datasets.edges.map((e) => e.node.name)).toEqual(['beta_only', 'user_42']);
    expect(data.datasets.totalCount).toBe(2);
    expect(data.memories.totalCount).toBe(2);
    expect(data.memories.edges.map((e) => e.node.memoryId).sort()).toEqual(
      [...betaOwn.memories].sort(),
    );
    expect(data.allMemories.map((m) => m.memoryId).sort()).toEqual([...betaOwn.memories].sort());
    // A second whole list is a second request: two in one operation are over the cost limit.
    const asOf = await asBeta(
      '{ allMemories(asOf: "2026-09-05", includeArchived: true) { memoryId workspaceId } }',
    );
    expect(asOf.body.errors).toBeUndefined();
    expectNothingOfAlpha(asOf.body.data);
  });

  it('GraphQL dataset(name): null for alpha-only names; every Dataset field on the shared name holds only beta’s', async () => {
    for (const name of alpha.datasets.filter((d) => d !== 'user_42')) {
      const { body } = await asBeta('query($name: String!) { dataset(name: $name) { id name } }', {
        name,
      });
      expect(body).toEqual({ data: { dataset: null } });
    }
    const lookups = async (dataset: string, variables: Record<string, unknown>) =>
      asBeta(
        `query Lookups($dataset: String!, $factId: ID!, $entity: String!, $episodeId: ID!) {
          dataset(name: $dataset) {
            fact(id: $factId) { factId }
            entity(name: $entity) { entityId name facts(includeInvalidated: true) { factId } }
            episode(id: $episodeId) { episodeId content facts { factId } }
          }
        }`,
        { dataset, ...variables },
      );
    for (const dataset of ['user_42']) {
      for (const f of alpha.facts) {
        const { body } = await lookups(dataset, {
          factId: f.factId,
          entity: 'zebra',
          episodeId: alpha.episodes[0]!.episodeId,
        });
        expect(body.errors).toBeUndefined();
        expect(
          (body.data as never as { dataset: { fact: unknown; episode: unknown } }).dataset,
        ).toMatchObject({
          fact: null,
          episode: null,
        });
        expectNothingOfAlpha(body.data, [f.factId, alpha.episodes[0]!.episodeId]);
      }
      for (const e of alpha.episodes) {
        const { body } = await lookups(dataset, {
          factId: alpha.facts[0]!.factId,
          entity: 'zebra',
          episodeId: e.episodeId,
        });
        expect(
          (body.data as never as { dataset: { episode: unknown } }).dataset.episode,
        ).toBeNull();
      }
      for (const e of alpha.entities) {
        const { body } = await lookups(dataset, {
          factId: alpha.facts[0]!.factId,
          entity: e.name,
          episodeId: alpha.episodes[0]!.episodeId,
        });
        expect(body.errors).toBeUndefined();
        expectNothingOfAlpha(body.data, [
          e.name,
          alpha.facts[0]!.factId,
          alpha.episodes[0]!.episodeId,
        ]);
        const entity = (
          body.data as never as {
            dataset: { entity: { entityId: string; facts: { factId: string }[] } | null };
          }
        ).dataset.entity;
        if (e.name === 'user') {
          expect(betaOwn.entities).toContain(entity?.entityId);
          expect(entity?.facts.every((f) => betaOwn.facts.includes(f.factId))).toBe(true);
        } else {
          expect(entity).toBeNull();
        }
      }
    }

    // Every other Dataset field, with alpha's ids as filters where the field takes one.
    for (const episode of alpha.episodes) {
      // In parts: all of it in one document is over the gateway's cost limit.
      const parts = [
        `id name createdAt
        facts(includeInvalidated: true) {
          totalCount edges { node { factId subject predicate object state } }
        }`,
        `histories: facts(includeInvalidated: true) { edges { node { history { factId } } } }`,
        `related: facts(includeInvalidated: true) {
          edges { node { supersededBy { factId } episode { episodeId content } } }
        }`,
        `entitiesOfFacts: facts(includeInvalidated: true) {
          edges { node { subjectEntity { entityId } objectEntity { entityId } } }
        }`,
        `byEpisode: facts(episodeId: $episodeId) { totalCount edges { node { factId } } }
        asOf: facts(asOf: "2026-06-01") { totalCount edges { node { factId } } }
        states: facts(states: [LIVE, SUPERSEDED, EXPIRED, FUTURE]) { totalCount }
        q1: facts(q: "berlin", includeInvalidated: true) { totalCount }
        q2: facts(q: "toyota", includeInvalidated: true) { totalCount }
        q3: facts(q: "misozuke", includeInvalidated: true) { totalCount }`,
        `entities { totalCount edges { node { entityId name facts { factId } } } }
        allEntities { entityId name }`,
        `episodes { totalCount edges { node { episodeId content facts { factId } } } }
        memories(includeArchived: true) { totalCount edges { node { memoryId text } } }`,
        `changes(first: 100) {
          totalCount
          edges { cursor node { id kind at fact { factId } episode { episodeId content } memory { memoryId text } } }
        }`,
      ];
      const merged: Record<string, unknown> = {};
      for (const part of parts) {
        const withEpisode = part.includes('$episodeId');
        const { body } = await asBeta(
          `query Part${withEpisode ? '($episodeId: ID!)' : ''} { dataset(name: "user_42") { ${part} } }`,
          withEpisode ? { episodeId: episode.episodeId } : {},
        );
        expect(body.errors, `${part.slice(0, 60)}: ${JSON.stringify(body.errors)}`).toBeUndefined();
        expectNothingOfAlpha(body.data, [episode.episodeId]);
        Object.assign(merged, (body.data as { dataset: Record<string, unknown> }).dataset);
      }
      const ds = merged as unknown as {
        facts: { totalCount: number };
        histories: { edges: { node: { history: { factId: string }[] } }[] };
        byEpisode: { totalCount: number };
        asOf: { totalCount: number };
        q1: { totalCount: number };
        q2: { totalCount: number };
        q3: { totalCount: number };
        entities: { edges: { node: { entityId: string } }[] };
        allEntities: { entityId: string }[];
        episodes: { edges: { node: { episodeId: string } }[] };
        memories: { edges: { node: { memoryId: string } }[] };
      };
      expect(ds.facts.totalCount).toBe(1);
      expect(ds.histories.edges[0]!.node.history.map((h) => h.factId)).toEqual(betaOwn.facts);
      expect(ds.byEpisode.totalCount).toBe(0);
      expect(ds.asOf.totalCount).toBe(0);
      expect([ds.q1.totalCount, ds.q2.totalCount, ds.q3.totalCount]).toEqual([0, 0, 0]);
      expect(ds.entities.edges.every((e) => betaOwn.entities.includes(e.node.entityId))).toBe(true);
      expect(ds.allEntities.every((e) => betaOwn.entities.includes(e.entityId))).toBe(true);
      expect(ds.episodes.edges.map((e) => e.node.episodeId)).toEqual(betaOwn.episodes);
      expect(ds.memories.edges.every((e) => betaOwn.memories.includes(e.node.memoryId))).toBe(true);
      // Beta's feed holds beta's changes only (alpha's writes went to alpha's feed).
      const changes = (
        merged as { changes: { edges: { node: { fact: { factId: string } | null } }[] } }
      ).changes.edges;
      for (const { node } of changes) {
        if (node.fact) expect(betaOwn.facts).toContain(node.fact.factId);
      }
    }
  });

  it('GraphQL node(id): null for every alpha global id (beta’s own where a name is shared)', async () => {
    const ids = [
      ...alpha.datasets.map((d) => ({ id: globalId('Dataset', d), shared: d === 'user_42' })),
      ...alpha.facts.map((f) => ({
        id: globalId('Fact', nodeKey(f.dataset, f.factId)),
        shared: false,
      })),
      ...alpha.episodes.map((e) => ({
        id: globalId('Episode', nodeKey(e.dataset, e.episodeId)),
        shared: false,
      })),
      ...alpha.memories.map((m) => ({
        id: globalId('Memory', nodeKey(m.dataset, m.memoryId)),
        shared: false,
      })),
      // An entity's global id is its dataset and name: beta's "user" in user_42 has the same one.
      ...alpha.entities.map((e) => ({
        id: globalId('Entity', nodeKey(e.dataset, e.name)),
        shared: e.dataset === 'user_42' && e.name === 'user',
      })),
    ];
    // The ids are real: alpha gets every one of them back, superseded memories included.
    for (const { id } of ids) {
      const seen = await asAlpha('query($id: ID!) { node(id: $id) { id } }', { id });
      expect(seen.node, Buffer.from(id, 'base64').toString()).toEqual({ id });
    }
    const own = (await asBeta('{ dataset(name: "user_42") { id name createdAt } }')).body.data as {
      dataset: unknown;
    };
    for (const { id, shared } of ids) {
      const { body } = await asBeta(
        `query Node($id: ID!) {
          node(id: $id) {
            id __typename
            ... on Dataset { name createdAt }
            ... on Fact { factId object }
            ... on Entity { entityId name }
            ... on Episode { episodeId content }
            ... on Memory { memoryId text }
          }
        }`,
        { id },
      );
      expect(body.errors, JSON.stringify(body.errors)).toBeUndefined();
      const node = (body.data as { node: Record<string, unknown> | null }).node;
      if (!shared) {
        expect(node, `node(${Buffer.from(id, 'base64').toString()})`).toBeNull();
        continue;
      }
      expectNothingOfAlpha(node, ['user_42', 'user']);
      if (node?.__typename === 'Dataset') {
        expect({ dataset: { id: node.id, name: node.name, createdAt: node.createdAt } }).toEqual(
          own,
        );
      } else {
        expect(betaOwn.entities).toContain(node?.entityId);
      }
    }
  });

  it('GraphQL deleteFact, restoreFact: NOT_FOUND for every alpha fact', async () => {
    for (const f of alpha.facts) {
      for (const dataset of [f.dataset, ...alpha.datasets]) {
        const del = await asBeta(
          'mutation($dataset: String!, $id: ID!) { deleteFact(dataset: $dataset, id: $id) { factId deleted } }',
          { dataset, id: f.factId },
        );
        expectCode(del.body, 'NOT_FOUND');
        expect(del.body.data).toBeNull();
        const restore = await asBeta(
          'mutation($dataset: String!, $id: ID!) { restoreFact(dataset: $dataset, id: $id) { factId } }',
          { dataset, id: f.factId },
        );
        expectCode(restore.body, 'NOT_FOUND');
        expect(restore.body.data).toBeNull();
      }
    }
  });

  it('GraphQL memory curation: NOT_FOUND for every alpha memory (never CONFLICT, which would reveal it)', async () => {
    const input = {
      text: 'Beta wants this',
      memoryKind: 'fact',
      scope: 'user',
      sourceType: 'chat',
    };
    const mutations: [string, string, Record<string, unknown>][] = [
      ['updateMemory', ', $patch: MemoryPatch!', { patch: { text: 'Beta was here' } }],
      ['archiveMemory', '', {}],
      ['unarchiveMemory', '', {}],
      ['pinMemory', '', {}],
      ['unpinMemory', '', {}],
      ['supersedeMemory', ', $input: MemoryInput!', { input }],
    ];
    for (const m of alpha.memories) {
      for (const dataset of new Set([m.dataset, 'user_42'])) {
        for (const [field, extraVars, extra] of mutations) {
          const args = Object.keys(extra)
            .map((k) => `, ${k}: $${k}`)
            .join('');
          const selection =
            field === 'supersedeMemory'
              ? 'previous { memoryId } memory { memoryId }'
              : 'memoryId version';
          // Any version would succeed on alpha's memory if beta could reach it; another one
          // would be a CONFLICT.
          for (const expectedVersion of [null, m.version + 1]) {
            const { body } = await asBeta(
              `mutation($dataset: String!, $memoryId: ID!, $expectedVersion: Int${extraVars}) {
                ${field}(dataset: $dataset, memoryId: $memoryId, expectedVersion: $expectedVersion${args}) { ${selection} }
              }`,
              { dataset, memoryId: m.memoryId, expectedVersion, ...extra },
            );
            expectCode(body, 'NOT_FOUND');
            expect(body.data).toBeNull();
          }
        }
      }
    }
  });

  it('GraphQL key management: beta lists, makes and revokes its own keys only', async () => {
    const alphaKeyId = parseApiKey(alphaKey)!.keyId;
    const listed = await asBeta('{ apiKeys { keyId name createdBy } apiKeyEvents { keyId by } }');
    expect(listed.body.errors).toBeUndefined();
    expect(JSON.stringify(listed.body.data)).not.toContain(alphaKeyId);
    expectNothingOfAlpha(listed.body.data);
    // Alpha's key, by its id or pasted whole, is not found (nor revoked).
    for (const keyId of [alphaKeyId, alphaKey]) {
      const { body } = await asBeta(
        'mutation($keyId: ID!) { revokeApiKey(keyId: $keyId) { revoked apiKey { keyId } } }',
        { keyId },
      );
      expectCode(body, 'NOT_FOUND');
      expect(JSON.stringify(body)).not.toContain(alphaKeyId);
    }
    expect((await graphql(alphaKey, '{ viewer { workspace } }')).status).toBe(200);
    // A key beta makes is beta's: it reads nothing of alpha.
    const made = await asBeta(
      'mutation { createApiKey(name: "beta tool", scopes: [READ]) { key apiKey { keyId } } }',
    );
    expect(made.body.errors).toBeUndefined();
    const betaTool = (made.body.data as never as { createApiKey: { key: string } }).createApiKey
      .key;
    const seen = await graphql(
      betaTool,
      '{ viewer { workspace } dataset(name: "alpha_private") { name } }',
    );
    expect(seen.body.data).toEqual({ viewer: { workspace: 'beta' }, dataset: null });
  });

  it('GraphQL eraseEpisode, eraseDataset: zero counts for alpha’s episodes and alpha-only datasets', async () => {
    for (const e of alpha.episodes) {
      for (const dataset of [e.dataset, ...alpha.datasets]) {
        const { body } = await asBeta(
          'mutation($dataset: String!, $id: ID!) { eraseEpisode(dataset: $dataset, id: $id) { facts entities episodes memories restoredFacts } }',
          { dataset, id: e.episodeId },
        );
        expect(body).toEqual({ data: { eraseEpisode: ZERO_COUNTS } });
      }
    }
    for (const name of alpha.datasets.filter((d) => d !== 'user_42')) {
      const { body } = await asBeta(
        'mutation($name: String!) { eraseDataset(name: $name) { facts entities episodes memories restoredFacts } }',
        { name },
      );
      expect(body).toEqual({ data: { eraseDataset: ZERO_COUNTS } });
    }
  });

  it("GraphQL recordEpisode: alpha's facts cannot be superseded; alpha's episode id is a new episode for beta", async () => {
    for (const f of alpha.facts) {
      const { body } = await asBeta(RECORD_EPISODE, {
        dataset: f.dataset,
        input: {
          episode: { occurredAt: '2026-09-03T10:00:00Z', source: 'chat', content: 'beta' },
          facts: [
            { subject: 'a', predicate: 'b', object: 'c', confidence: 0.5, supersedes: [f.factId] },
          ],
        },
      });
      expectCode(body, 'BAD_USER_INPUT');
      expect(body.errors?.[0]?.message).toContain('no fact');
      expect(body.data).toBeNull();
    }
    // The very input alpha recorded, with alpha's episode id: for beta it is a first recording,
    // and replaceExisting supersedes beta's own live facts only.
    const { body } = await asBeta(RECORD_EPISODE, {
      dataset: 'user_42',
      input: {
        ...MISO_INPUT,
        facts: [{ ...MISO_INPUT.facts[0], predicate: 'is interested in', replaceExisting: true }],
      },
    });
    expect(body.errors).toBeUndefined();
    const payload = (
      body.data as never as {
        recordEpisode: {
          alreadyRecorded: boolean;
          supersededIds: string[];
          facts: { factId: string }[];
          episode: { episodeId: string };
        };
      }
    ).recordEpisode;
    expect(payload.alreadyRecorded).toBe(false);
    expect(payload.episode.episodeId).toBe(ALPHA_EPISODE);
    expect(payload.supersededIds).toEqual(betaOwn.facts);
    for (const fact of payload.facts) expect(alpha.markers).not.toContain(fact.factId);
  });

  it("GraphQL createMemory with alpha's memory id creates beta's own memory", async () => {
    const m = alpha.memories[0]!;
    const { body } = await asBeta(CREATE_MEMORY, {
      dataset: m.dataset,
      input: {
        memoryId: m.memoryId,
        text: 'Beta: same id, different tenant.',
        memoryKind: 'fact',
        scope: 'user',
        sourceType: 'chat',
      },
    });
    expect(body.errors).toBeUndefined();
    expect(body.data).toEqual({
      createMemory: {
        memoryId: m.memoryId,
        workspaceId: betaWorkspaceId,
        dataset: m.dataset,
        text: 'Beta: same id, different tenant.',
        version: 1,
        pinned: false,
      },
    });
  });

  it("GraphQL eraseDataset on the shared name erases beta's own data only", async () => {
    const db = t.database.collections;
    const beta = { workspaceId: betaWorkspaceId, dataset: 'user_42' };
    const expected = {
      facts: await db.facts.countDocuments(beta),
      entities: await db.entities.countDocuments(beta),
      episodes: await db.episodes.countDocuments(beta),
      memories: await db.memories.countDocuments(beta),
      restoredFacts: 0,
    };
    expect(expected.facts).toBeGreaterThan(0);
    const { body } = await asBeta(
      'mutation($name: String!) { eraseDataset(name: $name) { facts entities episodes memories restoredFacts } }',
      { name: 'user_42' },
    );
    expect(body).toEqual({ data: { eraseDataset: expected } });
  });
});

describe('afterwards', () => {
  it("alpha's documents are exactly what they were, and alpha still reads them", async () => {
    expect(await workspaceSnapshot(t.database.collections, alphaWorkspaceId)).toEqual(alphaBefore);
    const data = await asAlpha(`{
      user42: dataset(name: "user_42") { facts(includeInvalidated: true) { totalCount } }
      private: dataset(name: "alpha_private") { facts { totalCount } memories { totalCount } }
      allMemories(includeArchived: true) { memoryId }
    }`);
    expect(data).toMatchObject({
      user42: { facts: { totalCount: 9 } },
      private: { facts: { totalCount: 1 }, memories: { totalCount: 1 } },
    });
  });

  it("recall, GraphQL and REST: alpha's words find nothing of alpha, under any dataset name", async () => {
    // Every word of alpha's data at once: a term of any alpha document would make it a candidate.
    const query = alpha.markers.join(' ').slice(0, 2000);
    for (const dataset of alpha.datasets) {
      const { body } = await asBeta(
        `query Recall($dataset: String!, $query: String!) {
          dataset(name: $dataset) {
            recall(query: $query, first: 50) {
              facts { relevanceScore fact { factId subject object } }
              memories { relevanceScore memory { memoryId text } }
              context
            }
          }
        }`,
        { dataset, query },
      );
      expect(body.errors).toBeUndefined();
      // The answers never echo the query, so nothing of alpha may appear in them at all.
      expectNothingOfAlpha(body.data);
      const recalled = (body.data as never as { dataset: RecallIds | null }).dataset;
      for (const f of recalled?.recall.facts ?? []) expect(betaOwn.facts).toContain(f.fact.factId);
      for (const m of recalled?.recall.memories ?? [])
        expect(betaOwn.memories).toContain(m.memory.memoryId);
      const rest = await betaRest('POST', '/v1/memory/recall', { dataset, query, limit: 50 });
      expect(rest.status).toBe(200);
      expectNothingOfAlpha(rest.body);
      for (const f of (rest.body as { facts: { factId: string }[] }).facts)
        expect(betaOwn.facts).toContain(f.factId);
    }
  });

  it('the calls covered every Query, Mutation and Dataset field (by introspection)', async () => {
    const schema = (
      await graphql(
        betaKey,
        `{
        __schema { queryType { fields { name } } mutationType { fields { name } } }
        dataset: __type(name: "Dataset") { fields { name } }
      }`,
      )
    ).body.data as never as {
      __schema: {
        queryType: { fields: { name: string }[] };
        mutationType: { fields: { name: string }[] };
      };
      dataset: { fields: { name: string }[] };
    };
    const covered = {
      Query: new Set<string>(),
      Mutation: new Set<string>(),
      Dataset: new Set<string>(),
    };
    for (const document of betaDocuments) {
      for (const definition of parse(document).definitions) {
        if (definition.kind !== Kind.OPERATION_DEFINITION) continue;
        const root = definition.operation === 'mutation' ? covered.Mutation : covered.Query;
        for (const selection of definition.selectionSet.selections) {
          if (selection.kind !== Kind.FIELD) continue;
          root.add(selection.name.value);
          if (selection.name.value !== 'dataset' || !selection.selectionSet) continue;
          for (const inner of selection.selectionSet.selections) {
            if (inner.kind === Kind.FIELD) covered.Dataset.add(inner.name.value);
          }
        }
      }
    }
    const names = (fields: { name: string }[]) => fields.map((f) => f.name).sort();
    expect(names(schema.__schema.queryType.fields).filter((f) => !covered.Query.has(f))).toEqual(
      [],
    );
    expect(
      names(schema.__schema.mutationType.fields).filter((f) => !covered.Mutation.has(f)),
    ).toEqual([]);
    expect(names(schema.dataset.fields).filter((f) => !covered.Dataset.has(f))).toEqual([]);
  });

  it('the calls covered every REST route (from the OpenAPI document)', async () => {
    const doc = (await (await t.request('/openapi.json')).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    const routes = Object.entries(doc.paths).flatMap(([path, operations]) =>
      Object.keys(operations).map((method) => ({ method: method.toUpperCase(), path })),
    );
    expect(routes.length).toBeGreaterThanOrEqual(5);
    const missing = routes.filter(({ method, path }) => {
      const pattern = new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}$`);
      return !betaRestCalls.some((call) => call.method === method && pattern.test(call.path));
    });
    expect(missing).toEqual([]);
  });
});
