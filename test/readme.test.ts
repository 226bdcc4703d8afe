import { parse } from 'graphql';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_QUERY } from '../src/http/yoga.js';
import { docSection, readDoc } from './helpers/docs.js';
import { openTestGateway, type TestGateway } from './helpers/gateway.js';

/**
 * The GraphQL examples of docs/GRAPHQL.md must return data exactly as written against the
 * demo, and so must the README tour's query and REST call. (The write examples have their
 * tests in test/writes, the key management ones in test/graphql/readmeKeys.test.ts, the live
 * ones in test/live/readmeLive.test.ts, the agent call in test/mcp/docs.test.ts.)
 */
const graphqlPage = readDoc('GRAPHQL.md');
const readme = readDoc('README.md');
const graphqlBlocks = (text: string) =>
  [...text.matchAll(/```graphql\n([\s\S]*?)```/g)]
    .map((m) => m[1]!)
    .filter((query) => !query.trimStart().startsWith('mutation') && !query.includes('apiKeys'));
const examples = graphqlBlocks(graphqlPage);
const tour = graphqlBlocks(readme);

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

describe('docs/GRAPHQL.md examples and the README tour', () => {
  it('has the three documented examples, and the tour reads with one of them', () => {
    expect(examples).toHaveLength(3);
    expect(tour).toHaveLength(1);
    expect(examples).toContain(tour[0]);
  });

  it.each([...examples, ...tour].map((e, i) => [i + 1, e] as const))(
    'example %i returns data',
    async (_n, query) => {
      const { status, body } = await t.graphql(parse(query), {}, key);
      expect(status).toBe(200);
      expect(body.errors).toBeUndefined();
      const data = JSON.stringify(body.data);
      expect(data).toMatch(/toyota corolla hybrid|honda civic/);
    },
  );

  it('the first answers what the page says, before and after 15 January 2035', async () => {
    const count = async (at: string) =>
      ((await answer(examples[0]!, at)) as { dataset: { facts: { totalCount: number } } }).dataset
        .facts.totalCount;
    expect(graphqlPage).toContain('it answers 3 facts until 15 January 2035');
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

  it("the tour's query, titled believed on 1 June, shows each fact's state on that day beside today's", async () => {
    expect(readme).toContain('the facts believed on 1 June 2026');
    const facts = (
      (await answer(tour[0]!, '2026-12-01T00:00:00Z')) as {
        dataset: {
          facts: {
            edges: { node: { object: string; stateThen: string; stateNow: string } }[];
          };
        };
      }
    ).dataset.facts.edges.map((e) => e.node);
    expect(facts).toHaveLength(5);
    // Believed on 1 June on both axes: live then, every one.
    expect(facts.map((f) => f.stateThen)).toEqual(facts.map(() => 'LIVE'));
    // And today, as the text says: the Civic interest superseded since.
    expect(facts.find((f) => f.object === 'honda civic')?.stateNow).toBe('SUPERSEDED');
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

describe('REST calls as the docs show them', () => {
  // Every curl of the README and of docs/REST.md that reads a REST route, sent as written
  // (its URL, with the key the text puts in $KEY).
  const curls = [readme, docSection('REST.md', '# REST compatibility routes')].flatMap((text) =>
    [...text.matchAll(/^curl "(http:\/\/[^"]+)" -H "Authorization: Bearer \$KEY"$/gm)].map(
      (m) => new URL(m[1]!),
    ),
  );

  it("finds the README tour call and the page's three", () => {
    expect(curls).toHaveLength(4);
  });

  it.each(curls.map((url) => [url.pathname + url.search] as const))(
    '%s answers 200 with data',
    async (path) => {
      now = new Date('2026-12-01T00:00:00Z');
      const response = await t.request(path, { key });
      expect(response.status).toBe(200);
      const body = await response.text();
      expect(body).toMatch(/honda civic|toyota corolla hybrid/i);
    },
  );
});
