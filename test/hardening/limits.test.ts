import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  createLogger,
  createMetrics,
  MAX_OPERATION_LABELS,
  observeDatabase,
} from '../../src/http/observability.js';
import { QUERY_LIMITS } from '../../src/http/queryLimits.js';
import { DEMO } from '../helpers/demo.js';
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

describe('GraphQL abuse limits, each refused as QUERY_TOO_COMPLEX with what was measured', () => {
  /** The one error of a refusal, checked for the shape every limit shares. */
  async function refusal(query: string, measure: string) {
    const response = await post(query, key, { accept: 'application/graphql-response+json' });
    expect(response.status).toBe(400);
    const body = await response.json();
    expect(body.data).toBeUndefined();
    expect(body.errors).toHaveLength(1);
    const [error] = body.errors;
    expect(error.message).not.toMatch(/Syntax Error/);
    expect(error.message).toMatch(new RegExp(`${measure}.*over the limit`));
    expect(error.extensions).toMatchObject({ code: 'QUERY_TOO_COMPLEX', measure });
    // With application/json the same refusal is a 200 (GraphQL over HTTP).
    const legacy = await post(query, key, { accept: 'application/json' });
    expect(legacy.status).toBe(200);
    expect((await legacy.json()).errors[0].extensions.code).toBe('QUERY_TOO_COMPLEX');
    return error.extensions;
  }

  it('depth', async () => {
    let nested = 'factId';
    for (let i = 0; i < QUERY_LIMITS.maxDepth; i++) nested = `supersededBy { ${nested} }`;
    const extensions = await refusal(
      `{ dataset(name: "user_42") { fact(id: "${DEMO.facts.toyotaInterest}") { ${nested} } } }`,
      'depth',
    );
    expect(extensions).toEqual({
      code: 'QUERY_TOO_COMPLEX',
      measure: 'depth',
      // dataset, fact, 12 supersededBy and the leaf factId: fields are counted, leaves included.
      depth: QUERY_LIMITS.maxDepth + 3,
      limit: QUERY_LIMITS.maxDepth,
    });
  });

  it('aliases', async () => {
    const aliases = Array.from(
      { length: QUERY_LIMITS.maxAliases + 1 },
      (_, i) => `a${i}: viewer { workspace }`,
    ).join(' ');
    expect(await refusal(`{ ${aliases} }`, 'aliases')).toMatchObject({
      aliases: QUERY_LIMITS.maxAliases + 1,
      limit: QUERY_LIMITS.maxAliases,
    });
  });

  it('directives', async () => {
    const directives = Array.from(
      { length: QUERY_LIMITS.maxDirectives + 1 },
      () => '@include(if: true)',
    ).join(' ');
    expect(await refusal(`{ viewer ${directives} { workspace } }`, 'directives')).toMatchObject({
      limit: QUERY_LIMITS.maxDirectives,
    });
  });

  it('tokens', async () => {
    const fields = Array.from({ length: QUERY_LIMITS.maxTokens }, () => 'workspace').join(' ');
    expect(await refusal(`{ viewer { ${fields} } }`, 'tokens')).toMatchObject({
      limit: QUERY_LIMITS.maxTokens,
    });
  });

  it('cost', async () => {
    // Shallow enough for the depth limit and short enough for the token limit, but each
    // level multiplies the work: the cost model refuses it before anything runs.
    let inner = 'subject predicate object confidence validAt';
    for (let i = 0; i < 4; i++)
      inner = `subject object predicate supersededBy { ${inner} } history { ${inner} }`;
    const extensions = await refusal(
      `{ dataset(name: "user_42") { fact(id: "${DEMO.facts.toyotaInterest}") { ${inner} } } }`,
      'cost',
    );
    expect(extensions.limit).toBe(QUERY_LIMITS.maxCost);
    expect(extensions.cost).toBeGreaterThan(QUERY_LIMITS.maxCost);
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

describe('an answer after which the connection closes says so', () => {
  it('a 413 says Connection: close, and a client reusing connections goes on', async () => {
    const { listen } = await import('../../src/http/server.js');
    const { Agent, request } = await import('node:http');
    const server = await new Promise<Server>((resolve) => {
      const s = listen(t.gateway.fetch, { port: 0, hostname: '127.0.0.1' }, () => resolve(s));
    });
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const { port } = server.address() as AddressInfo;
    const send = (body: string) =>
      new Promise<{ status: number; connection: string | undefined }>((resolve, reject) => {
        const req = request(
          {
            host: '127.0.0.1',
            port,
            path: '/graphql',
            method: 'POST',
            agent,
            headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
          },
          (res) => {
            res.resume();
            res.on('end', () =>
              resolve({ status: res.statusCode ?? 0, connection: res.headers.connection }),
            );
          },
        );
        req.on('error', reject);
        req.end(body);
      });
    try {
      const tooLarge = await send(
        JSON.stringify({ query: `{ viewer { workspace } } # ${'x'.repeat(70 * 1024)}` }),
      );
      expect(tooLarge).toEqual({ status: 413, connection: 'close' });
      // The same agent's next request: on a new connection, answered.
      const next = await send(JSON.stringify({ query: '{ viewer { workspace } }' }));
      expect(next.status).toBe(200);
    } finally {
      agent.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
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
    // A REST route's line names the operation it runs.
    expect(restLine).toMatchObject({
      route: '/v1/memory/semantic/datasets/:dataset/facts',
      status: 200,
      operation: 'MemorySodaListFacts',
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
      /gateway_http_requests_total\{route="\/graphql",method="POST",status="200",transport="graphql-post"\} \d+/,
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

describe('bounded metrics', () => {
  it('1,000 distinct operation names, and names without a key or too long, add a bounded number of series', async () => {
    const m = createMetrics();
    const g = await openTestGateway({ demoWorkspaces: [], gateway: { metrics: m } });
    const k = await g.key('acme', ['read']);
    const send = (name: string, withKey: string | null) =>
      g.request('/graphql', {
        method: 'POST',
        key: withKey,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: `query ${name} { __typename }` }),
      });
    for (let i = 0; i < 1000; i++) expect((await send(`Op${i}`, k)).status).toBe(200);
    // Introspection-only requests need no key: they are never labelled by their name.
    for (let i = 0; i < 20; i++) await send(`Anonymous${i}_${'x'.repeat(2000)}`, null);
    await send(`Long_${'y'.repeat(5000)}`, k);
    const text = await (await g.request('/metrics')).text();
    const series = (metric: string) =>
      text.split('\n').filter((line) => line.startsWith(`${metric}{`));
    const operations = series('gateway_graphql_operations_total');
    const labels = new Set(operations.map((line) => /operation="([^"]*)"/.exec(line)![1]));
    expect(labels.size).toBe(MAX_OPERATION_LABELS + 2);
    expect(labels).toContain('other');
    expect(labels).toContain('unauthenticated');
    expect(labels).toContain('Op0');
    expect(labels).not.toContain(`Op${MAX_OPERATION_LABELS}`);
    expect(operations.find((l) => l.includes('operation="other"'))).toMatch(
      new RegExp(` ${1000 - MAX_OPERATION_LABELS + 1}$`),
    );
    expect(text).not.toContain('xxxxxxxx');
    expect(text).not.toContain('yyyyyyyy');
    // The latency histogram carries the same bounded label.
    const latencyLabels = new Set(
      series('gateway_http_request_duration_seconds_count').map(
        (line) => /operation="([^"]*)"/.exec(line)![1],
      ),
    );
    expect(latencyLabels.size).toBeLessThanOrEqual(MAX_OPERATION_LABELS + 2);
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

describe('rate limiting per client address, before any key lookup', () => {
  it('made-up keys past the address limit cost no database command', async () => {
    const g = await openTestGateway({
      demoWorkspaces: [],
      clientOptions: { monitorCommands: true },
      gateway: { rateLimitPerAddressPerMinute: 5, rateLimitPerMinute: 1000 },
    });
    const lookups: string[] = [];
    g.database.client.on('commandStarted', (e) => {
      if (e.command.comment === 'store:authenticateApiKey') lookups.push(e.commandName);
    });
    const statuses: number[] = [];
    for (let i = 0; i < 25; i++) {
      const made = `mk_${randomBytes(12).toString('hex')}_${randomBytes(32).toString('base64url').slice(0, 43)}`;
      statuses.push(
        (await g.request('/v1/memory/semantic/datasets/user_42/facts', { key: made })).status,
      );
    }
    expect(statuses.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
    expect(statuses.slice(5)).toEqual(Array(20).fill(429));
    expect(lookups).toHaveLength(5);
    const gql = await g.request('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ viewer { workspace } }' }),
    });
    expect(gql.status).toBe(429);
    expect(await gql.json()).toMatchObject({ errors: [{ extensions: { code: 'RATE_LIMITED' } }] });
    expect(lookups).toHaveLength(5);
  });
});

describe('URL length', () => {
  it("a URL past 8192 characters is a 414 in each surface's shape", async () => {
    const long = 'q'.repeat(9000);
    const soda = await t.request(`/v1/memory/semantic/datasets/user_42/facts?q=${long}`, { key });
    expect([soda.status, await soda.json()]).toEqual([
      414,
      { error: 'URL too long (at most 8192 characters)' },
    ]);
    const supa = await t.request(`/api/memories?as_of=${long}`, { key });
    expect([supa.status, await supa.json()]).toEqual([
      414,
      { code: 'bad_request', error: 'URL too long (at most 8192 characters)', details: null },
    ]);
    const gql = await t.request(`/graphql?query=${long}`, { key });
    expect(gql.status).toBe(414);
    expect(await gql.json()).toEqual({
      errors: [
        {
          message: 'URL too long (at most 8192 characters)',
          extensions: { code: 'URI_TOO_LONG' },
        },
      ],
    });
    // Just under the limit is not refused for its length.
    const under = await t.request(
      `/v1/memory/semantic/datasets/user_42/facts?q=${'q'.repeat(8100)}`,
      { key },
    );
    expect(under.status).toBe(400);
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
