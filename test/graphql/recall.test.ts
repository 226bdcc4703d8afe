import pino from 'pino';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { createGateway } from '../../src/http/app.js';
import { DEMO } from '../helpers/demo.js';
import { clockFrom, openTestGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * Dataset.recall on the demo dataset (its states on 1 December 2026: the Toyota interest,
 * the family car and "honda civic is made by honda" live; Berlin deleted; the Honda
 * interest superseded; the budget expired; the test drive in 2035).
 */

let t: TestGateway;
let key: string;
const NOW = '2026-12-01T00:00:00.000Z';

beforeAll(async () => {
  t = await openTestGateway({ demoWorkspaces: ['acme'], gateway: { clock: clockFrom(NOW) } });
  key = await t.key('acme', ['read']);
});

const RECALL = `query Recall($dataset: String!, $query: String!, $first: Int, $asOf: DateTime) {
  dataset(name: $dataset) {
    recall(query: $query, first: $first, asOf: $asOf) {
      facts { relevanceScore fact { factId } }
      memories { relevanceScore memory { memoryId lastUsedAt } }
      context
    }
  }
}`;

interface RecallAnswer {
  facts: { relevanceScore: number; fact: { factId: string } }[];
  memories: { relevanceScore: number; memory: { memoryId: string; lastUsedAt: string | null } }[];
  context: string;
}

async function recall(
  query: string,
  more: { first?: number; asOf?: string; dataset?: string; key?: string } = {},
): Promise<RecallAnswer> {
  const response = await t.request('/graphql', {
    method: 'POST',
    key: more.key ?? key,
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({
      query: RECALL,
      variables: { dataset: more.dataset ?? 'user_42', query, first: more.first, asOf: more.asOf },
    }),
  });
  const body = await response.json();
  expect(body.errors, JSON.stringify(body.errors)).toBeUndefined();
  return body.data.dataset.recall;
}

const factIds = (r: RecallAnswer) => r.facts.map((f) => f.fact.factId);
const memoryIds = (r: RecallAnswer) => r.memories.map((m) => m.memory.memoryId);

describe('Dataset.recall', () => {
  it('finds stemmed forms, ignores stop words, and ranks the best match first with score 1', async () => {
    const r = await recall('Is the user interested in a Toyota?', { asOf: NOW });
    // user + interest + toyota against user alone (the family car); "honda civic is made by
    // honda" shares no term.
    expect(factIds(r)).toEqual([DEMO.facts.toyotaInterest, DEMO.facts.familyCar]);
    expect(r.facts[0]!.relevanceScore).toBe(1);
    expect(r.facts[1]!.relevanceScore).toBeGreaterThan(0);
    // README's worked example.
    expect(r.facts[1]!.relevanceScore).toBe(0.0818);
    expect(memoryIds(r)[0]).toBe(DEMO.memories.toyota);
    // "cars" finds "a family car"; with "user" too, the shorter fact of the two wins.
    expect(factIds(await recall('cars', { asOf: NOW }))).toEqual([DEMO.facts.familyCar]);
    expect(factIds(await recall('which cars is the user interested in', { asOf: NOW }))).toEqual([
      DEMO.facts.familyCar,
      DEMO.facts.toyotaInterest,
    ]);
  });

  it('only facts live at the instant recalled, on both axes', async () => {
    // Now: the Honda interest is superseded, Berlin deleted, the test drive in the future.
    expect(factIds(await recall('honda', { asOf: NOW }))).toEqual([DEMO.facts.hondaMadeBy]);
    expect(factIds(await recall('berlin', { asOf: NOW }))).toEqual([]);
    expect(factIds(await recall('test drive', { asOf: NOW }))).toEqual([]);
    // On 1 June 2026 the user lived in Berlin and was interested in the Honda Civic.
    expect(factIds(await recall('berlin', { asOf: '2026-06-01' }))).toEqual([
      DEMO.facts.livesInBerlin,
    ]);
    expect(factIds(await recall('interested', { asOf: '2026-06-01' }))).toEqual([
      DEMO.facts.hondaInterest,
    ]);
    // The budget held until 1 September 2026.
    expect(factIds(await recall('budget', { asOf: '2026-08-31' }))).toEqual([DEMO.facts.budget]);
    expect(factIds(await recall('budget', { asOf: '2026-09-01' }))).toEqual([]);
  });

  it('memories: the live view at the instant, archived left out', async () => {
    expect(memoryIds(await recall('Berlin', { asOf: NOW }))).toEqual([]);
    expect(memoryIds(await recall('Honda Civic', { asOf: NOW }))).toEqual([]);
    expect(memoryIds(await recall('Honda Civic', { asOf: '2026-06-01' }))).toEqual([
      DEMO.memories.hondaCivic,
    ]);
    expect(memoryIds(await recall('answers', { asOf: NOW }))).toEqual([DEMO.memories.shortAnswers]);
  });

  it('memories matching alike are ordered by their boosts: the pinned one first', async () => {
    // Both hold "user" once among five words; the Toyota memory is pinned.
    const r = await recall('user', { asOf: NOW });
    expect(memoryIds(r)).toEqual([DEMO.memories.toyota, DEMO.memories.shortAnswers]);
    expect(r.memories[1]!.relevanceScore).toBeLessThan(1);
  });

  it('a query of stop words only, or with no matching word, recalls nothing', async () => {
    for (const query of ['what is the', '?!', 'peanuts']) {
      expect(await recall(query, { asOf: NOW })).toEqual({ facts: [], memories: [], context: '' });
    }
  });

  it('first bounds each list; context has one line per fact, then per memory', async () => {
    const r = await recall('user', { first: 1, asOf: NOW });
    expect(r.facts).toHaveLength(1);
    expect(r.memories).toHaveLength(1);
    const lines = r.context.split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^- user .+ \(since \d{4}-\d{2}-\d{2}\)$/);
    expect(lines[1]).toMatch(/^- Memory: /);
    const budget = await recall('budget', { asOf: '2026-08-31' });
    expect(budget.context.split('\n')[0]).toBe(
      '- user has a budget of 20000 euros (since 2026-05-10, until 2026-09-01)',
    );
  });

  it('recalled now, memories get lastUsedAt; recalled at an instant, they do not', async () => {
    const before = await recall('answers', { asOf: NOW });
    expect(before.memories[0]!.memory.lastUsedAt).toBeNull();
    const now = await recall('answers');
    expect(now.memories[0]!.memory.lastUsedAt).not.toBeNull();
    const stored = await t.database.collections.memories.findOne({
      memoryId: DEMO.memories.shortAnswers,
    });
    expect(stored?.lastUsedAt?.toISOString()).toBe(now.memories[0]!.memory.lastUsedAt);
  });

  it('a failed lastUsedAt stamp does not fail the read, and the edge logs it as a warning', async () => {
    const lines: { level: number; msg: string; problems?: string[] }[] = [];
    const logger = pino(
      { level: 'info' },
      { write: (line: string) => lines.push(JSON.parse(line)) },
    );
    const gateway = createGateway({ database: t.database, logger, clock: clockFrom(NOW) });
    const stamp = vi
      .spyOn(t.database.collections.memories, 'bulkWrite')
      .mockRejectedValueOnce(new Error('disk full'));
    try {
      const response = await gateway.fetch(
        new Request('http://gateway.test/graphql', {
          method: 'POST',
          headers: {
            authorization: `Bearer ${key}`,
            'content-type': 'application/json',
            accept: 'application/json',
          },
          body: JSON.stringify({
            query: RECALL,
            variables: { dataset: 'user_42', query: 'answers' },
          }),
        }),
      );
      const body = await response.json();
      expect(response.status).toBe(200);
      expect(body.errors).toBeUndefined();
      expect(
        body.data.dataset.recall.memories.map(
          (m: { memory: { memoryId: string } }) => m.memory.memoryId,
        ),
      ).toEqual([DEMO.memories.shortAnswers]);
      expect(stamp).toHaveBeenCalledTimes(1);
      const warnings = lines.filter((l) => l.msg === 'request answered despite');
      expect(warnings).toHaveLength(1);
      expect(warnings[0]!.level).toBe(40);
      expect(warnings[0]!.problems).toEqual(['lastUsedAt not stamped: disk full']);
    } finally {
      stamp.mockRestore();
    }
  });

  it('another workspace sees nothing; an unknown dataset is null', async () => {
    const stranger = await t.key('stranger', ['read']);
    const response = await t.request('/graphql', {
      method: 'POST',
      key: stranger,
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ query: RECALL, variables: { dataset: 'user_42', query: 'user' } }),
    });
    expect(await response.json()).toEqual({ data: { dataset: null } });
  });

  it('refuses an empty or too long query and first out of range', async () => {
    for (const [variables, message] of [
      [{ query: '' }, /query: must not be empty/],
      [{ query: 'a'.repeat(2001) }, /query: must be at most 2000 characters/],
      [{ query: 'user', first: 0 }, /first: must be between 1 and 50/],
      [{ query: 'user', first: 51 }, /first: must be between 1 and 50/],
    ] as const) {
      const response = await t.request('/graphql', {
        method: 'POST',
        key,
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ query: RECALL, variables: { dataset: 'user_42', ...variables } }),
      });
      const body = await response.json();
      expect(body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
      expect(body.errors[0].message).toMatch(message);
    }
  });
});
