import { readFileSync } from 'node:fs';
import { parse } from 'graphql';
import { beforeAll, describe, expect, it } from 'vitest';
import { openTestGateway, type TestGateway } from './helpers/gateway.js';

/** The README's GraphQL examples must return data exactly as written against the demo. */
const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
// The reading examples (the write example has its own test in test/writes).
const examples = [...readme.matchAll(/```graphql\n([\s\S]*?)```/g)]
  .map((m) => m[1]!)
  .filter((query) => !query.trimStart().startsWith('mutation'));

let t: TestGateway;
let key: string;

beforeAll(async () => {
  t = await openTestGateway({ demoWorkspaces: ['development'] });
  key = await t.key('development', ['read']);
});

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
});
