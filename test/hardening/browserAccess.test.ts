import { beforeAll, describe, expect, it } from 'vitest';
import { LOOPBACK_HOSTS } from '../../src/domain/hostNames.js';
import { createGateway, type GatewayOptions } from '../../src/http/app.js';
import { createMetrics } from '../../src/http/observability.js';
import { openTestGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * Browsers: one CORS policy on GraphQL and REST (answers and errors alike, preflights
 * before authentication and the rate limit, never credentials), no CORS on GraphiQL's
 * page, /docs or /metrics; embedded mode's Host check and the development key's prefill;
 * production's 401 before parsing. In-process; test/e2e/crossOrigin.test.ts plays the
 * same in a real browser.
 */

let t: TestGateway;
let key: string;
const ORIGIN = 'https://front.example';
const BASE = '/v1/memory/semantic';

beforeAll(async () => {
  t = await openTestGateway({ demoWorkspaces: ['acme'] });
  key = await t.key('acme', ['read', 'write']);
});

/**
 * The gateway over the test database, fetched in-process; `peer` is the client address the
 * socket would report (absent: a request made in-process, no socket at all).
 */
function gatewayWith(options: Partial<GatewayOptions>) {
  const gateway = createGateway({ database: t.database, ...options });
  return (url: string, init: RequestInit & { key?: string | null; peer?: string } = {}) => {
    const headers = new Headers(init.headers);
    if (init.key) headers.set('authorization', `Bearer ${init.key}`);
    const env = init.peer ? { incoming: { socket: { remoteAddress: init.peer } } } : undefined;
    return gateway.fetch(
      new Request(url.startsWith('http') ? url : `http://gateway.test${url}`, { ...init, headers }),
      env,
    );
  };
}

const graphqlPost = (query: string) => ({
  method: 'POST',
  headers: { origin: ORIGIN, 'content-type': 'application/json' },
  body: JSON.stringify({ query }),
});

function expectCors(response: Response, allowOrigin = '*') {
  expect(response.headers.get('access-control-allow-origin')).toBe(allowOrigin);
  expect(response.headers.get('access-control-expose-headers')?.toLowerCase()).toContain(
    'x-request-id',
  );
  expect(response.headers.get('access-control-allow-credentials')).toBeNull();
}

function expectNoCors(response: Response) {
  for (const [name] of response.headers) expect(name).not.toMatch(/^access-control-/);
}

describe('CORS_ORIGINS=*', () => {
  it('GraphQL and REST answers, successes and errors, carry the same headers and never credentials', async () => {
    const fetch = gatewayWith({
      corsOrigins: '*',
      rateLimitPerMinute: 5,
      bodyLimitBytes: 2048,
    });
    const answers: [string, Response, number][] = [
      [
        'graphql 200',
        await fetch('/graphql', { ...graphqlPost('{ viewer { workspace } }'), key }),
        200,
      ],
      ['graphql 401', await fetch('/graphql', graphqlPost('{ viewer { workspace } }')), 401],
      [
        'rest 200',
        await fetch(`${BASE}/datasets/user_42/entities`, { headers: { origin: ORIGIN }, key }),
        200,
      ],
      [
        'rest 401',
        await fetch(`${BASE}/datasets/user_42/entities`, { headers: { origin: ORIGIN } }),
        401,
      ],
      ['rest 404', await fetch(`${BASE}/nowhere`, { headers: { origin: ORIGIN }, key }), 404],
      [
        'rest 405',
        await fetch(`${BASE}/datasets/user_42/entities`, {
          method: 'PUT',
          headers: { origin: ORIGIN },
          key,
        }),
        405,
      ],
      ['supaCloud 200', await fetch('/api/memories', { headers: { origin: ORIGIN }, key }), 200],
      [
        'graphql 413',
        await fetch('/graphql', {
          ...graphqlPost(`{ viewer { workspace } } #${'x'.repeat(4000)}`),
          key,
        }),
        413,
      ],
    ];
    for (const [name, response, status] of answers) {
      expect(response.status, name).toBe(status);
      expectCors(response);
    }
    // Past the per-key limit (5 a minute; 6 requests above used this key): a 429, with CORS.
    const limited = await fetch('/api/memories', { headers: { origin: ORIGIN }, key });
    expect(limited.status).toBe(429);
    expectCors(limited);
  });

  it('preflights are answered before authentication and the rate limit, allowing Authorization and Content-Type', async () => {
    const fetch = gatewayWith({ corsOrigins: '*', rateLimitPerMinute: 1 });
    for (const path of ['/graphql', `${BASE}/datasets/user_42/facts/x`, '/api/memories', '/mcp']) {
      for (let i = 0; i < 3; i++) {
        const response = await fetch(path, {
          method: 'OPTIONS',
          headers: {
            origin: ORIGIN,
            'access-control-request-method': 'POST',
            'access-control-request-headers': 'authorization, content-type',
            // Not a key: a preflight is answered without looking at one.
            authorization: 'Bearer nonsense',
          },
        });
        expect(response.status).toBe(204);
        expect(await response.text()).toBe('');
        expect(response.headers.get('access-control-allow-origin')).toBe('*');
        const allowed = response.headers.get('access-control-allow-headers')!.toLowerCase();
        expect(allowed).toContain('authorization');
        expect(allowed).toContain('content-type');
        expect(response.headers.get('access-control-allow-methods')).toMatch(/DELETE/);
        expect(response.headers.get('access-control-allow-credentials')).toBeNull();
      }
    }
    // Nine preflights later, the key's one request a minute is still there.
    const real = await fetch('/api/memories', { headers: { origin: ORIGIN }, key });
    expect(real.status).toBe(200);
  });

  it("GraphiQL's page, /docs, /openapi.json and /metrics carry no CORS headers", async () => {
    const fetch = gatewayWith({ corsOrigins: '*', metrics: createMetrics() });
    const page = await fetch('/graphql', { headers: { origin: ORIGIN, accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    expectNoCors(page);
    for (const path of ['/docs', '/openapi.json', '/metrics']) {
      const response = await fetch(path, { headers: { origin: ORIGIN } });
      expect(response.status, path).toBe(200);
      expectNoCors(response);
    }
  });
});

describe('CORS_ORIGINS as a list, and none', () => {
  it('reflects a listed origin (Vary: Origin) and gives nothing to another', async () => {
    const fetch = gatewayWith({ corsOrigins: [ORIGIN, 'http://localhost:5173'] });
    const listed = await fetch('/graphql', { ...graphqlPost('{ viewer { workspace } }'), key });
    expectCors(listed, ORIGIN);
    expect(listed.headers.get('vary')).toMatch(/Origin/);
    const other = await fetch('/graphql', {
      ...graphqlPost('{ viewer { workspace } }'),
      headers: { origin: 'https://evil.example', 'content-type': 'application/json' },
      key,
    });
    expect(other.status).toBe(200);
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
    expect(other.headers.get('vary')).toMatch(/Origin/);
    const preflight = await fetch(`${BASE}/datasets/x/facts`, {
      method: 'OPTIONS',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'GET' },
    });
    expect(preflight.status).toBe(204);
    expectNoCors(preflight);
  });

  it('with no origins configured (the production default), no answer carries CORS headers', async () => {
    const fetch = gatewayWith({});
    expectNoCors(await fetch('/graphql', { ...graphqlPost('{ viewer { workspace } }'), key }));
    expectNoCors(await fetch('/api/memories', { headers: { origin: ORIGIN }, key }));
  });
});

describe('embedded mode: allowed hosts and the development key', () => {
  const developmentKey = 'mk_000000000000000000000000_development-key-for-tests-only-000000';

  it('refuses a Host that is not allowed, on every route, in the surface’s shape', async () => {
    const fetch = gatewayWith({ allowedHosts: [...LOOPBACK_HOSTS], developmentKey });
    for (const host of ['evil.example', 'evil.example.', '10.0.0.5', 'localhost.evil.example']) {
      const page = await fetch(`http://${host}:3004/graphql`, { headers: { accept: 'text/html' } });
      expect(page.status).toBe(403);
      const text = await page.text();
      expect(text).not.toContain(developmentKey);
      expect(text).toMatch(/ALLOWED_HOSTS/);
      const rest = await fetch(`http://${host}${BASE}/datasets/user_42/facts`, { key });
      expect(rest.status).toBe(403);
      expect(Object.keys(await rest.json())).toEqual(['error']);
      const supa = await fetch(`http://${host}/api/memories`, { key });
      expect(await supa.json()).toMatchObject({ code: 'forbidden' });
      // MCP: a page on a rebound name cannot drive the tools (JSON-RPC's shape).
      const mcp = await fetch(`http://${host}/mcp`, {
        method: 'POST',
        key,
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      expect(mcp.status).toBe(403);
      expect(await mcp.json()).toMatchObject({ error: { data: { code: 'FORBIDDEN' } } });
      expect((await fetch(`http://${host}/healthz`)).status).toBe(403);
    }
    for (const host of ['127.0.0.1:3004', 'localhost', '[::1]:3004', 'LOCALHOST']) {
      const health = await fetch(`http://${host}/healthz`);
      expect(health.status, host).toBe(200);
    }
  });

  it('GraphiQL and the explorer carry the development key only to a loopback Host from a loopback peer', async () => {
    const fetch = gatewayWith({ developmentKey });
    const html = { accept: 'text/html' };
    for (const path of ['/graphql', '/explorer']) {
      for (const host of ['127.0.0.1:3004', 'localhost:3004', '[::1]:3004', '127.0.0.2']) {
        for (const peer of ['127.0.0.1', '::1', '::ffff:127.0.0.1']) {
          const page = await fetch(`http://${host}${path}`, { headers: html, peer });
          expect(await page.text(), `${path} ${host} from ${peer}`).toContain(developmentKey);
        }
      }
      // A loopback Host named by a client elsewhere (an absolute-form request, a proxy), a
      // request with no socket, or another Host: no key.
      for (const peer of ['10.0.0.5', '192.168.1.20', '::ffff:10.0.0.5', undefined]) {
        const page = await fetch(`http://localhost:3004${path}`, { headers: html, peer });
        expect(page.status).toBe(200);
        expect(await page.text(), `${path} from ${peer}`).not.toContain(developmentKey);
      }
      for (const host of ['gateway.test', 'devbox.local:3004', '10.0.0.5']) {
        const page = await fetch(`http://${host}${path}`, { headers: html, peer: '127.0.0.1' });
        expect(page.status).toBe(200);
        expect(await page.text(), host).not.toContain(developmentKey);
      }
    }
  });

  it('GraphiQL opened with an operation (or headers) in its URL carries no key', async () => {
    const fetch = gatewayWith({ developmentKey });
    const mutation = encodeURIComponent(
      'mutation { pinMemory(dataset: "x", memoryId: "y") { version } }',
    );
    for (const search of [
      `query=${mutation}`,
      `variables=${encodeURIComponent('{}')}`,
      'headers=%7B%7D',
      'operationName=Pin',
      'extensions=%7B%7D',
    ]) {
      const page = await fetch(`http://127.0.0.1:3004/graphql?${search}`, {
        headers: { accept: 'text/html' },
        peer: '127.0.0.1',
      });
      expect(page.status).toBe(200);
      expect(await page.text(), search).not.toContain(developmentKey);
    }
  });
});

describe('the pages: never framed, their assets cached and small', () => {
  it('GraphiQL, the API docs and the explorer refuse framing, sniffing and other origins', async () => {
    const fetch = gatewayWith({});
    for (const path of ['/graphql', '/docs', '/explorer']) {
      const page = await fetch(path, { headers: { accept: 'text/html' } });
      expect(page.status, path).toBe(200);
      const policy = page.headers.get('content-security-policy') ?? '';
      for (const directive of [
        "default-src 'none'",
        "script-src 'self'",
        "frame-ancestors 'none'",
      ]) {
        expect(policy, path).toContain(directive);
      }
      expect(page.headers.get('x-frame-options'), path).toBe('DENY');
      expect(page.headers.get('x-content-type-options'), path).toBe('nosniff');
      // No inline script for the policy to allow: every <script> has a src or holds data.
      const html = await page.text();
      for (const tag of html.match(/<script[^>]*>/g) ?? []) {
        expect(tag, path).toMatch(/ src="|type="application\/json"/);
      }
    }
  });

  it('GraphiQL’s page is small and its assets are compressed, cacheable files with an ETag', async () => {
    const fetch = gatewayWith({});
    const page = await fetch('/graphql', { headers: { accept: 'text/html' } });
    const html = await page.text();
    expect(html.length).toBeLessThan(4096);
    expect(page.headers.get('cache-control')).toBe('no-store');
    const sources = [...html.matchAll(/(?:src|href)="(\/graphiql\/assets\/[^"]+)"/g)].map(
      (m) => m[1]!,
    );
    expect(sources.length).toBeGreaterThanOrEqual(3);
    const config = JSON.parse(/id="graphiql-config">(.*?)<\/script>/s.exec(html)![1]!);
    const workers = ['editor.worker.js', 'json.worker.js', 'graphql.worker.js'].map(
      (f) => `${config.assets}/${f}`,
    );
    let plain = 0;
    let sent = 0;
    for (const asset of [...sources, ...workers]) {
      const full = await fetch(asset);
      expect(full.status, asset).toBe(200);
      plain += (await full.arrayBuffer()).byteLength;
      const zipped = await fetch(asset, { headers: { 'accept-encoding': 'gzip, br' } });
      expect(zipped.headers.get('content-encoding'), asset).toBe('gzip');
      expect(zipped.headers.get('cache-control'), asset).toContain('immutable');
      const etag = zipped.headers.get('etag');
      expect(etag, asset).toMatch(/^"[\w-]+"$/);
      sent += (await zipped.arrayBuffer()).byteLength;
      const again = await fetch(asset, { headers: { 'if-none-match': etag! } });
      expect(again.status, asset).toBe(304);
      expect((await again.arrayBuffer()).byteLength).toBe(0);
    }
    // Yoga's page inlined about 9 MB; compressed, a first load sends a third or less.
    expect(plain).toBeGreaterThan(5_000_000);
    expect(sent).toBeLessThan(plain / 3);
    expect((await fetch('/graphiql/assets/nope.js')).status).toBe(404);
  });

  it('page and asset loads count against the client address’s rate limit', async () => {
    const fetch = gatewayWith({ rateLimitPerAddressPerMinute: 3 });
    const statuses: number[] = [];
    for (const path of [
      '/graphql',
      '/docs',
      '/explorer/assets/explorer.css',
      '/docs/assets/docs.js',
    ]) {
      const response = await fetch(path, { headers: { accept: 'text/html' }, peer: '10.9.8.7' });
      statuses.push(response.status);
    }
    expect(statuses.slice(0, 3)).toEqual([200, 200, 200]);
    expect(statuses[3]).toBe(429);
  });
});

describe('production: nothing about the schema without a key', () => {
  const fetchProduction = () => gatewayWith({ introspection: false, graphiql: false });

  it('a request without a valid key is a 401 before parsing or validation', async () => {
    const fetch = fetchProduction();
    const probes: RequestInit[] = [
      graphqlPost('{ dataset(name: "x") { fcts } }'),
      graphqlPost('{ __schema { types { name } } }'),
      graphqlPost('{ not valid graphql'),
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer mk_nope' },
        body: JSON.stringify({ query: '{ dataset(name: "x") { fcts } }' }),
      },
    ];
    for (const probe of probes) {
      const response = await fetch('/graphql', probe);
      expect(response.status).toBe(401);
      const body = (await response.json()) as {
        errors: { message: string; extensions: { code: string } }[];
      };
      expect(body.errors).toHaveLength(1);
      expect(body.errors[0]!.extensions.code).toBe('UNAUTHENTICATED');
      expect(body.errors[0]!.message).not.toMatch(/fcts|Cannot query|Syntax|__schema|Did you mean/);
    }
    const get = await fetch(
      `/graphql?query=${encodeURIComponent('{ dataset(name: "x") { fcts } }')}`,
    );
    expect(get.status).toBe(401);
  });

  it('a valid key still gets validation answers (without suggestions)', async () => {
    const response = await fetchProduction()('/graphql', {
      ...graphqlPost('{ dataset(name: "x") { fcts } }'),
      key,
    });
    const body = (await response.json()) as { errors: { message: string }[] };
    expect(body.errors[0]!.message).toMatch(/Cannot query field "fcts"/);
  });

  it('with introspection on (development), introspection alone still needs no key', async () => {
    const response = await gatewayWith({})(
      '/graphql',
      graphqlPost('{ __schema { queryType { name } } }'),
    );
    expect(response.status).toBe(200);
  });
});
