import type { ServerType } from '@hono/node-server';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGateway } from '../../src/http/app.js';
import { openTestGateway, type TestGateway } from '../helpers/gateway.js';
import { closeServer, listenOnLoopback } from '../helpers/listener.js';
import { callTool, mcpClient } from '../helpers/mcp.js';

/**
 * /mcp as HTTP: the Streamable HTTP transport over a real loopback listener, with the
 * SDK's client and by hand: the key, the protocol revisions, Origin, the methods.
 */

let t: TestGateway;
let server: ServerType;
let origin: string;
let key: string;

beforeAll(async () => {
  t = await openTestGateway();
  key = await t.key('acme', ['read']);
  const gateway = createGateway({
    database: t.database,
    keyUseFlushMs: 0,
    corsOrigins: ['https://agents.example'],
  });
  ({ server, origin } = await listenOnLoopback(gateway.fetch));
});

afterAll(() => closeServer(server));

const ACCEPT = 'application/json, text/event-stream';

/** One JSON-RPC message posted to /mcp, as a client without the SDK sends it. */
function post(body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${origin}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: ACCEPT,
      authorization: `Bearer ${key}`,
      ...headers,
    },
    body: JSON.stringify(body),
  });
}

const initialize = (protocolVersion: string) => ({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion, capabilities: {}, clientInfo: { name: 'by-hand', version: '1' } },
});

describe('/mcp over a loopback listener', () => {
  it("the SDK's client connects with a key and calls a tool", async () => {
    const client = await mcpClient(origin, key);
    expect(client.getServerVersion()?.name).toBe('memory-gateway');
    expect(client.getInstructions()).toMatch(/two time axes/);
    const result = await callTool(client, 'list_datasets');
    expect(result.isError).toBeFalsy();
    await client.close();
  });

  it.each([LATEST_PROTOCOL_VERSION, '2025-06-18', '2025-03-26'])(
    'negotiates protocol revision %s, and answers requests that name it',
    async (version) => {
      const response = await post(initialize(version));
      expect(response.status).toBe(200);
      const body = (await response.json()) as { result: { protocolVersion: string } };
      expect(body.result.protocolVersion).toBe(version);
      const list = await post(
        { jsonrpc: '2.0', id: 2, method: 'tools/list' },
        { 'mcp-protocol-version': version },
      );
      expect(list.status).toBe(200);
      expect(((await list.json()) as { result: { tools: unknown[] } }).result.tools).toHaveLength(
        6,
      );
    },
  );

  it('a revision it does not know is refused (400)', async () => {
    const response = await post(
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
      { 'mcp-protocol-version': '1999-01-01' },
    );
    expect(response.status).toBe(400);
  });

  it('without a key: 401 with WWW-Authenticate: Bearer, in JSON-RPC’s shape', async () => {
    const response = await post(initialize(LATEST_PROTOCOL_VERSION), { authorization: '' });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe('Bearer realm="memory-gateway"');
    expect(await response.json()).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: {
        code: -32000,
        message: expect.stringMatching(/^UNAUTHENTICATED: /),
        data: { code: 'UNAUTHENTICATED' },
      },
    });
    await expect(mcpClient(origin, null)).rejects.toThrow(/401|UNAUTHENTICATED/);
  });

  it('a key that is not valid: 401, invalid_token', async () => {
    const response = await post(initialize(LATEST_PROTOCOL_VERSION), {
      authorization: 'Bearer mk_not_a_key',
    });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toContain('error="invalid_token"');
  });

  it('Origin: another site’s page is refused (403) before the key is looked at; its own and CORS_ORIGINS’ are not', async () => {
    const foreign = await post(initialize(LATEST_PROTOCOL_VERSION), {
      origin: 'https://evil.example',
      authorization: '',
    });
    expect(foreign.status).toBe(403);
    expect(JSON.stringify(await foreign.json())).toMatch(/FORBIDDEN.*Origin/);
    for (const allowed of [origin, 'https://agents.example']) {
      const response = await post(initialize(LATEST_PROTOCOL_VERSION), { origin: allowed });
      expect(response.status, allowed).toBe(200);
    }
    const preflight = await fetch(`${origin}/mcp`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://agents.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type, mcp-protocol-version',
      },
    });
    expect(preflight.headers.get('access-control-allow-headers')).toMatch(/Mcp-Protocol-Version/);
  });

  it('past the per-key rate limit, a tools/call is a RATE_LIMITED tool result, with Retry-After', async () => {
    const limited = createGateway({
      database: t.database,
      keyUseFlushMs: 0,
      rateLimitPerMinute: 1,
    });
    const call = (id: number) =>
      limited.fetch(
        new Request('http://127.0.0.1/mcp', {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: ACCEPT,
            authorization: `Bearer ${key}`,
          },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id,
            method: 'tools/call',
            params: { name: 'list_datasets', arguments: {} },
          }),
        }),
      );
    expect((await call(1)).status).toBe(200);
    const refused = await call(2);
    expect(refused.status).toBe(200);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await refused.json()).toEqual({
      jsonrpc: '2.0',
      id: 2,
      result: {
        isError: true,
        content: [
          { type: 'text', text: expect.stringMatching(/^RATE_LIMITED: Too many requests/) },
        ],
      },
    });
    // Not a tools/call: a JSON-RPC error with the HTTP status.
    const listing = await limited.fetch(
      new Request('http://127.0.0.1/mcp', {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: ACCEPT,
          authorization: `Bearer ${key}`,
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/list' }),
      }),
    );
    expect(listing.status).toBe(429);
    expect(await listing.json()).toMatchObject({
      id: 3,
      error: { data: { code: 'RATE_LIMITED' } },
    });
  });

  it.each(['GET', 'DELETE'])(
    '%s is 405 (stateless: no stream, no session), Allow: POST',
    async (method) => {
      const response = await fetch(`${origin}/mcp`, {
        method,
        headers: { accept: ACCEPT, authorization: `Bearer ${key}` },
      });
      expect(response.status).toBe(405);
      expect(response.headers.get('allow')).toBe('POST');
    },
  );

  it.each([
    ['initialize', { protocolVersion: 7 }, /^Invalid params: params\.protocolVersion: /],
    ['tools/call', { arguments: {} }, /^Invalid params: params\.name: /],
    ['constructor', {}, /Method not found/],
  ])(
    'a %s request whose params do not read is the client’s mistake, naming the field',
    async (method, params, message) => {
      const response = await post({ jsonrpc: '2.0', id: 7, method, params });
      expect(response.status).toBe(200);
      const body = (await response.json()) as {
        id: number;
        error: { code: number; message: string };
      };
      expect(body.id).toBe(7);
      expect(body.error.code).toBe(method === 'constructor' ? -32601 : -32602);
      expect(body.error.message).toMatch(message);
    },
  );

  it('a body that is not JSON is a JSON-RPC parse error (400), never a 500', async () => {
    const response = await fetch(`${origin}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: ACCEPT,
        authorization: `Bearer ${key}`,
      },
      body: '{"jsonrpc": "2.0", ',
    });
    expect(response.status).toBe(400);
    expect(JSON.stringify(await response.json())).toMatch(/-32700|BAD_USER_INPUT/);
  });
});
