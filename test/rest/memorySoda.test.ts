import { beforeAll, describe, expect, it } from 'vitest';
import { INSTANT_FORMAT } from '../../src/domain/time.js';
import {
  EntitiesDocument,
  EntityWithFactsDocument,
  FactsDocument,
} from '../generated/operations.js';
import { DEMO } from '../helpers/demo.js';
import { clockFrom, openTestGateway, type TestGateway } from '../helpers/gateway.js';
import { MEMORY_SODA_FACT_FIELDS } from '../helpers/memorySoda.js';

const BASE = '/v1/memory/semantic';
const FACT_FIELDS = MEMORY_SODA_FACT_FIELDS;

let t: TestGateway;
let key: string;
let reader: string;
let stranger: string;

beforeAll(async () => {
  // The expectations are the demo's states on this date (the test drive still ahead).
  t = await openTestGateway({
    demoWorkspaces: ['development', 'other'],
    gateway: { clock: clockFrom('2026-12-01T00:00:00Z') },
  });
  key = await t.key('development', ['read', 'write']);
  reader = await t.key('development', ['read']);
  stranger = await t.key('other', ['read', 'write']);
});

async function get(path: string, k: string | null = key) {
  const response = await t.request(path, { key: k });
  return { status: response.status, body: await response.json(), headers: response.headers };
}

describe("the document's curl examples, as written, against the demo", () => {
  it('current facts', async () => {
    const { status, body } = await get(`${BASE}/datasets/user_42/facts`);
    expect(status).toBe(200);
    expect(body.total).toBe(3);
    expect(body.facts.map((f: { factId: string }) => f.factId)).toEqual([
      DEMO.facts.toyotaInterest,
      DEMO.facts.familyCar,
      DEMO.facts.hondaMadeBy,
    ]);
    expect(body.facts[0]).toEqual({
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
      episodeId: DEMO.episodes.toyota,
    });
    for (const fact of body.facts) expect(Object.keys(fact)).toEqual(FACT_FIELDS);
  });

  it('keyword filter: q=car&limit=20', async () => {
    const { body } = await get(`${BASE}/datasets/user_42/facts?q=car&limit=20`);
    expect(body).toMatchObject({
      total: 1,
      facts: [{ factId: DEMO.facts.familyCar, object: 'a family car' }],
    });
  });

  it('q is full text: other forms of a word, and the words between, still find the fact', async () => {
    const cars = await get(`${BASE}/datasets/user_42/facts?q=cars`);
    expect(cars.body.facts.map((f: { factId: string }) => f.factId)).toEqual([
      DEMO.facts.familyCar,
    ]);
    const interest = await get(`${BASE}/datasets/user_42/facts?q=interest`);
    expect(interest.body.facts.map((f: { factId: string }) => f.factId)).toEqual([
      DEMO.facts.toyotaInterest,
    ]);
    const hybrids = await get(
      `${BASE}/datasets/user_42/facts?q=${encodeURIComponent('interested in hybrids')}`,
    );
    expect(hybrids.body.total).toBe(1);
    // GraphQL's q is the same filter.
    const { body } = await t
      .request('/graphql', {
        method: 'POST',
        key,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          query: '{ dataset(name: "user_42") { facts(q: "cars") { edges { node { factId } } } } }',
        }),
      })
      .then(async (r) => ({ body: await r.json() }));
    expect(body.data.dataset.facts.edges).toEqual([{ node: { factId: DEMO.facts.familyCar } }]);
    // Words the fact does not hold find nothing; stop words alone filter nothing.
    expect((await get(`${BASE}/datasets/user_42/facts?q=cart`)).body.total).toBe(0);
    expect((await get(`${BASE}/datasets/user_42/facts?q=the`)).body.total).toBe(3);
  });

  it('the unpaginated lists say their cap in headers', async () => {
    const entities = await get(`${BASE}/datasets/user_42/entities`);
    expect(entities.headers.get('x-result-limit')).toBe('10000');
    expect(entities.headers.get('x-result-limit-reached')).toBeNull();
    const facts = await get(`${BASE}/datasets/user_42/entities/user/facts`);
    expect(facts.headers.get('x-result-limit')).toBe('1000');
    expect(facts.headers.get('x-result-limit-reached')).toBeNull();
    const memories = await t.request('/api/memories', { key });
    expect(memories.headers.get('x-result-limit')).toBe('10000');
  });

  it('an entity with more live facts than the cap: its first 1,000, and the header says there may be more', {
    timeout: 120_000,
  }, async () => {
    for (let e = 0; e < 5; e++) {
      const { status } = await t.request('/graphql', {
        method: 'POST',
        key,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          query:
            'mutation($i: RecordEpisodeInput!) { recordEpisode(dataset: "crowded", input: $i) { outcome } }',
          variables: {
            i: {
              episode: {
                occurredAt: '2026-11-01T00:00:00Z',
                source: 'bench',
                content: `batch ${e}`,
              },
              entities: [{ name: 'hub', type: 'PERSON' }],
              facts: Array.from({ length: 250 }, (_, i) => ({
                subject: 'hub',
                predicate: 'knows',
                object: `person ${e * 250 + i}`,
                confidence: 0.5,
              })),
            },
          },
        }),
      });
      expect(status).toBe(200);
    }
    const facts = await get(`${BASE}/datasets/crowded/entities/hub/facts`);
    expect(facts.body.facts).toHaveLength(1000);
    expect(facts.headers.get('x-result-limit-reached')).toBe('true');
  });

  it('full history: includeInvalidated=true', async () => {
    const { body } = await get(`${BASE}/datasets/user_42/facts?includeInvalidated=true`);
    // The seven facts and the Civic interest's corrected version: a fact of its own, not
    // invalidated, ended where the Corolla interest began (docs/TEMPORAL_MODEL.md).
    expect(body.total).toBe(8);
    expect(
      body.facts.filter((f: { invalidAt: string | null }) => f.invalidAt !== null),
    ).toHaveLength(2);
    expect(
      body.facts.find((f: { factId: string }) => f.factId === DEMO.facts.hondaInterestUntilToyota),
    ).toMatchObject({
      object: 'honda civic',
      validAt: '2026-05-10T18:30:00.000Z',
      validUntil: '2026-08-16T09:14:02.000Z',
      invalidAt: null,
    });
  });

  it('includeInvalidated: true, false, 1 or 0, in any case', async () => {
    for (const [value, total] of [
      ['TRUE', 8],
      ['True', 8],
      ['1', 8],
      ['false', 3],
      ['FALSE', 3],
      ['0', 3],
    ] as const) {
      const { status, body } = await get(
        `${BASE}/datasets/user_42/facts?includeInvalidated=${value}`,
      );
      expect([value, status, body.total]).toEqual([value, 200, total]);
    }
  });

  it('asOf: a date-time without a zone is refused naming asOf, in the words GraphQL uses', async () => {
    // The document types asOf as a date; a date-time is read only when its zone says which
    // instant it is (docs/COMPATIBILITY.md, "Instants"), as GraphQL's DateTime and the MCP tools do.
    for (const value of [
      '2026-06-01T12:00:00',
      '2026-06-01T12:00',
      '2026-06-01T12:00:00.000',
      '2026-06-01T00:00:00',
    ]) {
      const { status, body } = await get(`${BASE}/datasets/user_42/facts?asOf=${value}`);
      expect([value, status, body]).toEqual([
        value,
        400,
        { error: `asOf: must be ${INSTANT_FORMAT}` },
      ]);
      const graphql = await t.graphql(FactsDocument, { dataset: 'user_42', asOf: value }, key);
      expect(graphql.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
      expect(graphql.body.errors?.[0]?.message).toContain(INSTANT_FORMAT);
    }
    // With a zone, or a date alone (00:00:00Z), it is read.
    const zoned = await get(`${BASE}/datasets/user_42/facts?asOf=2026-06-01T02:00:00%2B02:00`);
    expect(zoned.status).toBe(200);
    expect(zoned.body).toEqual((await get(`${BASE}/datasets/user_42/facts?asOf=2026-06-01`)).body);
  });

  it('what did we believe on 1 June: asOf=2026-06-01', async () => {
    const { body } = await get(`${BASE}/datasets/user_42/facts?asOf=2026-06-01`);
    expect(body.total).toBe(5);
    expect(body.facts.map((f: { object: string }) => f.object)).toEqual([
      '20000 euros',
      'a family car',
      'honda civic',
      'honda',
      'berlin',
    ]);
  });

  it('provenance: everything one episode produced, whatever its state', async () => {
    const { body } = await get(`${BASE}/datasets/user_42/facts?episodeId=${DEMO.episodes.toyota}`);
    expect(body.total).toBe(2);
    expect(body.facts.map((f: { predicate: string }) => f.predicate)).toEqual([
      'will test drive',
      'is interested in',
    ]);
    const asOf = await get(
      `${BASE}/datasets/user_42/facts?episodeId=${DEMO.episodes.toyota}&asOf=2026-09-01`,
    );
    expect(asOf.body.total).toBe(1);
  });

  it('entities, most recently mentioned first, every one', async () => {
    const { status, body } = await get(`${BASE}/datasets/user_42/entities`);
    expect(status).toBe(200);
    expect(body.entities).toEqual([
      { entityId: DEMO.entities.user, name: 'user', type: 'PERSON' },
      {
        entityId: DEMO.entities.toyota,
        name: 'toyota corolla hybrid',
        type: 'PRODUCT',
      },
      { entityId: DEMO.entities.hondaCivic, name: 'honda civic', type: 'PRODUCT' },
      { entityId: DEMO.entities.honda, name: 'honda', type: 'ORG' },
      { entityId: DEMO.entities.berlin, name: 'berlin', type: 'PLACE' },
    ]);
  });

  it('entity facts: "Honda Civic", "honda civic" and "toyota%20corolla%20hybrid"', async () => {
    const civic = await get(`${BASE}/datasets/user_42/entities/honda%20civic/facts`);
    expect(civic.body.facts.map((f: { predicate: string }) => f.predicate)).toEqual(['is made by']);
    expect((await get(`${BASE}/datasets/user_42/entities/Honda%20Civic/facts`)).body).toEqual(
      civic.body,
    );
    const toyota = await get(`${BASE}/datasets/user_42/entities/toyota%20corolla%20hybrid/facts`);
    // Live only: the future test drive is left out.
    expect(toyota.body.facts.map((f: { factId: string }) => f.factId)).toEqual([
      DEMO.facts.toyotaInterest,
    ]);
    expect(Object.keys(toyota.body.facts[0])).toEqual(FACT_FIELDS);
  });

  it('an unknown entity is 200 { "facts": [] }, not 404; so is a partial name', async () => {
    expect(await get(`${BASE}/datasets/user_42/entities/tesla/facts`)).toMatchObject({
      status: 200,
      body: { facts: [] },
    });
    expect((await get(`${BASE}/datasets/user_42/entities/honda%20civ/facts`)).body).toEqual({
      facts: [],
    });
  });

  it('soft delete: 200 once, then 404 "Fact not found"; the fact stays in the history', async () => {
    const del = () =>
      t.request(`${BASE}/datasets/user_42/facts/${DEMO.facts.familyCar}`, {
        method: 'DELETE',
        key,
      });
    const first = await del();
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({ factId: DEMO.facts.familyCar, deleted: true });
    const second = await del();
    expect(second.status).toBe(404);
    expect(await second.json()).toEqual({ error: 'Fact not found' });
    const live = await get(`${BASE}/datasets/user_42/facts`);
    expect(live.body.facts.map((f: { factId: string }) => f.factId)).not.toContain(
      DEMO.facts.familyCar,
    );
    const history = await get(`${BASE}/datasets/user_42/facts?includeInvalidated=true`);
    expect(
      history.body.facts.find((f: { factId: string }) => f.factId === DEMO.facts.familyCar)
        .invalidAt,
    ).toMatch(/Z$/);
  });
});

describe('DELETE errors', () => {
  it('unknown id and a fact of another dataset: 404', async () => {
    const unknown = await t.request(
      `${BASE}/datasets/user_42/facts/00000000-0000-4000-8000-000000000000`,
      {
        method: 'DELETE',
        key,
      },
    );
    expect([unknown.status, await unknown.json()]).toEqual([404, { error: 'Fact not found' }]);
    const wrongDataset = await t.request(
      `${BASE}/datasets/user_43/facts/${DEMO.facts.toyotaInterest}`,
      {
        method: 'DELETE',
        key,
      },
    );
    expect([wrongDataset.status, await wrongDataset.json()]).toEqual([
      404,
      { error: 'Fact not found' },
    ]);
  });

  it('needs the write scope: 403', async () => {
    const response = await t.request(
      `${BASE}/datasets/user_42/facts/${DEMO.facts.toyotaInterest}`,
      {
        method: 'DELETE',
        key: reader,
      },
    );
    expect(response.status).toBe(403);
    expect(await response.json()).toEqual({ error: 'This operation needs the write scope' });
  });

  it("another workspace's key cannot delete this workspace's fact", async () => {
    const response = await t.request(
      `${BASE}/datasets/user_42/facts/${DEMO.facts.toyotaInterest}`,
      {
        method: 'DELETE',
        key: stranger,
      },
    );
    // The stranger's own workspace has the same demo ids: their copy is what they delete.
    expect(response.status).toBe(200);
    const mine = await get(`${BASE}/datasets/user_42/facts`);
    expect(mine.body.facts.map((f: { factId: string }) => f.factId)).toContain(
      DEMO.facts.toyotaInterest,
    );
  });
});

describe('bad input: 400 { "error" } naming the parameter; nothing reaches the store', () => {
  it.each([
    ['limit=0', /limit: must be between 1 and 100/],
    ['limit=101', /limit: must be between 1 and 100/],
    ['limit=abc', /limit: must be a whole number/],
    ['limit=1.5', /limit/],
    ['includeInvalidated=yes', /includeInvalidated: must be true, false, 1 or 0/],
    ['includeInvalidated=', /includeInvalidated: must be true, false, 1 or 0/],
    ['asOf=garbage', /asOf: must be an ISO 8601 date/],
    ['asOf=2026-06-01T25:00:00', /asOf/],
    ['asOf=2026-06-01 12:00:00', /asOf/],
    [`q=${'a'.repeat(1001)}`, /q: must be at most 1000 characters/],
    ['episodeId=8b21…', /episodeId: must be a UUID/],
    ['q[$ne]=x', null],
  ])('%s', async (query, message) => {
    const { status, body } = await get(`${BASE}/datasets/user_42/facts?${query}`);
    if (message === null) {
      // An operator-looking parameter name is just an unknown parameter, ignored.
      expect(status).toBe(200);
      expect(body.total).toBeGreaterThan(0);
      return;
    }
    expect(status).toBe(400);
    expect(Object.keys(body)).toEqual(['error']);
    expect(body.error).toMatch(message);
  });

  it('q of exactly 1000 characters is fine', async () => {
    expect(await get(`${BASE}/datasets/user_42/facts?q=${'a'.repeat(1000)}`)).toMatchObject({
      status: 200,
      body: { total: 0 },
    });
  });

  it('a factId that is not a UUID names no fact: 404 "Fact not found"', async () => {
    for (const id of ['3a91…', 'not-a-uuid', '{"$ne":null}', '1']) {
      const response = await t.request(`${BASE}/datasets/user_42/facts/${encodeURIComponent(id)}`, {
        method: 'DELETE',
        key,
      });
      expect([id, response.status]).toEqual([id, 404]);
      expect(await response.json()).toEqual({ error: 'Fact not found' });
    }
  });

  it('broken percent-encoding in a path segment names the parameter', async () => {
    expect(await get(`${BASE}/datasets/user%E0%A4%A/facts`)).toMatchObject({
      status: 400,
      body: { error: expect.stringMatching(/^dataset: malformed percent-encoding/) },
    });
    expect(await get(`${BASE}/datasets/user_42/entities/bad%2/facts`)).toMatchObject({
      status: 400,
      body: { error: expect.stringMatching(/^name: malformed percent-encoding/) },
    });
  });
});

describe('auth, routes and methods', () => {
  it('missing or bad key: 401 { "error" }, saying how to authenticate (WWW-Authenticate)', async () => {
    const missing = await get(`${BASE}/datasets/user_42/facts`, null);
    expect(missing).toEqual({
      status: 401,
      body: { error: 'Missing API key: send Authorization: Bearer <key>' },
      headers: expect.anything(),
    });
    expect(missing.headers.get('www-authenticate')).toBe('Bearer realm="memory-gateway"');
    const bad = await get(`${BASE}/datasets/user_42/facts`, 'mk_nope');
    expect([bad.status, Object.keys(bad.body)]).toEqual([401, ['error']]);
    // RFC 6750: a key was sent and refused.
    expect(bad.headers.get('www-authenticate')).toMatch(
      /^Bearer realm="memory-gateway", error="invalid_token"/,
    );
  });

  it('unknown route: 404 { "error" }; wrong method: 405 with Allow', async () => {
    expect(await get(`${BASE}/datasets/user_42/nothing`)).toMatchObject({
      status: 404,
      body: { error: expect.any(String) },
    });
    const post = await t.request(`${BASE}/datasets/user_42/facts`, { method: 'POST', key });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET');
    expect(Object.keys(await post.json())).toEqual(['error']);
    const put = await t.request(`${BASE}/datasets/user_42/facts/${DEMO.facts.toyotaInterest}`, {
      method: 'PUT',
      key,
    });
    expect([put.status, put.headers.get('allow')]).toEqual([405, 'DELETE']);
  });

  it("another workspace's key sees nothing of this one", async () => {
    await t.request('/v1/memory/semantic/datasets/private-notes/facts', { key });
    const lines = [
      {
        type: 'fact',
        dataset: 'private-notes',
        factId: '99999999-9999-4999-8999-999999999999',
        subject: 'ceo',
        predicate: 'plans',
        object: 'merger',
        confidence: 1,
        validAt: '2026-01-01',
      },
      { type: 'entity', dataset: 'private-notes', name: 'merger', entityType: 'EVENT' },
    ];
    const { importJsonl } = await import('../../src/transfer/importJsonl.js');
    await importJsonl(t.database.collections, {
      now: new Date(),
      workspace: 'development',
      content: lines.map((l) => JSON.stringify(l)).join('\n'),
    });
    expect((await get(`${BASE}/datasets/private-notes/facts`)).body.total).toBe(1);
    expect((await get(`${BASE}/datasets/private-notes/facts`, stranger)).body).toEqual({
      facts: [],
      total: 0,
    });
    expect(
      (await get(`${BASE}/datasets/private-notes/facts?includeInvalidated=true`, stranger)).body
        .total,
    ).toBe(0);
    expect((await get(`${BASE}/datasets/private-notes/entities`, stranger)).body).toEqual({
      entities: [],
    });
    expect(
      (await get(`${BASE}/datasets/private-notes/entities/merger/facts`, stranger)).body,
    ).toEqual({ facts: [] });
    const del = await t.request(
      `${BASE}/datasets/private-notes/facts/99999999-9999-4999-8999-999999999999`,
      {
        method: 'DELETE',
        key: stranger,
      },
    );
    expect(del.status).toBe(404);
    expect((await get(`${BASE}/datasets/private-notes/facts`)).body.total).toBe(1);
  });
});

describe('awkward dataset and entity names', () => {
  const names = [
    'a/b',
    'what?',
    'hash#tag',
    '100%',
    'two words',
    'Zürich ünïcödé',
    '東京',
    'a/b?c#d%e f',
  ];

  beforeAll(async () => {
    const { importJsonl } = await import('../../src/transfer/importJsonl.js');
    const lines = names.flatMap((dataset, i) => [
      { type: 'entity', dataset, name: `Thing ${dataset}`, entityType: 'THING' },
      {
        type: 'fact',
        dataset,
        factId: `00000000-0000-4000-8000-${(i + 1).toString().padStart(12, '0')}`,
        subject: `thing ${dataset}`,
        predicate: 'is in',
        object: dataset,
        confidence: 1,
        validAt: '2026-01-01',
      },
    ]);
    await importJsonl(t.database.collections, {
      now: new Date(),
      workspace: 'development',
      content: lines.map((l) => JSON.stringify(l)).join('\n'),
    });
  });

  it.each(names)(
    '%s: one percent-encoded segment reaches exactly that dataset and entity',
    async (name) => {
      const dataset = encodeURIComponent(name);
      const facts = await get(`${BASE}/datasets/${dataset}/facts`);
      expect(facts.status).toBe(200);
      expect(facts.body.facts.map((f: { object: string }) => f.object)).toEqual([name]);
      const entities = await get(`${BASE}/datasets/${dataset}/entities`);
      expect(entities.body.entities.map((e: { name: string }) => e.name)).toEqual([
        `thing ${name.toLowerCase()}`,
      ]);
      const entityFacts = await get(
        `${BASE}/datasets/${dataset}/entities/${encodeURIComponent(`Thing ${name}`)}/facts`,
      );
      expect(entityFacts.body.facts).toHaveLength(1);
    },
  );
});

describe('parity: the REST body is the GraphQL answer reshaped', () => {
  const pick = (f: Record<string, unknown>) =>
    Object.fromEntries(FACT_FIELDS.map((k) => [k, f[k]]));

  it.each([
    ['', {}],
    ['?includeInvalidated=true', { includeInvalidated: true }],
    ['?asOf=2026-06-01', { asOf: '2026-06-01' }],
    ['?q=user&limit=2', { q: 'user', first: 2 }],
    [`?episodeId=${DEMO.episodes.toyota}`, { episodeId: DEMO.episodes.toyota }],
  ])('facts%s', async (query, variables) => {
    const rest = await get(`${BASE}/datasets/user_42/facts${query}`);
    const gql = await t.graphql(
      FactsDocument,
      { dataset: 'user_42', first: 50, ...variables },
      key,
    );
    const facts = gql.body.data!.dataset!.facts;
    expect(rest.body).toEqual({
      facts: facts.edges.map((e) => pick(e.node)),
      total: facts.totalCount,
    });
  });

  it('entities and entity facts', async () => {
    const rest = await get(`${BASE}/datasets/user_42/entities`);
    const gql = await t.graphql(EntitiesDocument, { dataset: 'user_42', first: 100 }, key);
    expect(rest.body.entities).toEqual(
      gql.body.data!.dataset!.entities.edges.map(({ node }) => ({
        entityId: node.entityId,
        name: node.name,
        type: node.type,
      })),
    );
    const restFacts = await get(`${BASE}/datasets/user_42/entities/user/facts`);
    const gqlFacts = await t.graphql(
      EntityWithFactsDocument,
      { dataset: 'user_42', name: 'user' },
      key,
    );
    expect(restFacts.body.facts.map((f: { factId: string }) => f.factId)).toEqual(
      gqlFacts.body.data!.dataset!.entity!.facts.map((f) => f.factId),
    );
  });
});
