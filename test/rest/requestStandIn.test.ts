import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestGateway, type TestGateway } from '../helpers/gateway.js';
import { closeServer, listenOnLoopback } from '../helpers/listener.js';

/**
 * On Node, the HTTP server adapter hands the gateway a lightweight stand-in for each
 * request, which builds a whole WHATWG Request (headers copied, an AbortController, a body
 * stream) only when its body or signal is read. A REST GET needs neither: the edge reads
 * the method, URL and headers, and the context's signal only when a stream asks for it.
 * The stand-in marks a built Request with its `requestCache` symbol; a GraphQL POST, which
 * reads its body, shows that the mark is there to see.
 */
let t: TestGateway;
let key: string;
let origin: string;
let server: Awaited<ReturnType<typeof listenOnLoopback>>['server'] | null = null;
const seen: Request[] = [];

const built = (request: Request) =>
  Object.getOwnPropertySymbols(request).some(
    (s) => s.description === 'requestCache' && (request as never)[s] !== undefined,
  );

beforeAll(async () => {
  t = await openTestGateway();
  key = await t.key('acme', ['read']);
  const listener = await listenOnLoopback((request) => {
    seen.push(request);
    return t.gateway.fetch(request);
  });
  server = listener.server;
  origin = listener.origin;
});

afterAll(async () => {
  await closeServer(server);
  await t.database.close();
});

async function requestSeen(path: string, init: RequestInit = {}) {
  seen.length = 0;
  const response = await fetch(`${origin}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${key}`, ...init.headers },
  });
  expect(response.status).toBe(200);
  await response.text();
  expect(seen).toHaveLength(1);
  return seen[0]!;
}

describe('the request stand-in', () => {
  it('a GraphQL POST builds the whole request (its body is read)', async () => {
    const request = await requestSeen('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ viewer { workspace } }' }),
    });
    expect(built(request)).toBe(true);
  });

  it.each([
    '/v1/memory/semantic/datasets/user_42/facts',
    '/v1/memory/semantic/datasets/user_42/entities',
    '/api/memories',
  ])('GET %s answers without building it', async (path) => {
    expect(built(await requestSeen(path))).toBe(false);
  });
});
