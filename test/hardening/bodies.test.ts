import { beforeAll, describe, expect, it, vi } from 'vitest';
import { GENERIC_ERROR_MESSAGE } from '../../src/errors.js';
import { createLogger } from '../../src/http/observability.js';
import { everyDocument } from '../helpers/database.js';
import { openTestGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * Bodies the gateway cannot read, sent to every route that takes one (found from
 * /openapi.json, and POST /graphql): each is a 4xx in its surface's shape, never a 5xx, and
 * changes nothing. Also: documents nested past the parser's stack, text that could not be
 * read back as sent, and every 5xx logged with its request id.
 */

let t: TestGateway;
let key: string;
const logLines: Record<string, unknown>[] = [];

beforeAll(async () => {
  t = await openTestGateway({
    demoWorkspaces: ['acme'],
    gateway: {
      logger: createLogger('info', {
        write: (line: string) => {
          logLines.push(JSON.parse(line));
        },
      }),
    },
  });
  key = await t.key('acme', ['read', 'write']);
});

interface BodyRoute {
  method: string;
  path: string;
  /** A body the route takes, as JSON. */
  good: unknown;
  shape: 'memorySoda' | 'supaCloud' | 'graphql';
}

/** Every route of /openapi.json that declares a request body, and GraphQL. */
async function bodyRoutes(): Promise<BodyRoute[]> {
  const doc = (await (await t.request('/openapi.json')).json()) as {
    paths: Record<string, Record<string, { requestBody?: unknown; tags?: string[] }>>;
  };
  const routes: BodyRoute[] = [];
  for (const [path, operations] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(operations)) {
      if (!op.requestBody) continue;
      routes.push({
        method: method.toUpperCase(),
        path,
        good: { dataset: 'user_42', query: 'car' },
        shape: path.startsWith('/api/') ? 'supaCloud' : 'memorySoda',
      });
    }
  }
  return [
    ...routes,
    {
      method: 'POST',
      path: '/graphql',
      good: { query: '{ viewer { workspace } }' },
      shape: 'graphql',
    },
  ];
}

const deep = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
const BAD_BODIES: { name: string; type: string | null; body: BodyInit; status: number[] }[] = [
  {
    name: 'text/plain',
    type: 'text/plain',
    body: '{"dataset":"user_42","query":"car"}',
    status: [415],
  },
  {
    name: 'form-encoded',
    type: 'application/x-www-form-urlencoded',
    body: 'dataset=user_42&query=car',
    status: [415, 400],
  },
  {
    name: 'multipart',
    type: 'multipart/form-data; boundary=x',
    body: '--x\r\nContent-Disposition: form-data; name="dataset"\r\n\r\nuser_42\r\n--x--\r\n',
    status: [415, 400],
  },
  {
    name: 'XML',
    type: 'application/xml',
    body: '<recall><query>car</query></recall>',
    status: [415],
  },
  {
    name: 'application/graphql',
    type: 'application/graphql',
    body: '{ viewer { workspace } }',
    status: [415, 400],
  },
  {
    name: 'no content type',
    type: null,
    body: '{"dataset":"user_42","query":"car"}',
    status: [415, 400],
  },
  {
    name: 'an unknown charset',
    type: 'application/json; charset=latin1',
    body: '{"dataset":"user_42","query":"car"}',
    status: [415],
  },
  {
    name: 'JSON of the wrong type (an array)',
    type: 'application/json',
    body: '[1, 2]',
    status: [400],
  },
  {
    name: 'JSON of the wrong type (a string)',
    type: 'application/json',
    body: '"car"',
    status: [400],
  },
  { name: 'JSON of the wrong type (null)', type: 'application/json', body: 'null', status: [400] },
  {
    name: 'truncated JSON',
    type: 'application/json',
    body: '{"dataset": "user_42", "que',
    status: [400],
  },
  { name: 'an empty body', type: 'application/json', body: '', status: [400] },
  {
    name: 'JSON nested 10,000 deep',
    type: 'application/json',
    body: `{"dataset":"user_42","query":"car","x":${deep(10_000)}}`,
    status: [400],
  },
  {
    name: 'bytes that are not UTF-8',
    type: 'application/json',
    body: new Uint8Array([0x7b, 0x22, 0x71, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]),
    status: [400],
  },
];

/** The error body of a surface, for a 4xx. */
function expectShape(shape: BodyRoute['shape'], body: Record<string, unknown>) {
  if (shape === 'memorySoda') expect(Object.keys(body)).toEqual(['error']);
  if (shape === 'supaCloud') expect(Object.keys(body).sort()).toEqual(['code', 'details', 'error']);
  if (shape === 'graphql') expect(Array.isArray(body.errors)).toBe(true);
  expect(JSON.stringify(body)).not.toContain(GENERIC_ERROR_MESSAGE);
}

describe('bodies a route cannot read', () => {
  it('finds the routes that take a body (not a vacuous walk)', async () => {
    const routes = await bodyRoutes();
    expect(routes.map((r) => `${r.method} ${r.path}`)).toEqual([
      'POST /v1/memory/recall',
      'POST /graphql',
    ]);
  });

  it('each bad body to each route: its 4xx in the surface’s shape, nothing changed, nothing logged as an error', async () => {
    const before = await everyDocument(t.database.db);
    const errorsBefore = logLines.filter((l) => l.level === 50).length;
    const seen: string[] = [];
    for (const route of await bodyRoutes()) {
      for (const bad of BAD_BODIES) {
        const headers: Record<string, string> = { accept: 'application/json' };
        if (bad.type) headers['content-type'] = bad.type;
        const response = await t.request(route.path, {
          method: route.method,
          key,
          headers,
          body: bad.body,
        });
        const label = `${route.method} ${route.path} with ${bad.name}`;
        const text = await response.text();
        expect(response.status, `${label}: ${text}`).toBeLessThan(500);
        if (route.shape !== 'graphql') {
          expect(bad.status, `${label}: ${response.status} ${text}`).toContain(response.status);
        } else {
          // GraphQL takes other media types (application/graphql, form-encoded GET-style
          // bodies, multipart): a 2xx or its own 4xx, never a 5xx.
          if (bad.type?.startsWith('application/json') || bad.type === null) {
            expect(response.status, `${label}: ${text}`).toBeGreaterThanOrEqual(400);
          }
        }
        if (response.status >= 400) {
          expect(text, `${label}: ${response.status}`).not.toBe('');
          expectShape(route.shape, JSON.parse(text));
        }
        seen.push(`${label}: ${response.status}`);
      }
    }
    expect(seen).toHaveLength(2 * BAD_BODIES.length);
    expect(await everyDocument(t.database.db)).toEqual(before);
    expect(logLines.filter((l) => l.level === 50)).toHaveLength(errorsBefore);
  });

  it('the media type is compared without regard to case, and charset=utf-8 is taken', async () => {
    for (const type of [
      'APPLICATION/JSON',
      'Application/Json; Charset=UTF-8',
      'application/json;charset="utf-8"',
    ]) {
      const response = await t.request('/v1/memory/recall', {
        method: 'POST',
        key,
        headers: { 'content-type': type },
        body: JSON.stringify({ dataset: 'user_42', query: 'car' }),
      });
      expect(response.status, type).toBe(200);
    }
  });

  it('without a key, 401 comes first, whatever the body', async () => {
    const response = await t.request('/v1/memory/recall', {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'x',
    });
    expect(response.status).toBe(401);
  });
});

describe('a body is read once', () => {
  it('GraphQL and MCP take the body the edge read and checked: no copy of the request is read again', async () => {
    const clone = vi.spyOn(Request.prototype, 'clone');
    try {
      const graphql = await t.request('/graphql', {
        method: 'POST',
        key,
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ query: '{ viewer { workspace } }' }),
      });
      expect(graphql.status).toBe(200);
      expect((await graphql.json()).data.viewer.workspace).toBe('acme');
      const mcp = await t.request('/mcp', {
        method: 'POST',
        key,
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: {
            protocolVersion: '2025-06-18',
            capabilities: {},
            clientInfo: { name: 'bodies', version: '1' },
          },
        }),
      });
      expect(mcp.status).toBe(200);
      expect((await mcp.json()).result.serverInfo).toBeDefined();
      expect(clone).not.toHaveBeenCalled();
    } finally {
      clone.mockRestore();
    }
  });

  it('a GraphQL body that is not JSON, or not an object, is answered as GraphQL over HTTP says', async () => {
    const cases = [
      ['{"query": ', 'POST body sent invalid JSON.'],
      ['null', 'POST body is expected to be object but received null'],
      ['"{ viewer { workspace } }"', 'POST body is expected to be object but received string'],
      ['42', 'POST body is expected to be object but received number'],
    ] as const;
    for (const [body, message] of cases) {
      const response = await t.request('/graphql', {
        method: 'POST',
        key,
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body,
      });
      expect(response.status, body).toBe(400);
      expect((await response.json()).errors[0].message, body).toBe(message);
    }
  });
});

describe('a GraphQL document nested past the parser’s stack', () => {
  const documents = {
    'a directive argument': `{ viewer @skip(if: ${deep(3000)}) { workspace } }`,
    'a field argument': `{ dataset(name: "user_42") { fact(id: ${deep(3000)}) { factId } } }`,
    'an object value': `{ viewer @skip(if: ${'{a:'.repeat(3000)}1${'}'.repeat(3000)}) { workspace } }`,
  };

  it.each(Object.entries(documents))(
    'in %s: QUERY_TOO_COMPLEX (nesting) before parsing, every time; without a key, 401 first',
    async (_where, query) => {
      for (const k of [null, key, key]) {
        const response = await t.request('/graphql', {
          method: 'POST',
          key: k,
          headers: { 'content-type': 'application/json', accept: 'application/json' },
          body: JSON.stringify({ query }),
        });
        const body = await response.json();
        expect(response.status).toBe(k ? 200 : 401);
        expect(body.errors?.[0]?.extensions).toMatchObject(
          k
            ? { code: 'QUERY_TOO_COMPLEX', measure: 'nesting', limit: 64 }
            : { code: 'UNAUTHENTICATED' },
        );
      }
    },
  );

  it('a document at the nesting a real query needs still runs; brackets in strings and comments do not count', async () => {
    const response = await t.request('/graphql', {
      method: 'POST',
      key,
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({
        query: `# ${'['.repeat(200)}\n{ dataset(name: "${'{'.repeat(100)}") { name } viewer { workspace } }`,
      }),
    });
    expect(await response.json()).toEqual({
      data: { dataset: null, viewer: { workspace: 'acme' } },
    });
  });
});

describe('text that could not be read back as sent', () => {
  const LONE = '\ud800';

  it('GraphQL: a lone surrogate in a variable is BAD_USER_INPUT naming where, and nothing is written', async () => {
    const before = await everyDocument(t.database.db);
    const cases = [
      {
        query:
          'mutation($d: String!, $i: MemoryInput!) { createMemory(dataset: $d, input: $i) { memoryId } }',
        variables: {
          d: 'user_42',
          i: { text: `likes ${LONE} tea`, memoryKind: 'fact', scope: 'user', sourceType: 'chat' },
        },
        path: 'i.text',
      },
      {
        query: 'query($d: String!) { dataset(name: $d) { name } }',
        variables: { d: `user${LONE}` },
        path: 'd',
      },
    ];
    for (const c of cases) {
      const response = await t.request('/graphql', {
        method: 'POST',
        key,
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ query: c.query, variables: c.variables }),
      });
      const body = await response.json();
      expect(body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
      expect(body.errors?.[0]?.message).toMatch(
        new RegExp(`^${c.path.replace('.', '\\.')}: must be valid Unicode text`),
      );
    }
    expect(await everyDocument(t.database.db)).toEqual(before);
  });

  it('GraphQL: in the document itself, a syntax error', async () => {
    const response = await t.request('/graphql', {
      method: 'POST',
      key,
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ query: '{ dataset(name: "a\\ud800") { name } }' }),
    });
    expect((await response.json()).errors?.[0]?.extensions?.code).toBe('GRAPHQL_PARSE_FAILED');
  });

  it('REST: 400 in the surface’s shape', async () => {
    const response = await t.request('/v1/memory/recall', {
      method: 'POST',
      key,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ dataset: `user${LONE}`, query: 'car' }),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      error: expect.stringMatching(/^dataset: must be valid Unicode text/),
    });
  });
});

describe('5xx answers are logged', () => {
  it('a 500 is logged at error level with its request id; the client sees the generic message', async () => {
    const db = t.database.collections;
    const original = db.apiKeys.findOne.bind(db.apiKeys);
    db.apiKeys.findOne = (() => {
      throw new Error('boom: an unexpected failure');
    }) as unknown as typeof db.apiKeys.findOne;
    try {
      const response = await t.request('/v1/memory/semantic/datasets/user_42/facts', {
        key,
        headers: { 'x-request-id': 'req-500-test' },
      });
      expect(response.status).toBe(500);
      expect(await response.json()).toEqual({ error: GENERIC_ERROR_MESSAGE });
    } finally {
      db.apiKeys.findOne = original;
    }
    const line = logLines.find((l) => l.requestId === 'req-500-test' && l.level === 50);
    expect(line).toMatchObject({ msg: 'request failed', status: 500 });
    expect(JSON.stringify(line)).toContain('boom: an unexpected failure');
  });

  it('a failure inside a REST route or a GraphQL resolver is logged with its cause', async () => {
    const db = t.database.collections;
    const original = db.facts.find.bind(db.facts);
    db.facts.find = (() => {
      throw new Error('boom: the facts could not be read');
    }) as unknown as typeof db.facts.find;
    try {
      const rest = await t.request('/v1/memory/semantic/datasets/user_42/facts', {
        key,
        headers: { 'x-request-id': 'req-500-rest' },
      });
      expect(rest.status).toBe(500);
      expect(await rest.json()).toEqual({ error: GENERIC_ERROR_MESSAGE });
      const graphql = await t.request('/graphql', {
        method: 'POST',
        key,
        headers: { 'content-type': 'application/json', 'x-request-id': 'req-500-graphql' },
        body: JSON.stringify({
          query: '{ dataset(name: "user_42") { facts(first: 1) { totalCount } } }',
        }),
      });
      expect(graphql.status).toBe(500);
      const body = await graphql.json();
      expect(body.errors[0].message).toBe(GENERIC_ERROR_MESSAGE);
      expect(JSON.stringify(body)).not.toContain('boom');
    } finally {
      db.facts.find = original;
    }
    for (const requestId of ['req-500-rest', 'req-500-graphql']) {
      const line = logLines.find((l) => l.requestId === requestId && l.level === 50);
      expect(line).toMatchObject({ msg: 'request failed', status: 500 });
      expect(JSON.stringify(line)).toContain('boom: the facts could not be read');
    }
  });

  it('a client that hung up is not an error', async () => {
    const db = t.database.collections;
    const original = db.apiKeys.findOne.bind(db.apiKeys);
    const hangUp = new AbortController();
    db.apiKeys.findOne = (() => {
      hangUp.abort();
      throw new Error('the request was abandoned');
    }) as unknown as typeof db.apiKeys.findOne;
    try {
      await t.request('/v1/memory/semantic/datasets/user_42/facts', {
        key,
        headers: { 'x-request-id': 'req-hung-up' },
        signal: hangUp.signal,
      });
    } finally {
      db.apiKeys.findOne = original;
    }
    const lines = logLines.filter((l) => l.requestId === 'req-hung-up');
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.filter((l) => l.level === 50)).toEqual([]);
  });
});
