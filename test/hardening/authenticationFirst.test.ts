import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { Transport } from '../../src/context.js';
import { createGateway, type GatewayOptions, MAX_URL_LENGTH } from '../../src/http/app.js';
import { listen } from '../../src/http/server.js';
import { serveGraphqlWebSocket } from '../../src/http/webSocket.js';
import { openTestGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * Authentication first (docs/OPERATIONS.md, "Authentication first"): on every transport
 * and in every mode, a request without a key or with a key that is not valid is answered
 * 401 with `WWW-Authenticate` (graphql-ws: its socket closed with 4403 at
 * `connection_init`) before any rule about its operation answers. Each row is a refusal
 * that a request with a key gets (and that once answered before the key was judged); each
 * runs with no key and with a bad one. Only the cheap guards that read no operation come
 * first; the last test pins them.
 */

type Mode = 'default' | 'trusted-only' | 'production';

interface Row {
  transport: Transport | 'graphql (another method)' | 'mcp (another method)';
  /** The refusal the request gets with a key (what once answered without one). */
  refusal: string;
  mode: Mode;
  send: (authorization: Record<string, string>) => Request;
}

const ORIGIN = 'http://gateway.test';

const post = (path: string, body: string, headers: Record<string, string>) =>
  new Request(`${ORIGIN}${path}`, { method: 'POST', headers, body });

const graphqlPost =
  (body: unknown, accept = 'application/graphql-response+json') =>
  (authorization: Record<string, string>) =>
    post('/graphql', typeof body === 'string' ? body : JSON.stringify(body), {
      'content-type': 'application/json',
      accept,
      ...authorization,
    });

const graphqlGet = (params: Record<string, string>) => (authorization: Record<string, string>) =>
  new Request(`${ORIGIN}/graphql?${new URLSearchParams(params)}`, {
    headers: { accept: 'application/graphql-response+json', ...authorization },
  });

const READ = 'query AuthRead { dataset(name: "user_42") { facts(first: 1) { totalCount } } }';
const UNKNOWN_HASH = { persistedQuery: { version: 1, sha256Hash: '0'.repeat(64) } };
const TOO_MANY_TOKENS = `{ dataset(name: "user_42") { facts(first: 1) { ${'totalCount '.repeat(3100)}} } }`;
const TOO_DEEP_A_VALUE = `{ dataset(name: ${'['.repeat(100)}"x"${']'.repeat(100)}) { name } }`;
const TOO_MANY_ALIASES = `{ ${Array.from({ length: 20 }, (_, i) => `a${i}: viewer { workspace }`).join(' ')} }`;
const INTROSPECTION = '{ __schema { queryType { name } } }';

const mcpCall = (body: string, headers: Record<string, string> = {}) => {
  return (authorization: Record<string, string>) =>
    post('/mcp', body, {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
      ...authorization,
    });
};
const TOOLS_LIST = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });

const ROWS: Row[] = [
  // GraphQL over HTTP POST.
  {
    transport: 'graphql-post',
    refusal: 'text with TRUSTED_DOCUMENTS=only (PERSISTED_QUERY_ONLY)',
    mode: 'trusted-only',
    send: graphqlPost({ query: READ }),
  },
  {
    transport: 'graphql-post',
    refusal: 'an unknown hash (PERSISTED_QUERY_NOT_FOUND)',
    mode: 'default',
    send: graphqlPost({ extensions: UNKNOWN_HASH }),
  },
  {
    transport: 'graphql-post',
    refusal: 'an unknown hash with TRUSTED_DOCUMENTS=only',
    mode: 'trusted-only',
    send: graphqlPost({ extensions: UNKNOWN_HASH }),
  },
  {
    transport: 'graphql-post',
    refusal: 'no query at all (BAD_REQUEST)',
    mode: 'default',
    send: graphqlPost({ variables: {} }),
  },
  {
    transport: 'graphql-post',
    refusal: 'a body that is not JSON',
    mode: 'default',
    send: graphqlPost('{"query": "{ viewer'),
  },
  {
    transport: 'graphql-post',
    refusal: 'a media type GraphQL does not read (415)',
    mode: 'default',
    send: (authorization) =>
      post('/graphql', READ, { 'content-type': 'text/plain', ...authorization }),
  },
  {
    transport: 'graphql-post',
    refusal: 'a syntax error (GRAPHQL_PARSE_FAILED)',
    mode: 'default',
    send: graphqlPost({ query: '{ dataset(' }),
  },
  {
    transport: 'graphql-post',
    refusal: 'a field that does not exist (GRAPHQL_VALIDATION_FAILED)',
    mode: 'default',
    send: graphqlPost({ query: '{ noSuchField }' }),
  },
  {
    transport: 'graphql-post',
    refusal: 'over the token limit (QUERY_TOO_COMPLEX)',
    mode: 'default',
    send: graphqlPost({ query: TOO_MANY_TOKENS }),
  },
  {
    transport: 'graphql-post',
    refusal: 'a value nested past the limit (QUERY_TOO_COMPLEX)',
    mode: 'default',
    send: graphqlPost({ query: TOO_DEEP_A_VALUE }),
  },
  {
    transport: 'graphql-post',
    refusal: 'over the alias limit (QUERY_TOO_COMPLEX)',
    mode: 'default',
    send: graphqlPost({ query: TOO_MANY_ALIASES }),
  },
  {
    transport: 'graphql-post',
    refusal: 'introspection with TRUSTED_DOCUMENTS=only (PERSISTED_QUERY_ONLY)',
    mode: 'trusted-only',
    send: graphqlPost({ query: INTROSPECTION }),
  },
  {
    transport: 'graphql-post',
    refusal: 'a syntax error in production',
    mode: 'production',
    send: graphqlPost({ query: '{ dataset(' }),
  },
  // GraphQL over HTTP GET.
  {
    transport: 'graphql-get',
    refusal: 'a mutation over GET (405)',
    mode: 'default',
    send: graphqlGet({ query: 'mutation { eraseDataset(name: "user_42") { facts } }' }),
  },
  {
    transport: 'graphql-get',
    refusal: 'text with TRUSTED_DOCUMENTS=only (PERSISTED_QUERY_ONLY)',
    mode: 'trusted-only',
    send: graphqlGet({ query: READ }),
  },
  {
    transport: 'graphql-get',
    refusal: 'a syntax error (GRAPHQL_PARSE_FAILED)',
    mode: 'default',
    send: graphqlGet({ query: '{ dataset(' }),
  },
  {
    transport: 'graphql-get',
    refusal: 'variables that are not JSON',
    mode: 'default',
    send: graphqlGet({ query: READ, variables: '{' }),
  },
  // GraphQL over SSE.
  {
    transport: 'graphql-sse',
    refusal: 'text with TRUSTED_DOCUMENTS=only (PERSISTED_QUERY_ONLY)',
    mode: 'trusted-only',
    send: graphqlPost(
      { query: 'subscription { datasetChanges(dataset: "user_42") { id } }' },
      'text/event-stream',
    ),
  },
  {
    transport: 'graphql-sse',
    refusal: 'a syntax error (GRAPHQL_PARSE_FAILED)',
    mode: 'default',
    send: graphqlPost({ query: 'subscription {' }, 'text/event-stream'),
  },
  // /graphql with a method it does not serve.
  {
    transport: 'graphql (another method)',
    refusal: 'PUT on /graphql',
    mode: 'default',
    send: (authorization) =>
      new Request(`${ORIGIN}/graphql`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json', ...authorization },
        body: JSON.stringify({ query: READ }),
      }),
  },
  // The REST routes.
  {
    transport: 'rest',
    refusal: 'a method the route does not take (405)',
    mode: 'default',
    send: (authorization) =>
      new Request(`${ORIGIN}/v1/memory/semantic/datasets/user_42/facts`, {
        method: 'PUT',
        headers: authorization,
      }),
  },
  {
    transport: 'rest',
    refusal: 'an unknown route (404)',
    mode: 'default',
    send: (authorization) => new Request(`${ORIGIN}/api/no-such-route`, { headers: authorization }),
  },
  {
    transport: 'rest',
    refusal: 'a malformed path segment (400)',
    mode: 'default',
    send: (authorization) =>
      new Request(`${ORIGIN}/v1/memory/semantic/datasets/%E0%A4%A/facts`, {
        headers: authorization,
      }),
  },
  {
    transport: 'rest',
    refusal: 'a body that is not JSON (400)',
    mode: 'default',
    send: (authorization) =>
      post('/v1/memory/recall', '{"query":', {
        'content-type': 'application/json',
        ...authorization,
      }),
  },
  // MCP.
  {
    transport: 'mcp',
    refusal: 'a body that is not JSON (-32700)',
    mode: 'default',
    send: mcpCall('{"jsonrpc":'),
  },
  {
    transport: 'mcp',
    refusal: 'an Accept the transport refuses (406)',
    mode: 'default',
    send: mcpCall(TOOLS_LIST, { accept: 'text/html' }),
  },
  {
    transport: 'mcp (another method)',
    refusal: 'GET /mcp (405)',
    mode: 'default',
    send: (authorization) =>
      new Request(`${ORIGIN}/mcp`, {
        headers: { accept: 'text/event-stream', ...authorization },
      }),
  },
  {
    transport: 'mcp (another method)',
    refusal: 'DELETE /mcp (405)',
    mode: 'default',
    send: (authorization) =>
      new Request(`${ORIGIN}/mcp`, { method: 'DELETE', headers: authorization }),
  },
];

/** No key, and a key that is not valid (unknown; revoked and expired keys are judged the same way). */
const KEYS = [
  { name: 'no key', authorization: {}, challenge: /^Bearer realm="memory-gateway"$/ },
  {
    name: 'a bad key',
    authorization: { authorization: `Bearer mk_${'0'.repeat(24)}_${'A'.repeat(43)}` },
    challenge: /^Bearer realm="memory-gateway", error="invalid_token"/,
  },
] as const;

let t: TestGateway;
let gateways: Record<Mode, ReturnType<typeof createGateway>>;
let reader: string;
let admin: string;

beforeAll(async () => {
  t = await openTestGateway({ demoWorkspaces: ['acme'] });
  const open = (options: Partial<GatewayOptions>) =>
    createGateway({ database: t.database, keyUseFlushMs: 0, ...options });
  gateways = {
    default: t.gateway,
    'trusted-only': open({ trustedDocuments: 'only' }),
    production: open({ introspection: false }),
  };
  reader = await t.key('acme', ['read']);
  admin = await t.key('acme', ['read', 'write', 'admin']);
});

describe('authentication first: a request without a valid key is 401 before any rule about its operation', () => {
  const cases = ROWS.flatMap((row) =>
    KEYS.map((key) => ({ ...row, key, title: `${row.transport}: ${row.refusal}, ${key.name}` })),
  );

  it.each(cases)('$title', async ({ mode, send, key }) => {
    const response = await gateways[mode].fetch(send(key.authorization));
    const text = await response.text();
    const where = `${response.status} ${text.slice(0, 300)}`;
    expect(response.status, where).toBe(401);
    expect(response.headers.get('www-authenticate'), where).toMatch(key.challenge);
    expect(text, where).toMatch(/API key/);
    if (response.headers.get('content-type')?.includes('json') && text.includes('"errors"')) {
      const body = JSON.parse(text) as { errors: { extensions?: { code?: string } }[] };
      expect(body.errors[0]?.extensions?.code, where).toBe('UNAUTHENTICATED');
    }
  });

  it.each(ROWS)(
    'with a valid key, the row is refused by its own rule: $transport, $refusal',
    async ({ mode, send }) => {
      // Trusted-only text is the one refusal an admin key escapes: it is refused to a reader.
      const response = await gateways[mode].fetch(
        send({ authorization: `Bearer ${mode === 'trusted-only' ? reader : admin}` }),
      );
      const text = await response.text();
      const failed =
        response.status >= 400 || /"errors"|"error"|"isError":true/.test(text.slice(0, 2000));
      expect(failed, `${response.status} ${text.slice(0, 300)}`).toBe(true);
      expect(response.status, text.slice(0, 300)).not.toBe(401);
    },
  );

  it('introspection without a key still loads (GraphiQL, before a key is typed); with a bad key it is 401', async () => {
    const ask = (authorization: Record<string, string>) =>
      t.gateway.fetch(graphqlPost({ query: INTROSPECTION }, 'application/json')(authorization));
    const keyless = await ask({});
    expect(keyless.status).toBe(200);
    expect(await keyless.json()).toEqual({ data: { __schema: { queryType: { name: 'Query' } } } });
    const refused = await ask(KEYS[1].authorization);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toMatch(KEYS[1].challenge);
    // The GraphiQL page is not an operation: it loads whatever the Authorization header says.
    const page = await t.gateway.fetch(
      new Request(`${ORIGIN}/graphql`, { headers: { accept: 'text/html' } }),
    );
    expect(page.status).toBe(200);
  });
});

describe('graphql-ws: the key at connection_init comes before any operation', () => {
  let server: Server;
  let url: string;
  let closeSockets: () => Promise<void>;

  beforeAll(async () => {
    const gateway = gateways['trusted-only'];
    server = await new Promise<Server>((resolve) => {
      const s = listen(gateway.fetch, { port: 0, hostname: '127.0.0.1' }, () => resolve(s));
    });
    closeSockets = serveGraphqlWebSocket(server, gateway, {}).close;
    url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
  });

  afterAll(async () => {
    await closeSockets();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  /**
   * Opens a socket, sends `messages` at once and reads how it closes. graphql-ws itself
   * closes a socket whose subscribe comes before the acknowledgement with 4401.
   */
  const closeOf = (messages: object[]) =>
    new Promise<{ code: number; reason: string; received: string[] }>((resolve, reject) => {
      const socket = new WebSocket(url, 'graphql-transport-ws');
      const received: string[] = [];
      socket.on('message', (data) => received.push(String(data)));
      socket.on('error', reject);
      socket.on('open', () => {
        for (const message of messages) socket.send(JSON.stringify(message));
      });
      socket.on('close', (code, reason) => resolve({ code, reason: String(reason), received }));
    });

  it.each([
    ['text with TRUSTED_DOCUMENTS=only', READ],
    ['a syntax error', '{ dataset('],
  ])('%s: closed before any operation is read, no key and a bad key', async (_name, query) => {
    const subscribe = { id: '1', type: 'subscribe', payload: { query } };
    for (const key of KEYS) {
      const init = { type: 'connection_init', payload: key.authorization };
      const refused = await closeOf([init]);
      expect(refused.code, JSON.stringify(refused)).toBe(4403);
      expect(refused.reason).toMatch(/^UNAUTHENTICATED: /);
      const early = await closeOf([init, subscribe]);
      expect([4401, 4403], JSON.stringify(early)).toContain(early.code);
      expect(early.received).toEqual([]);
    }
  });
});

describe('the cheap guards before the key: they read no operation and protect the key check', () => {
  it('Host, CORS preflight, URL length, per-address rate limit, body size and MCP Origin answer first', async () => {
    const guarded = createGateway({
      database: t.database,
      keyUseFlushMs: 0,
      allowedHosts: ['gateway.test'],
      rateLimitPerAddressPerMinute: 1,
      bodyLimitBytes: 1024,
    });
    const status = async (request: Request) => (await guarded.fetch(request)).status;
    expect(await status(new Request('http://elsewhere.test/graphql', { method: 'POST' }))).toBe(
      403,
    );
    expect(
      await status(
        new Request(`${ORIGIN}/graphql`, {
          method: 'OPTIONS',
          headers: { origin: 'https://app.test', 'access-control-request-method': 'POST' },
        }),
      ),
    ).toBe(204);
    expect(await status(new Request(`${ORIGIN}/graphql?q=${'x'.repeat(MAX_URL_LENGTH)}`))).toBe(
      414,
    );
    expect(
      await status(
        post('/mcp', TOOLS_LIST, {
          'content-type': 'application/json',
          origin: 'https://elsewhere.test',
        }),
      ),
    ).toBe(403);
    expect(
      await status(post('/graphql', 'x'.repeat(2048), { 'content-type': 'application/json' })),
    ).toBe(413);
    // The address's one request of the minute was the 413 (Host, preflight, Origin and URL
    // length come before the count): past it, 429, whatever the key.
    expect(await status(graphqlPost({ query: READ })({}))).toBe(429);
  });
});
