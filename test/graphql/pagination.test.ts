import { beforeAll, describe, expect, it } from 'vitest';
import { importJsonl } from '../../src/transfer/importJsonl.js';
import { FactsDocument } from '../generated/operations.js';
import { openTestGateway, type TestGateway } from '../helpers/gateway.js';

const uuid = (n: number) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;

let t: TestGateway;
let key: string;
const TIE = '2026-03-01T12:00:00.000Z';

beforeAll(async () => {
  t = await openTestGateway({ demoWorkspaces: [] });
  key = await t.key('acme', ['read']);
  // 25 facts share one validAt (ties broken by factId), 5 others surround them.
  const lines = Array.from({ length: 30 }, (_, i) =>
    JSON.stringify({
      type: 'fact',
      dataset: 'ties',
      factId: uuid(i + 1),
      subject: 'user',
      predicate: `likes thing ${i}`,
      object: 'tea',
      confidence: 0.5,
      validAt: i < 25 ? TIE : `2026-0${(i % 5) + 4}-01T00:00:00.000Z`,
    }),
  );
  const outcome = await importJsonl(t.database.collections, {
    now: new Date(),
    workspace: 'acme',
    content: lines.join('\n'),
  });
  expect(outcome.ok).toBe(true);
});

const facts = (first: number, after: string | null) =>
  t.graphql(FactsDocument, { dataset: 'ties', first, after }, key);

describe('keyset pagination', () => {
  it.each([1, 7, 25, 30, 100])(
    'walking every page of %i returns each fact exactly once, in order',
    async (first) => {
      const seen: string[] = [];
      const validAts: string[] = [];
      let after: string | null = null;
      for (let page = 0; page < 40; page++) {
        const result: Awaited<ReturnType<typeof facts>> = await facts(first, after);
        const conn = result.body.data!.dataset!.facts;
        expect(conn.totalCount).toBe(30);
        seen.push(...conn.edges.map((e) => e.node.factId));
        validAts.push(...conn.edges.map((e) => e.node.validAt));
        if (!conn.pageInfo.hasNextPage) break;
        expect(conn.edges).toHaveLength(first);
        after = conn.pageInfo.endCursor;
      }
      expect(seen).toHaveLength(30);
      expect(new Set(seen).size).toBe(30);
      const expected = Array.from({ length: 30 }, (_, i) => i)
        .map((i) => ({
          id: uuid(i + 1),
          validAt: i < 25 ? TIE : `2026-0${(i % 5) + 4}-01T00:00:00.000Z`,
        }))
        .sort((a, b) =>
          a.validAt === b.validAt ? (a.id < b.id ? 1 : -1) : a.validAt < b.validAt ? 1 : -1,
        )
        .map((f) => f.id);
      expect(seen).toEqual(expected);
      expect([...validAts].sort().reverse()).toEqual(validAts);
    },
  );

  it('the last page says there is no next page and its endCursor leads to an empty page', async () => {
    const { body } = await t.graphql(FactsDocument, { dataset: 'ties', first: 30 }, key);
    const conn = body.data!.dataset!.facts;
    expect(conn.pageInfo.hasNextPage).toBe(false);
    const next = await t.graphql(
      FactsDocument,
      { dataset: 'ties', first: 30, after: conn.pageInfo.endCursor },
      key,
    );
    expect(next.body.data!.dataset!.facts.edges).toEqual([]);
    expect(next.body.data!.dataset!.facts.totalCount).toBe(30);
  });

  it('a cursor whose parts have the wrong type or range is BAD_USER_INPUT, not an empty page', async () => {
    const cursor = (parts: unknown[]) => Buffer.from(JSON.stringify(parts)).toString('base64url');
    for (const after of [
      cursor(['fact', 'not a time', 'x']),
      cursor(['fact', 1.5, 'x']),
      cursor(['fact', 9e15, 'x']),
      cursor(['fact', Date.parse(TIE), 42]),
      cursor(['fact', Date.parse(TIE)]),
    ]) {
      const { body } = await t.graphql(FactsDocument, { dataset: 'ties', first: 5, after }, key);
      expect(body.errors?.[0]?.extensions?.code, after).toBe('BAD_USER_INPUT');
      expect(body.errors?.[0]?.message).toMatch(/^after: .* is not a cursor of this connection$/);
    }
    // A well-formed one still pages.
    const ok = cursor(['fact', Date.parse(TIE), 'ffffffff-ffff-4fff-bfff-ffffffffffff']);
    const { body } = await t.graphql(FactsDocument, { dataset: 'ties', first: 5, after: ok }, key);
    expect(body.errors).toBeUndefined();
    expect(body.data!.dataset!.facts.edges.length).toBe(5);
  });
});
