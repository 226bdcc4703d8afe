import { Writable } from 'node:stream';
import { beforeAll, describe, expect, it } from 'vitest';
import { createLogger, createMetrics, observeDatabase } from '../../src/http/observability.js';
import { QUERY_LIMITS } from '../../src/http/yoga.js';
import { openTestGateway, type TestGateway } from '../helpers/gateway.js';

const logLines: Record<string, unknown>[] = [];
const sink = new Writable({
  write(chunk, _encoding, done) {
    for (const line of chunk.toString().split('\n'))
      if (line.trim()) logLines.push(JSON.parse(line));
    done();
  },
});

let t: TestGateway;
let key: string;
let other: string;
const metrics = createMetrics();

beforeAll(async () => {
  t = await openTestGateway({
    demoWorkspaces: ['acme'],
    clientOptions: { monitorCommands: true },
    gateway: {
      rateLimitPerMinute: 40,
      bodyLimitBytes: 64 * 1024,
      logger: createLogger('info', sink),
      metrics,
    },
  });
  observeDatabase(t.database.client, metrics);
  key = await t.key('acme', ['read', 'write']);
  other = await t.key('acme', ['read']);
});

const post = (query: string, k: string | null = key, extraHeaders: Record<string, string> = {}) =>
  t.request('/graphql', {
    method: 'POST',
    key: k,
    headers: { 'content-type': 'application/json', ...extraHeaders },
    body: JSON.stringify({ query }),
  });

describe('GraphQL abuse limits (graphql-armor), each with a clear error', () => {
  it('depth', async () => {
    let nested = 'factId';
    for (let i = 0; i < QUERY_LIMITS.maxDepth; i++) nested = `supersededBy { ${nested} }`;
    const response = await post(
      `{ dataset(name: "user_42") { fact(id: "3a91c6e8-0f2d-4b57-a8e3-5d1c9b7f2a40") { ${nested} } } }`,
    );
    const body = await response.json();
    expect(body.errors[0].message).toMatch(/depth/i);
    expect(body.data).toBeUndefined();
  });

  it('aliases', async () => {
    const aliases = Array.from(
      { length: QUERY_LIMITS.maxAliases + 1 },
      (_, i) => `a${i}: viewer { workspace }`,
    ).join(' ');
    const body = await (await post(`{ ${aliases} }`)).json();
    expect(body.errors[0].message).toMatch(/alias/i);
  });

  it('directives', async () => {
    const directives = Array.from(
      { length: QUERY_LIMITS.maxDirectives + 1 },
      () => '@include(if: true)',
    ).join(' ');
    const body = await (await post(`{ viewer ${directives} { workspace } }`)).json();
    expect(body.errors[0].message).toMatch(/directive/i);
  });

  it('tokens', async () => {
    const fields = Array.from({ length: QUERY_LIMITS.maxTokens }, () => 'workspace').join(' ');
    const body = await (await post(`{ viewer { ${fields} } }`)).json();
    expect(body.errors[0].message).toMatch(/token/i);
  });

  it('cost', async () => {
    // Shallow enough for the depth limit and short enough for the token limit, but each
    // level doubles the work: the static cost estimate refuses it before anything runs.
    let inner = 'subject predicate object confidence validAt';
    for (let i = 0; i < 6; i++)
      inner = `subject object predicate supersededBy { ${inner} } history { ${inner} }`;
    const body = await (
      await post(
        `{ dataset(name: "user_42") { fact(id: "3a91c6e8-0f2d-4b57-a8e3-5d1c9b7f2a40") { ${inner} } } }`,
      )
    ).json();
    expect(body.errors[0].message).toMatch(/Query Cost limit of 5000 exceeded/);
    expect(body.data).toBeUndefined();
  });

  it('ordinary queries, the README examples and introspection pass', async () => {
    const body = await (
      await post(
        '{ dataset(name: "user_42") { entities { edges { node { name facts { subjectEntity { name } } } } } } }',
      )
    ).json();
    expect(body.errors).toBeUndefined();
    const { getIntrospectionQuery } = await import('graphql');
    const schema = await (await post(getIntrospectionQuery(), null)).json();
    expect(schema.data.__schema.queryType.name).toBe('Query');
  });
});

describe('request body limit', () => {
  it('is a 413 in the GraphQL shape, and nothing runs', async () => {
    const response = await post(`{ viewer { workspace } } # ${'x'.repeat(70 * 1024)}`);
    expect(response.status).toBe(413);
    expect(await response.json()).toEqual({
      errors: [
        {
          message: 'Request body too large (at most 65536 bytes)',
          extensions: { code: 'PAYLOAD_TOO_LARGE' },
        },
      ],
    });
  });

  it("is a 413 in each REST surface's shape", async () => {
    const soda = await t.request('/v1/memory/semantic/datasets/user_42/facts', {
      key,
      method: 'DELETE',
      body: 'x'.repeat(70 * 1024),
    });
    expect([soda.status, await soda.json()]).toEqual([
      413,
      { error: 'Request body too large (at most 65536 bytes)' },
    ]);
  });
});

describe('request ids, logs and metrics', () => {
  it('honours an incoming x-request-id, makes one otherwise, and logs one line per request', async () => {
    const response = await post('query WhoAmI { viewer { workspace } }', key, {
      'x-request-id': 'trace-abc-123',
    });
    expect(response.headers.get('x-request-id')).toBe('trace-abc-123');
    const line = logLines.find((l) => l.requestId === 'trace-abc-123');
    expect(line).toMatchObject({
      msg: 'request',
      method: 'POST',
      route: '/graphql',
      operation: 'WhoAmI',
      workspace: 'acme',
      status: 200,
    });
    expect(typeof line!.latencyMs).toBe('number');
    const bad = await post('{ viewer { workspace } }', key, {
      'x-request-id': 'no spaces allowed <script>',
    });
    expect(bad.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const rest = await t.request('/v1/memory/semantic/datasets/user_42/facts', { key: other });
    const restLine = logLines.find((l) => l.requestId === rest.headers.get('x-request-id'));
    expect(restLine).toMatchObject({
      route: '/v1/memory/semantic/datasets/:dataset/facts',
      status: 200,
      operation: null,
    });
  });

  it('never logs the Authorization header or a key', () => {
    const all = JSON.stringify(logLines);
    expect(all).not.toContain(key);
    expect(all).not.toContain(other);
    expect(all).not.toMatch(/Bearer/i);
    expect(all).not.toMatch(/mk_[0-9a-f]{24}_/);
  });

  it('/metrics exposes requests and latency by route and operation, errors by code, DB command latency, loader batch sizes', async () => {
    await post(
      'query Batch { dataset(name: "user_42") { entities { edges { node { name facts { subjectEntity { name } } } } } } }',
    );
    await post('{ dataset(name: "user_42") { facts(first: 0) { totalCount } } }');
    const text = await (await t.request('/metrics')).text();
    expect(text).toMatch(
      /gateway_http_requests_total\{route="\/graphql",method="POST",status="200"\} \d+/,
    );
    expect(text).toMatch(/gateway_http_request_duration_seconds_bucket\{[^}]*operation="Batch"/);
    expect(text).toMatch(/gateway_graphql_operations_total\{operation="Batch",outcome="ok"\} 1/);
    expect(text).toMatch(/gateway_errors_total\{code="BAD_USER_INPUT"\} \d+/);
    expect(text).toMatch(/gateway_dataloader_batch_size_count\{loader="factsOfEntity"\} \d+/);
    expect(text).toMatch(
      /gateway_db_command_duration_seconds_count\{command="find",outcome="ok"\} \d+/,
    );
  });
});

describe('rate limiting per key', () => {
  it("answers 429 with Retry-After in each surface's shape; other keys are not affected", async () => {
    const limited = await t.key('acme', ['read']);
    const statuses: number[] = [];
    for (let i = 0; i < 40; i++) {
      statuses.push(
        (await t.request('/v1/memory/semantic/datasets/user_42/entities', { key: limited })).status,
      );
    }
    expect(statuses.every((s) => s === 200)).toBe(true);
    const soda = await t.request('/v1/memory/semantic/datasets/user_42/entities', { key: limited });
    expect(soda.status).toBe(429);
    expect(Number(soda.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await soda.json()).toEqual({
      error: 'Too many requests; retry after the time in Retry-After',
    });
    const supa = await t.request('/api/memories', { key: limited });
    expect(supa.status).toBe(429);
    expect(await supa.json()).toMatchObject({ code: 'rate_limited', details: null });
    const gql = await post('{ viewer { workspace } }', limited);
    expect(gql.status).toBe(429);
    expect(await gql.json()).toMatchObject({ errors: [{ extensions: { code: 'RATE_LIMITED' } }] });
    const fresh = await t.key('acme', ['read']);
    expect((await t.request('/api/memories', { key: fresh })).status).toBe(200);
  });
});

describe('production defaults', () => {
  it('introspection and GraphiQL off unless enabled', async () => {
    const prod = await openTestGateway({
      demoWorkspaces: [],
      gateway: { introspection: false, graphiql: false },
    });
    const prodKey = await prod.key('acme', ['read']);
    const { getIntrospectionQuery } = await import('graphql');
    const response = await prod.request('/graphql', {
      method: 'POST',
      key: prodKey,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: getIntrospectionQuery() }),
    });
    const body = await response.json();
    expect(body.errors[0].message).toMatch(/introspection/i);
    const page = await prod.request('/graphql', { headers: { accept: 'text/html' } });
    expect(page.headers.get('content-type') ?? '').not.toMatch(/text\/html/);
    const ordinary = await prod.request('/graphql', {
      method: 'POST',
      key: prodKey,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ viewer { workspace } }' }),
    });
    expect(await ordinary.json()).toEqual({ data: { viewer: { workspace: 'acme' } } });
    const dev = await t.request('/graphql', { headers: { accept: 'text/html' } });
    expect(dev.headers.get('content-type')).toMatch(/text\/html/);
  });
});
