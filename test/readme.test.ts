import { readFileSync } from 'node:fs';
import { parse } from 'graphql';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_QUERY } from '../src/http/yoga.js';
import { openTestGateway, type TestGateway } from './helpers/gateway.js';

/** The README's GraphQL examples must return data exactly as written against the demo. */
const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
// The reading examples (the write example has its own test in test/writes, the key
// management ones theirs in test/graphql/readmeKeys.test.ts).
const examples = [...readme.matchAll(/```graphql\n([\s\S]*?)```/g)]
  .map((m) => m[1]!)
  .filter((query) => !query.trimStart().startsWith('mutation') && !query.includes('apiKeys'));

let t: TestGateway;
let key: string;
// The clock the gateway reads, set by each test: the README's answers are about dates.
let now = new Date('2026-12-01T00:00:00Z');

beforeAll(async () => {
  t = await openTestGateway({ demoWorkspaces: ['development'], gateway: { clock: () => now } });
  key = await t.key('development', ['read']);
});

const answer = async (query: string, at: string) => {
  now = new Date(at);
  const { status, body } = await t.graphql(parse(query), {}, key);
  expect(status).toBe(200);
  expect(body.errors).toBeUndefined();
  return body.data;
};

describe('README GraphQL examples', () => {
  it('has the three documented examples', () => {
    expect(examples).toHaveLength(3);
  });

  it.each(examples.map((e, i) => [i + 1, e] as const))(
    'example %i returns data',
    async (_n, query) => {
      const { status, body } = await t.graphql(parse(query), {}, key);
      expect(status).toBe(200);
      expect(body.errors).toBeUndefined();
      const data = JSON.stringify(body.data);
      expect(data).toMatch(/toyota corolla hybrid|honda civic/);
    },
  );

  it('the first answers what the README says, before and after 15 January 2035', async () => {
    const count = async (at: string) =>
      ((await answer(examples[0]!, at)) as { dataset: { facts: { totalCount: number } } }).dataset
        .facts.totalCount;
    expect(readme).toContain('it answers 3 facts until 15 January 2035');
    expect(await count('2026-12-01T00:00:00Z')).toBe(3);
    expect(await count('2035-01-15T09:59:59Z')).toBe(3);
    expect(await count('2035-01-15T10:00:00Z')).toBe(4);
  });

  it("GraphiQL's default query answers what its comment says, before and after 15 January 2035", async () => {
    expect(DEFAULT_QUERY).toContain('three until\n# 15 January 2035');
    const count = async (at: string) =>
      ((await answer(DEFAULT_QUERY, at)) as { dataset: { facts: { totalCount: number } } }).dataset
        .facts.totalCount;
    expect(await count('2031-06-01T00:00:00Z')).toBe(3);
    expect(await count('2035-02-01T00:00:00Z')).toBe(4);
  });

  it.each([2, 3])('example %i, pinned with asOf, answers the same on any date', async (n) => {
    const query = examples[n - 1]!;
    expect(query).toContain('asOf:');
    const first = await answer(query, '2026-12-01T00:00:00Z');
    for (const at of ['2031-06-01T00:00:00Z', '2036-01-01T00:00:00Z', '2060-01-01T00:00:00Z']) {
      expect(await answer(query, at), at).toEqual(first);
    }
  });
});
