import { beforeAll, describe, expect, it } from 'vitest';
import { INSTANT_FORMAT } from '../../src/domain/time.js';
import { DEMO } from '../helpers/demo.js';
import { clockFrom, openTestGateway, type TestGateway } from '../helpers/gateway.js';
import { MEMORY_SODA_FACT_FIELDS } from '../helpers/memorySoda.js';

/** POST /v1/memory/recall against the demo dataset, on 1 December 2026. */

const FACT_FIELDS = [...MEMORY_SODA_FACT_FIELDS, 'relevanceScore'];

let t: TestGateway;
let reader: string;
let writer: string;
let stranger: string;

beforeAll(async () => {
  t = await openTestGateway({
    demoWorkspaces: ['development', 'other'],
    gateway: { clock: clockFrom('2026-12-01T00:00:00Z') },
  });
  reader = await t.key('development', ['read']);
  writer = await t.key('development', ['write']);
  stranger = await t.key('other', ['read']);
});

async function recall(body: unknown, key: string | null = reader, raw = false) {
  const response = await t.request('/v1/memory/recall', {
    method: 'POST',
    key,
    headers: { 'content-type': 'application/json' },
    body: raw ? (body as string) : JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

describe('POST /v1/memory/recall', () => {
  it('answers the live facts that best match, with the 11 fields, a relevanceScore and context', async () => {
    const { status, body } = await recall({
      dataset: 'user_42',
      query: 'Is the user interested in a Toyota?',
    });
    expect(status).toBe(200);
    expect(Object.keys(body)).toEqual(['facts', 'context']);
    expect(body.facts.map((f: { factId: string }) => f.factId)).toEqual([
      DEMO.facts.toyotaInterest,
      DEMO.facts.familyCar,
    ]);
    for (const f of body.facts) expect(Object.keys(f)).toEqual(FACT_FIELDS);
    expect(body.facts[0].relevanceScore).toBe(1);
    expect(body.facts[1].relevanceScore).toBeGreaterThan(0);
    expect(body.facts[1].relevanceScore).toBeLessThan(1);
    expect(body.context).toBe(
      [
        '- user is interested in toyota corolla hybrid (since 2026-08-16)',
        '- user is shopping for a family car (since 2026-05-10)',
      ].join('\n'),
    );
  });

  it('limit and asOf (the facts route format: a date is 00:00:00Z)', async () => {
    const one = await recall({ dataset: 'user_42', query: 'user', limit: 1 });
    expect(one.body.facts).toHaveLength(1);
    const june = await recall({
      dataset: 'user_42',
      query: 'where does the user live',
      asOf: '2026-06-01',
    });
    expect(june.body.facts.map((f: { factId: string }) => f.factId)).toContain(
      DEMO.facts.livesInBerlin,
    );
    const now = await recall({ dataset: 'user_42', query: 'berlin' });
    expect(now.body).toEqual({ facts: [], context: '' });
  });

  it('knownAt replays recall as it would have answered then; explain says why each fact ranked', async () => {
    const question = { dataset: 'user_42', query: 'Is the user interested in a Toyota?' };
    // Before the Toyota interest was recorded (09:14:06), the Honda one was believed.
    const then = await recall({ ...question, knownAt: '2026-08-16T09:14:05Z', explain: true });
    expect(then.status).toBe(200);
    expect(then.body.facts[0].factId).toBe(DEMO.facts.hondaInterest);
    const explanation = then.body.facts[0].explanation;
    expect(Object.keys(explanation)).toEqual(['terms', 'bm25', 'factors', 'score', 'via', 'time']);
    expect(explanation.terms.map((w: { term: string }) => w.term)).toEqual(['interest', 'user']);
    expect(explanation.factors.map((f: { name: string }) => f.name)).toEqual([
      'confidence',
      'recency',
    ]);
    expect(explanation.bm25).toBeCloseTo(
      explanation.terms.reduce((sum: number, w: { weight: number }) => sum + w.weight, 0),
      12,
    );
    // Without explain, the documented fields only; validAt and knownAt as two instants.
    const plain = await recall({
      ...question,
      validAt: '2026-12-01',
      knownAt: '2026-08-16T09:14:05Z',
    });
    expect(plain.body.facts.map((f: { factId: string }) => f.factId)).toEqual(
      then.body.facts.map((f: { factId: string }) => f.factId),
    );
    for (const f of plain.body.facts) expect(Object.keys(f)).toEqual(FACT_FIELDS);
    const bad = await recall({ ...question, knownAt: 'yesterday' });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/knownAt/);
    const notBoolean = await recall({ ...question, explain: 'yes' });
    expect(notBoolean.status).toBe(400);
    expect(notBoolean.body.error).toMatch(/explain/);
  });

  it("an unknown dataset, or another workspace's, answers empty", async () => {
    expect((await recall({ dataset: 'nobody', query: 'user' })).body).toEqual({
      facts: [],
      context: '',
    });
    const theirs = await recall({ dataset: 'user_42', query: 'toyota' }, stranger);
    // The stranger's own demo copy answers for its own workspace; the ids are its own.
    expect(theirs.status).toBe(200);
    const ours = await recall({ dataset: 'user_42', query: 'toyota' });
    expect(theirs.body.context).toBe(ours.body.context);
  });

  it('401 without a valid key, 403 without the read scope', async () => {
    expect((await recall({ dataset: 'user_42', query: 'user' }, null)).status).toBe(401);
    const forbidden = await recall({ dataset: 'user_42', query: 'user' }, writer);
    expect(forbidden.status).toBe(403);
    expect(Object.keys(forbidden.body)).toEqual(['error']);
  });

  it.each([
    ['no query', { dataset: 'user_42' }, /query/],
    ['an empty query', { dataset: 'user_42', query: '' }, /query: must not be empty/],
    [
      'a query too long',
      { dataset: 'user_42', query: 'a'.repeat(2001) },
      /query: must be at most 2000/,
    ],
    ['no dataset', { query: 'user' }, /dataset/],
    ['an empty dataset', { dataset: '', query: 'user' }, /dataset: must not be empty/],
    ['limit 0', { dataset: 'user_42', query: 'user', limit: 0 }, /limit: must be between 1 and 50/],
    [
      'limit 51',
      { dataset: 'user_42', query: 'user', limit: 51 },
      /limit: must be between 1 and 50/,
    ],
    ['limit 1.5', { dataset: 'user_42', query: 'user', limit: 1.5 }, /limit/],
    ['a bad asOf', { dataset: 'user_42', query: 'user', asOf: 'yesterday' }, /asOf/],
    ['an array', [], /./],
    ['a string', 'user', /./],
  ])('400 { "error" } for %s', async (_what, body, message) => {
    const answer = await recall(body);
    expect(answer.status).toBe(400);
    expect(Object.keys(answer.body)).toEqual(['error']);
    expect(answer.body.error).toMatch(message);
  });

  // A date-time says which instant it is only with its zone (docs/COMPATIBILITY.md, "Instants").
  it.each(['asOf', 'validAt', 'knownAt'])(
    '400 { "error" } naming %s for a date-time without a zone',
    async (field) => {
      const answer = await recall({
        dataset: 'user_42',
        query: 'user',
        [field]: '2026-06-01T12:00:00',
      });
      expect(answer.status).toBe(400);
      expect(answer.body).toEqual({ error: `${field}: must be ${INSTANT_FORMAT}` });
    },
  );

  it('400 { "error" } for a body that is not JSON', async () => {
    const answer = await recall('{"dataset": "user_42", "query": ', reader, true);
    expect(answer.status).toBe(400);
    expect(Object.keys(answer.body)).toEqual(['error']);
  });

  it('lies in the Memory Soda surface: 401 first, 404 and 405 in its { "error" } shape', async () => {
    const anonymous = await t.request('/v1/memory/nothing-here', { method: 'POST' });
    expect(anonymous.status).toBe(401);
    expect(Object.keys(await anonymous.json())).toEqual(['error']);
    const unknown = await t.request('/v1/memory/nothing-here', { key: reader });
    expect(unknown.status).toBe(404);
    expect(Object.keys(await unknown.json())).toEqual(['error']);
    const wrongMethod = await t.request('/v1/memory/recall', { key: reader });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toBe('POST');
    expect(Object.keys(await wrongMethod.json())).toEqual(['error']);
  });

  it('is in /openapi.json under the Memory Soda tag', async () => {
    const doc = await (await t.request('/openapi.json')).json();
    expect(doc.paths['/v1/memory/recall'].post.tags).toEqual(['Memory Soda semantic API']);
  });
});
