import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGateway } from '../../src/http/app.js';
import { openTestGateway, type TestGateway } from '../helpers/gateway.js';
import { closeServer, listenOnLoopback } from '../helpers/listener.js';

/**
 * Trailing slashes (src/http/trailingSlash.ts): a route's path with a trailing slash is a 308
 * to the path without it, the query kept, whatever the method; on the REST surfaces after the
 * key is checked (401 first, as on any path there); other paths keep their 404; never a
 * redirect off the gateway; on the API paths with the CORS policy's headers.
 */

const BASE = '/v1/memory/semantic';
let t: TestGateway;
let key: string;

beforeAll(async () => {
  t = await openTestGateway({ demoWorkspaces: ['development'] });
  key = await t.key('development', ['read', 'write']);
});

/** The redirect's target (the request made with a valid key unless told), after checking it is a 308 with an empty body. */
async function redirected(path: string, init: RequestInit & { key?: string | null } = {}) {
  const response = await t.request(path, { key, ...init });
  expect(response.status, path).toBe(308);
  expect(await response.text()).toBe('');
  expect(response.headers.get('x-request-id')).toBeTruthy();
  return response.headers.get('location');
}

describe('a trailing slash is a 308 to the path without it', () => {
  it.each([
    [`${BASE}/datasets/user_42/facts/`, `${BASE}/datasets/user_42/facts`],
    [
      `${BASE}/datasets/user_42/facts/?limit=1&x=%2F`,
      `${BASE}/datasets/user_42/facts?limit=1&x=%2F`,
    ],
    [`${BASE}/datasets/user_42/entities/`, `${BASE}/datasets/user_42/entities`],
    ['/v1/memory/recall/', '/v1/memory/recall'],
    ['/api/memories/', '/api/memories'],
    ['/api/memories/?limit=1', '/api/memories?limit=1'],
    ['/graphql/', '/graphql'],
    ['/graphql/?query=%7B__typename%7D', '/graphql?query=%7B__typename%7D'],
    ['/explorer/', '/explorer'],
    ['/docs/', '/docs'],
    ['/openapi.json/', '/openapi.json'],
    ['/mcp/', '/mcp'],
    ['/healthz/', '/healthz'],
    ['/graphql///', '/graphql'],
  ])('GET %s', async (path, location) => {
    expect(await redirected(path)).toBe(location);
  });

  it('for every method (308 keeps the method and body)', async () => {
    for (const method of ['POST', 'DELETE', 'HEAD']) {
      expect(await redirected('/api/memories/', { method, key })).toBe('/api/memories');
    }
    expect(
      await redirected('/graphql/', {
        method: 'POST',
        key,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ __typename }' }),
      }),
    ).toBe('/graphql');
  });

  it('on the REST surfaces the key comes first: without a valid one, a 401 as on any path there', async () => {
    for (const path of ['/api/memories/', `${BASE}/datasets/user_42/facts/`]) {
      for (const k of [null, 'mk_not_a_key']) {
        const response = await t.request(path, { key: k });
        expect(response.status, path).toBe(401);
        expect(response.headers.get('location')).toBeNull();
        await response.body?.cancel();
      }
    }
    // GraphQL's endpoint and the pages need no key to be found.
    expect(await redirected('/graphql/', { key: null })).toBe('/graphql');
    expect(await redirected('/explorer/', { key: null })).toBe('/explorer');
  });

  it('following it answers what the slash-less path answers', async () => {
    for (const path of [`${BASE}/datasets/user_42/facts/?limit=1`, '/api/memories/']) {
      const location = await redirected(path, { key });
      const direct = await t.request(location!, { key });
      expect(direct.status, location!).toBe(200);
      await direct.body?.cancel();
    }
    const graphql = await t.request((await redirected('/graphql/'))!, {
      method: 'POST',
      key,
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    expect(await graphql.json()).toEqual({ data: { __typename: 'Query' } });
    const explorer = await t.request((await redirected('/explorer/'))!, {
      headers: { accept: 'text/html' },
    });
    expect(explorer.status).toBe(200);
    await explorer.body?.cancel();
  });

  it('`/` itself is the landing page, not a redirect', async () => {
    const response = await t.request('/');
    expect(response.status).toBe(200);
    await response.body?.cancel();
  });

  it('a path no route serves without its slash is not redirected: 404, as before', async () => {
    for (const path of ['/api/nothing/', `${BASE}/datasets/`, '/explorer/assets/', '/nothing/']) {
      const response = await t.request(path, { key });
      expect(response.status, path).toBe(404);
      expect(response.headers.get('location'), path).toBeNull();
      await response.body?.cancel();
    }
  });

  it('a method the route does not take is redirected too, and the route answers 405', async () => {
    expect(await redirected('/api/memories/', { method: 'PUT', key })).toBe('/api/memories');
    const response = await t.request('/api/memories', { method: 'PUT', key });
    expect(response.status).toBe(405);
    await response.body?.cancel();
  });
});

describe('never a redirect off the gateway', () => {
  it.each([
    '//evil.example/',
    '//evil.example//',
    '///evil.example/',
    '/\\evil.example/',
    '/\\/evil.example/',
    '/\t/evil.example/',
    '//',
    '//graphql/',
    '/%2F%2Fevil.example/',
  ])('%j is not redirected', async (path) => {
    const response = await t.request(path, { key });
    expect(response.headers.get('location')).toBeNull();
    expect(response.status).toBe(404);
    await response.body?.cancel();
  });

  it('on a real listener too (the request line as sent, no client normalizing it)', async () => {
    const { server, port } = await listenOnLoopback(t.gateway.fetch);
    try {
      const { request } = await import('node:http');
      const ask = (path: string) =>
        new Promise<{ status: number; location: string | undefined }>((resolve, reject) => {
          const headers = { authorization: `Bearer ${key}` };
          const req = request({ host: '127.0.0.1', port, path, headers }, (res) => {
            res.resume();
            resolve({ status: res.statusCode ?? 0, location: res.headers.location });
          });
          req.on('error', reject);
          req.end();
        });
      for (const path of [
        '//evil.example/',
        '///evil.example/',
        '/\\evil.example/',
        '//graphql/',
      ]) {
        const { status, location } = await ask(path);
        expect(location, path).toBeUndefined();
        expect(status, path).not.toBe(308);
      }
      expect(await ask('/api/memories/?limit=1')).toEqual({
        status: 308,
        location: '/api/memories?limit=1',
      });
    } finally {
      await closeServer(server);
    }
  });
});

describe('browsers on other origins', () => {
  const ORIGIN = 'https://front.example';
  let cors: ReturnType<typeof createGateway>;
  beforeAll(() => {
    cors = createGateway({ database: t.database, corsOrigins: [ORIGIN] });
  });
  afterAll(() => {
    cors.beginShutdown();
  });
  const fetchWith = (path: string, init: RequestInit = {}) => {
    const headers = new Headers(init.headers);
    headers.set('authorization', `Bearer ${key}`);
    return cors.fetch(new Request(`http://gateway.test${path}`, { ...init, headers }));
  };

  it('an API redirect carries the CORS headers, and its preflight is answered', async () => {
    for (const path of ['/api/memories/', `${BASE}/datasets/user_42/facts/`, '/graphql/']) {
      const response = await fetchWith(path, { headers: { origin: ORIGIN } });
      expect(response.status, path).toBe(308);
      expect(response.headers.get('access-control-allow-origin'), path).toBe(ORIGIN);
      expect(response.headers.get('vary'), path).toContain('Origin');
      const preflight = await fetchWith(path, {
        method: 'OPTIONS',
        headers: {
          origin: ORIGIN,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'authorization, content-type',
        },
      });
      expect(preflight.status, path).toBe(204);
      expect(preflight.headers.get('access-control-allow-origin'), path).toBe(ORIGIN);
    }
  });

  it('a page redirect carries none', async () => {
    const response = await fetchWith('/explorer/', { headers: { origin: ORIGIN } });
    expect(response.status).toBe(308);
    for (const [name] of response.headers) expect(name).not.toMatch(/^access-control-/);
  });
});
