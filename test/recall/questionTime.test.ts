import { beforeAll, describe, expect, it } from 'vitest';
import { HOP_SOURCES } from '../../src/domain/recall.js';
import { recordEpisode } from '../../src/store/recordEpisode.js';
import { RecallWithTimeDocument, type RecallWithTimeQuery } from '../generated/operations.js';
import { DEMO } from '../helpers/demo.js';
import { episodeInput, factInput, testTenant } from '../helpers/episodeInput.js';
import { clockFrom, openTestGateway, type TestGateway } from '../helpers/gateway.js';
import { callTool, mcpClient } from '../helpers/mcp.js';

/**
 * Recall reads the time a question names as a window on valid time, and the words most of
 * the view holds recall nothing alone: on GraphQL, Memory Soda's REST route and the MCP
 * tool, on the demo dataset as of 1 December 2026 (Berlin from April, deleted on 1 July;
 * the Civic interest from May, its corrected version ending where the Corolla interest
 * began on 16 August; the family car from May).
 */

const DATASET = 'user_42';
let t: TestGateway;
let key: string;

beforeAll(async () => {
  t = await openTestGateway({ gateway: { clock: clockFrom('2026-12-01T00:00:00Z') } });
  key = await t.key('acme', ['read']);
});

type Recalled = NonNullable<RecallWithTimeQuery['dataset']>['recall'];

async function recall(
  query: string,
  instants: { validAt?: string; knownAt?: string; asOf?: string } = {},
): Promise<Recalled> {
  const { body } = await t.graphql(
    RecallWithTimeDocument,
    { dataset: DATASET, query, ...instants },
    key,
  );
  expect(body.errors).toBeUndefined();
  return body.data!.dataset!.recall;
}
const factIds = (r: Recalled) => r.facts.map((f) => f.fact.factId);

const JUNE_QUESTION = 'which car was the user interested in in June 2026';

describe('GraphQL: the time in the question', () => {
  it('is a window on valid time: what was true then, as known now (the corrected history)', async () => {
    const r = await recall(JUNE_QUESTION);
    expect(r.time).toEqual({
      phrase: 'in June 2026',
      validFrom: '2026-06-01T00:00:00.000Z',
      validUntil: '2026-07-01T00:00:00.000Z',
      applied: true,
    });
    expect(factIds(r)).toContain(DEMO.facts.hondaInterestUntilToyota);
    expect(factIds(r)).not.toContain(DEMO.facts.toyotaInterest);
    // The phrase is not among the words; each item's explanation says how time was read.
    for (const f of r.facts) {
      expect(f.explanation.terms.map((term) => term.term)).not.toContain('june');
      expect(f.explanation.time).toEqual({ phrase: 'in June 2026', applied: true });
    }
    // A window is a look at then: no memory is stamped.
    expect(r.memories.every((m) => m.memory.lastUsedAt === null)).toBe(true);
  });

  it('an explicit validAt wins over the question (its phrase still is no word)', async () => {
    const r = await recall(JUNE_QUESTION, { validAt: '2026-12-01' });
    expect(r.time).toMatchObject({ phrase: 'in June 2026', applied: false });
    expect(factIds(r)).toContain(DEMO.facts.toyotaInterest);
    expect(factIds(r)).not.toContain(DEMO.facts.hondaInterestUntilToyota);
  });

  it('replayed at a past knownAt: the window against what was known then, relative phrases from then', async () => {
    const question = 'where did the user live since April 2026';
    // Berlin was deleted on 1 July: as known now, not there; as known in mid-June, first.
    expect(factIds(await recall(question))).not.toContain(DEMO.facts.livesInBerlin);
    expect(factIds(await recall(question, { knownAt: '2026-06-15' }))[0]).toBe(
      DEMO.facts.livesInBerlin,
    );
    // "last month", asked as of 15 June, is May.
    const may = await recall('what was the user shopping for last month', {
      knownAt: '2026-06-15',
    });
    expect(may.time).toMatchObject({
      validFrom: '2026-05-01T00:00:00.000Z',
      validUntil: '2026-06-01T00:00:00.000Z',
    });
    expect(factIds(may)[0]).toBe(DEMO.facts.familyCar);
    // Of May: nothing that began after it (the Corolla interest, in August).
    expect(factIds(may)).not.toContain(DEMO.facts.toyotaInterest);
  });
});

describe('GraphQL: knowing when nothing is relevant', () => {
  it('a word most of the view holds ("user") recalls nothing alone, and is marked common', async () => {
    // A dataset of twelve facts about the user: a tea, a car, ten other things.
    const objects = ['green tea', 'a car', ...Array.from({ length: 10 }, (_, i) => `thing ${i}`)];
    await recordEpisode(
      t.database.collections,
      testTenant('acme', 'habits'),
      episodeInput(objects.map((object) => factInput('user', 'likes', object))),
      new Date('2026-11-20T00:00:00Z'),
    );
    const ask = async (query: string) => {
      const { body } = await t.graphql(RecallWithTimeDocument, { dataset: 'habits', query }, key);
      return body.data!.dataset!.recall.facts;
    };
    expect(await ask('what does the user want?')).toEqual([]);
    const car = await ask('What vehicle does the user want, a car?');
    expect(car).toHaveLength(1);
    expect(car[0]!.explanation.terms.map(({ weight: _, ...rest }) => rest)).toEqual([
      {
        term: 'car',
        common: false,
        correctedFrom: null,
        fields: [{ field: 'statement', termFrequency: 1 }],
      },
      {
        term: 'user',
        common: true,
        correctedFrom: null,
        fields: [{ field: 'statement', termFrequency: 1 }],
      },
    ]);
  });
});

describe('Memory Soda’s recall route and the MCP tool read the question the same way', () => {
  it('REST: the window, and explanation.time and terms’ common with explain', async () => {
    const response = await t.request('/v1/memory/recall', {
      method: 'POST',
      key,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ dataset: DATASET, query: JUNE_QUESTION, explain: true }),
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as {
      facts: {
        factId: string;
        explanation: { time: unknown; terms: { term: string; common: boolean }[] };
      }[];
    };
    expect(body.facts.map((f) => f.factId)).toContain(DEMO.facts.hondaInterestUntilToyota);
    expect(body.facts.map((f) => f.factId)).not.toContain(DEMO.facts.toyotaInterest);
    expect(body.facts[0]!.explanation.time).toEqual({
      phrase: 'in June 2026',
      validFrom: '2026-06-01T00:00:00.000Z',
      validUntil: '2026-07-01T00:00:00.000Z',
      applied: true,
    });
    const nothing = await t.request('/v1/memory/recall', {
      method: 'POST',
      key,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ dataset: 'habits', query: 'what does the user want?' }),
    });
    expect(await nothing.json()).toEqual({ facts: [], context: '' });
  });

  it('MCP: the recall tool', async () => {
    const client = await mcpClient('http://gateway.test', key, (r) => t.gateway.fetch(r));
    const result = await callTool(client, 'recall', {
      dataset: DATASET,
      query: JUNE_QUESTION,
      explain: true,
    });
    const answer = result.structuredContent as {
      facts: { fact: { factId: string }; explanation: { time: { phrase: string } } }[];
    };
    expect(answer.facts.map((f) => f.fact.factId)).toContain(DEMO.facts.hondaInterestUntilToyota);
    expect(answer.facts[0]!.explanation.time.phrase).toBe('in June 2026');
    await client.close();
  });
});

describe('the source quote counts (BM25F: a second field, weighted below the statement)', () => {
  it('a word only the quote holds recalls its fact; the statement outranks the quote', async () => {
    // The demo's Corolla interest: the user wrote "the corola hybrid looks great".
    const corola = await recall('corola');
    expect(factIds(corola)).toEqual([DEMO.facts.toyotaInterest]);
    await recordEpisode(
      t.database.collections,
      testTenant('acme', 'breakfast'),
      episodeInput([
        factInput('user', 'drinks', 'green tea', { sourceQuote: 'I have matcha every morning' }),
        factInput('user', 'likes', 'matcha ice cream', { sourceQuote: 'for dessert, always' }),
      ]),
      new Date('2026-11-20T00:00:00Z'),
    );
    const { body } = await t.graphql(
      RecallWithTimeDocument,
      { dataset: 'breakfast', query: 'matcha' },
      key,
    );
    const facts = body.data!.dataset!.recall.facts;
    expect(facts).toHaveLength(2);
    const [first, second] = facts.map((f) => f.explanation.terms[0]!);
    expect(first).toMatchObject({
      term: 'matcha',
      fields: [{ field: 'statement', termFrequency: 1 }],
    });
    expect(second).toMatchObject({
      term: 'matcha',
      fields: [{ field: 'quote', termFrequency: 1 }],
    });
  });

  it('REST: the quote-only match, and its fields', async () => {
    const response = await t.request('/v1/memory/recall', {
      method: 'POST',
      key,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ dataset: DATASET, query: 'corola', explain: true }),
    });
    const body = (await response.json()) as {
      facts: { factId: string; explanation: { terms: { fields: unknown[] }[] } }[];
    };
    expect(body.facts.map((f) => f.factId)).toEqual([DEMO.facts.toyotaInterest]);
    expect(body.facts[0]!.explanation.terms[0]!.fields).toEqual([
      { field: 'quote', termFrequency: 1 },
    ]);
  });
});

describe('entities the question names', () => {
  /** A trip: Lisbon, in Portugal, which uses the euro; and ten other things about the user. */
  beforeAll(async () => {
    await recordEpisode(
      t.database.collections,
      testTenant('acme', 'trip'),
      {
        ...episodeInput([
          factInput('user', 'visited', 'lisbon', { objectIsEntity: true }),
          factInput('lisbon', 'is in', 'portugal', { objectIsEntity: true }),
          factInput('portugal', 'pays with', 'the euro'),
          ...Array.from({ length: 9 }, (_, i) => factInput('user', 'likes', `thing ${i}`)),
        ]),
        entities: [
          { name: 'user', type: 'PERSON' },
          { name: 'lisbon', type: 'PLACE' },
          { name: 'portugal', type: 'PLACE' },
        ],
      },
      new Date('2026-11-20T00:00:00Z'),
    );
  });

  it('rank its facts up (factor entity), and bring in facts one hop away at half the score of the fact that links them', async () => {
    const { body } = await t.graphql(
      RecallWithTimeDocument,
      { dataset: 'trip', query: 'tell me about lisbon' },
      key,
    );
    const facts = body.data!.dataset!.recall.facts;
    const stored = await t.database.collections.facts
      .find({ dataset: 'trip' }, { projection: { factId: 1, subject: 1, object: 1 } })
      .toArray();
    const id = (subject: string, object: string) =>
      stored.find((f) => f.subject === subject && f.object === object)!.factId;
    expect(
      facts
        .map((f) => f.fact.factId)
        .slice(0, 2)
        .sort(),
    ).toEqual([id('user', 'lisbon'), id('lisbon', 'portugal')].sort());
    for (const f of facts.slice(0, 2)) {
      expect(f.explanation.factors).toContainEqual({ name: 'entity', value: 1.25 });
    }
    // Portugal is one hop from Lisbon; the user is what the dataset is about, not a topic.
    const hop = facts[2]!;
    expect(hop.fact.factId).toBe(id('portugal', 'the euro'));
    expect(hop.explanation).toMatchObject({
      factors: [{ name: 'hop', value: 0.5 }],
      via: id('lisbon', 'portugal'),
      terms: [],
    });
    const linking = facts.find((f) => f.fact.factId === id('lisbon', 'portugal'))!;
    expect(hop.explanation.score).toBeCloseTo(linking.explanation.score * 0.5, 10);
    expect(facts).toHaveLength(3);
  });

  it('lead one hop further from the best few linking facts only, and a name most facts hold is no topic', async () => {
    // Porto's twelve neighbours, each with a fact of its own; "porto" is the question's
    // only term in the facts naming the first three, twice in their statements.
    await recordEpisode(
      t.database.collections,
      testTenant('acme', 'hops'),
      {
        ...episodeInput([
          ...Array.from({ length: 12 }, (_, i) =>
            factInput('porto', i < 3 ? `porto borders` : 'borders', `town ${i}`, {
              objectIsEntity: true,
              validAt: new Date(Date.UTC(2026, 9, 1 + i)),
            }),
          ),
          ...Array.from({ length: 12 }, (_, i) => factInput(`town ${i}`, 'has', `a market ${i}`)),
          // "user": in more than half of the facts recorded, so what the dataset is about
          // (more than the entity facts a recall reads, RECALL_ENTITY_CAP, could show).
          ...Array.from({ length: 80 }, (_, i) => factInput('user', 'noted', `note ${i}`)),
        ]),
        entities: [
          { name: 'porto', type: 'PLACE' },
          { name: 'user', type: 'PERSON' },
          ...Array.from({ length: 12 }, (_, i) => ({ name: `town ${i}`, type: 'PLACE' as const })),
        ],
      },
      new Date('2026-11-20T00:00:00Z'),
    );
    const ask = async (query: string) => {
      const { body } = await t.graphql(
        RecallWithTimeDocument,
        { dataset: 'hops', query, first: 50 },
        key,
      );
      return body.data!.dataset!.recall.facts;
    };
    const facts = await ask('tell me about porto');
    const hops = facts.filter((f) => f.explanation.via !== null);
    // Five linking facts lead further (the three best, then the most recent), not twelve.
    expect(hops).toHaveLength(HOP_SOURCES);
    const linking = new Set(hops.map((h) => h.explanation.via));
    expect(linking.size).toBe(HOP_SOURCES);
    // "user" names an entity, but every term of it is common: no factor entity, no hop.
    const user = await ask('what did the user note about note 3');
    expect(user.length).toBeGreaterThan(0);
    for (const f of user) {
      expect(f.explanation.factors.map((x) => x.name)).not.toContain('entity');
      expect(f.explanation.via).toBeNull();
    }
  });

  it('REST: the same, via in the explanation', async () => {
    const response = await t.request('/v1/memory/recall', {
      method: 'POST',
      key,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ dataset: 'trip', query: 'tell me about lisbon', explain: true }),
    });
    const body = (await response.json()) as {
      facts: { object: string; explanation: { via: string | null } }[];
    };
    expect(body.facts.map((f) => f.object)).toContain('the euro');
    expect(body.facts.find((f) => f.object === 'the euro')!.explanation.via).not.toBeNull();
  });
});
