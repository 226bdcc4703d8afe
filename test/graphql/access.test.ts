import { beforeAll, describe, expect, it, vi } from 'vitest';
import { revokeApiKey } from '../../src/store/workspaces.js';
import {
  DatasetsDocument,
  DeleteFactDocument,
  FactDetailDocument,
  FactsDocument,
  NodeDocument,
  ViewerDocument,
} from '../generated/operations.js';
import { DEMO } from '../helpers/demo.js';
import { openTestGateway, type TestGateway } from '../helpers/gateway.js';

const DATASET = 'user_42';

let t: TestGateway;
let admin: string;
let reader: string;
let other: string;

beforeAll(async () => {
  // Two workspaces with the same demo data: same dataset names, same public ids.
  t = await openTestGateway({ demoWorkspaces: ['acme', 'globex'] });
  admin = await t.key('acme', ['read', 'write', 'admin']);
  reader = await t.key('acme', ['read']);
  other = await t.key('initech', ['read', 'write']);
});

describe('authentication', () => {
  it('no key: 401 UNAUTHENTICATED, and no resolver runs', async () => {
    const { status, body } = await t.graphql(ViewerDocument, {}, null);
    expect(status).toBe(401);
    expect(body.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    expect(body.errors?.[0]?.message).toMatch(/Missing API key/);
    expect(body.data).toBeUndefined();
  });

  it('a malformed, unknown or wrong-secret key: 401', async () => {
    const [, id] = /^mk_([0-9a-f]{24})_/.exec(admin)!;
    for (const bad of [
      'nonsense',
      `mk_${'0'.repeat(24)}_${'A'.repeat(43)}`,
      `mk_${id}_${'B'.repeat(43)}`,
    ]) {
      const { status, body } = await t.graphql(ViewerDocument, {}, bad);
      expect(status).toBe(401);
      expect(body.errors?.[0]?.message).toMatch(/not valid/);
    }
  });

  it('a revoked key: 401', async () => {
    const key = await t.key('acme', ['read']);
    expect((await t.graphql(ViewerDocument, {}, key)).status).toBe(200);
    await revokeApiKey(t.database.collections, key);
    expect((await t.graphql(ViewerDocument, {}, key)).status).toBe(401);
  });

  it('introspection alone needs no key (GraphiQL loads the schema before one is typed)', async () => {
    const response = await t.request('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ __schema { queryType { name } } }' }),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ data: { __schema: { queryType: { name: 'Query' } } } });
    const mixed = await t.request('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ __typename viewer { workspace } }' }),
    });
    expect(mixed.status).toBe(401);
  });
});

describe('tenancy', () => {
  it("another workspace's dataset looks exactly like one that does not exist", async () => {
    const mine = await t.graphql(FactsDocument, { dataset: DATASET }, other);
    expect(mine.body).toEqual({ data: { dataset: null } });
    const missing = await t.graphql(FactsDocument, { dataset: 'no-such-dataset' }, admin);
    expect(missing.body).toEqual({ data: { dataset: null } });
    const datasets = await t.graphql(DatasetsDocument, {}, other);
    expect(datasets.body.data!.datasets.totalCount).toBe(0);
  });

  it("another workspace's fact, through node(id), is null", async () => {
    const facts = await t.graphql(FactsDocument, { dataset: DATASET, first: 1 }, admin);
    const id = facts.body.data!.dataset!.facts.edges[0]!.node.id;
    expect((await t.graphql(NodeDocument, { id }, admin)).body.data!.node).not.toBeNull();
    expect((await t.graphql(NodeDocument, { id }, other)).body.data!.node).toBeNull();
  });

  it("deleting another workspace's fact is NOT_FOUND and changes nothing there", async () => {
    const { body } = await t.graphql(
      DeleteFactDocument,
      { dataset: DATASET, id: DEMO.facts.toyotaInterest },
      other,
    );
    expect(body.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    const still = await t.graphql(
      FactDetailDocument,
      { dataset: DATASET, id: DEMO.facts.toyotaInterest },
      admin,
    );
    expect(still.body.data!.dataset!.fact?.state).toBe('LIVE');
  });
});

describe('deleteFact', () => {
  it('needs the write scope', async () => {
    const { body } = await t.graphql(
      DeleteFactDocument,
      { dataset: DATASET, id: DEMO.facts.familyCar },
      reader,
    );
    expect(body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect(body.errors?.[0]?.message).toMatch(/the write scope/);
  });

  it('soft-deletes once; the second time is NOT_FOUND; the fact stays in the history', async () => {
    const first = await t.graphql(
      DeleteFactDocument,
      { dataset: DATASET, id: DEMO.facts.familyCar },
      admin,
    );
    expect(first.body.errors).toBeUndefined();
    expect(first.body.data!.deleteFact).toMatchObject({
      factId: DEMO.facts.familyCar,
      deleted: true,
      fact: { invalidReason: 'DELETED', state: 'SUPERSEDED' },
    });
    const second = await t.graphql(
      DeleteFactDocument,
      { dataset: DATASET, id: DEMO.facts.familyCar },
      admin,
    );
    expect(second.body.errors?.[0]).toMatchObject({
      message: 'Fact not found',
      extensions: { code: 'NOT_FOUND' },
    });
    const live = await t.graphql(FactsDocument, { dataset: DATASET }, admin);
    expect(live.body.data!.dataset!.facts.edges.map((e) => e.node.factId)).not.toContain(
      DEMO.facts.familyCar,
    );
    const all = await t.graphql(
      FactsDocument,
      { dataset: DATASET, includeInvalidated: true },
      admin,
    );
    expect(all.body.data!.dataset!.facts.edges.map((e) => e.node.factId)).toContain(
      DEMO.facts.familyCar,
    );
    // The other workspace's copy of the same id is untouched.
    const globexKey = await t.key('globex', ['read']);
    const theirs = await t.graphql(
      FactDetailDocument,
      { dataset: DATASET, id: DEMO.facts.familyCar },
      globexKey,
    );
    expect(theirs.body.data!.dataset!.fact?.state).toBe('LIVE');
  });

  it('a fact id that is not a UUID is BAD_USER_INPUT', async () => {
    const { body } = await t.graphql(DeleteFactDocument, { dataset: DATASET, id: 'x' }, admin);
    expect(body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(body.errors?.[0]?.message).toMatch(/id: must be a UUID/);
  });
});

describe('bad arguments', () => {
  const code = async (variables: Record<string, unknown>) => {
    const { body } = await t.graphql(
      FactsDocument,
      { dataset: DATASET, ...variables } as never,
      admin,
    );
    return { code: body.errors?.[0]?.extensions?.code, message: body.errors?.[0]?.message ?? '' };
  };

  it('first outside 1..100 and a foreign cursor are BAD_USER_INPUT naming the argument', async () => {
    expect(await code({ first: 0 })).toMatchObject({
      code: 'BAD_USER_INPUT',
      message: expect.stringMatching(/first/),
    });
    expect(await code({ first: 101 })).toMatchObject({ code: 'BAD_USER_INPUT' });
    expect(await code({ after: 'garbage' })).toMatchObject({
      code: 'BAD_USER_INPUT',
      message: expect.stringMatching(/after/),
    });
    const entityCursor = Buffer.from(JSON.stringify(['entity', 1, 'x'])).toString('base64url');
    expect(await code({ after: entityCursor })).toMatchObject({ code: 'BAD_USER_INPUT' });
  });

  it('DateTime accepts a date alone or a zoned date-time and rejects the rest with a clear message', async () => {
    expect((await code({ asOf: '2026-06-01' })).code).toBeUndefined();
    for (const bad of ['garbage', '2026-06-01T00:00:00', '2026-02-30', '1717200000', '']) {
      const result = await code({ asOf: bad });
      expect(result.code).toBe('BAD_USER_INPUT');
      expect(result.message).toMatch(/ISO 8601/);
    }
  });

  it('an episodeId that is not a UUID is BAD_USER_INPUT', async () => {
    expect(await code({ episodeId: '8b21…' })).toMatchObject({ code: 'BAD_USER_INPUT' });
  });
});

describe('error masking', () => {
  it('a store failure reaches the client as a generic internal error with no details or stack', async () => {
    const spy = vi.spyOn(t.database.collections.facts, 'find').mockImplementation(() => {
      throw new Error('secret connection string mongodb://user:pw@db at /srv/app/store.ts:42');
    });
    try {
      const { body } = await t.graphql(FactsDocument, { dataset: DATASET }, admin);
      expect(body.errors).toEqual([
        {
          message: 'Internal server error',
          path: ['dataset', 'facts'],
          extensions: { code: 'INTERNAL_SERVER_ERROR' },
        },
      ]);
      expect(JSON.stringify(body)).not.toMatch(/secret|mongodb:|store\.ts|stack/);
    } finally {
      spy.mockRestore();
    }
  });
});
