import { Writable } from 'node:stream';
import {
  type Client as CurrentClient,
  ProtocolError,
  ResourceNotFoundError,
} from '@modelcontextprotocol/client';
import type { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Scope } from '../../src/domain/apiKey.js';
import { createGateway, type GatewayOptions } from '../../src/http/app.js';
import { createLogger } from '../../src/http/observability.js';
import { MCP_TOOLS } from '../../src/mcp/tools.js';
import { clockFrom, openTestGateway, type TestGateway } from '../helpers/gateway.js';
import {
  CURRENT_META,
  CURRENT_REVISION,
  currentMcpClient,
  type Fetcher,
  mcpClient,
  postMcp,
  textOf,
} from '../helpers/mcp.js';

/**
 * /mcp serves MCP 2026-07-28 (stateless: each request names its revision in
 * `params._meta`, `server/discover` instead of `initialize`) beside the 2025 revisions
 * (`initialize`, as Claude Code's 1.x SDK client does), from one gateway: the same tools,
 * answers, refusals and resources in both eras, each era's own shape where the protocol
 * differs (a result that says it is whole, batches, resource subscriptions).
 */

const DATASET = 'user_42';
const LEGACY_REVISION = '2025-11-25';
const META_REVISION = 'io.modelcontextprotocol/protocolVersion';
const READ_TOOLS = MCP_TOOLS.filter((tool) => tool.annotations.readOnlyHint).map((t) => t.name);
const ALL_TOOLS = MCP_TOOLS.map((tool) => tool.name);

let t: TestGateway;
const closing: { close(): Promise<void> }[] = [];
const gateways: ReturnType<typeof createGateway>[] = [];

beforeAll(async () => {
  // The demo in two workspaces (the same dataset names, their own data); the clock as in
  // test/mcp/tools.test.ts, so the demo's facts believed now are the same on any date.
  t = await openTestGateway({
    demoWorkspaces: ['acme', 'globex'],
    gateway: { clock: clockFrom('2026-12-01T00:00:00Z') },
  });
});

afterAll(async () => {
  for (const client of closing) await client.close();
  for (const gateway of gateways) gateway.beginShutdown();
});

/** What a client sent and was answered, request by request. */
interface Exchange {
  method: string | undefined;
  headers: Headers;
  body: Record<string, unknown> | null;
  status: number;
  answer: string;
}

/** A fetcher into `gateway` that keeps every exchange in `log`. */
function recording(gateway: { fetch: Fetcher }, log: Exchange[]): Fetcher {
  return async (request) => {
    const text = await request.clone().text();
    const body = text ? (JSON.parse(text) as Record<string, unknown>) : null;
    const response = await gateway.fetch(request);
    log.push({
      method: typeof body?.method === 'string' ? body.method : undefined,
      headers: request.headers,
      body,
      status: response.status,
      answer: await response.clone().text(),
    });
    return response;
  };
}

/** The last exchange of a method (a client may send something else meanwhile). */
function lastOf(log: Exchange[], method: string): Exchange {
  const found = log.findLast((e) => e.method === method);
  if (!found) throw new Error(`no ${method} among ${log.map((e) => e.method).join()}`);
  return found;
}

interface Eras {
  key: string;
  legacy: LegacyClient;
  current: CurrentClient;
  /** What each client sent and was answered since it connected. */
  wire: { legacy: Exchange[]; current: Exchange[] };
}

/** A key, and the clients of both eras connected with it to the test gateway. */
async function eras(scopes: Scope[], workspace = 'acme'): Promise<Eras> {
  const key = await t.key(workspace, scopes);
  const wire = { legacy: [] as Exchange[], current: [] as Exchange[] };
  const legacy = await mcpClient('http://gateway.test', key, recording(t.gateway, wire.legacy));
  const current = await currentMcpClient(
    'http://gateway.test',
    key,
    recording(t.gateway, wire.current),
  );
  closing.push(legacy, current);
  return { key, legacy, current, wire };
}

/** A tool call's answer from either era's client, in the fields both eras share. */
interface ToolAnswer {
  isError?: boolean | undefined;
  content: { type: string; text?: string }[];
  structuredContent?: unknown;
}

const callBoth = async (
  { legacy, current }: Eras,
  name: string,
  args: Record<string, unknown> = {},
): Promise<{ legacy: ToolAnswer; current: ToolAnswer }> => ({
  legacy: (await legacy.callTool({ name, arguments: args })) as ToolAnswer,
  current: (await current.callTool({ name, arguments: args })) as ToolAnswer,
});

const textOfAnswer = (answer: ToolAnswer) => textOf(answer as Parameters<typeof textOf>[0]);

/** A tool as `tools/list` describes it, without what a client adds of its own. */
const described = (tool: Record<string, unknown>) => ({
  name: tool.name,
  title: tool.title,
  description: tool.description,
  inputSchema: tool.inputSchema,
  outputSchema: tool.outputSchema,
  annotations: tool.annotations,
});

/** The error a call threw, or a failure if it did not throw. */
async function thrown(call: Promise<unknown>): Promise<{ code: number; message: string }> {
  const outcome = await call.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  if (!('error' in outcome)) {
    throw new Error(`expected an error, answered ${JSON.stringify(outcome.value)}`);
  }
  return outcome.error as { code: number; message: string };
}

/** A gateway on the test database with its own options; its access log lines land in `logs`. */
function gatewayWith(options: Partial<GatewayOptions> = {}) {
  const logs: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line.trim()) logs.push(JSON.parse(line));
      done();
    },
  });
  const gateway = createGateway({
    database: t.database,
    keyUseFlushMs: 0,
    logger: createLogger('info', sink),
    ...options,
  });
  gateways.push(gateway);
  return { gateway, logs };
}

/** The `_meta` a request of the current revision carries, as the v2 client sends it. */

/** A tools/call of the current revision: the claim in its `_meta`. */
const modernCall = (id: number, name: string, args: Record<string, unknown> = {}) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args, _meta: CURRENT_META },
});

/** A body posted to /mcp by hand, with the headers given. */
const post = (
  gateway: { fetch: Fetcher },
  key: string,
  body: unknown,
  headers: Record<string, string> = {},
) => postMcp((request) => gateway.fetch(request), key, body, headers);

/** The headers a client of the current revision sends with a tools/call. */
const modernHeaders = (tool: string) => ({
  'mcp-protocol-version': CURRENT_REVISION,
  'mcp-method': 'tools/call',
  'mcp-name': tool,
});

describe('both eras on one gateway', () => {
  it('the v2 client negotiates 2026-07-28 and the 1.x client 2025-11-25, each on its own path', async () => {
    const both = await eras(['read']);
    expect(both.current.getNegotiatedProtocolVersion()).toBe(CURRENT_REVISION);
    expect(both.current.getServerVersion()?.name).toBe('memory-gateway');
    expect(both.legacy.getServerVersion()?.name).toBe('memory-gateway');
    // The 1.x client initialized: its revision is the one the gateway answered.
    const initialized = both.wire.legacy.find((e) => e.method === 'initialize');
    expect(JSON.parse(initialized?.answer ?? '{}')).toMatchObject({
      result: { protocolVersion: LEGACY_REVISION },
    });
    // The v2 client discovered, and never initialized.
    expect(both.wire.current.map((e) => e.method)).toEqual(['server/discover']);
    expect(JSON.parse(both.wire.current[0]!.answer)).toMatchObject({
      result: { supportedVersions: [CURRENT_REVISION] },
    });
    await both.legacy.listTools();
    await both.current.listTools();
    // Each request says its era: the 1.x client's by its header alone, the v2 client's in
    // its own `_meta` too; only the current revision's results say they are whole. (The 1.x
    // client also tries a GET for a stream of its own, whenever it gets to it: 405.)
    const legacyList = both.wire.legacy.find((e) => e.method === 'tools/list');
    const currentList = both.wire.current.find((e) => e.method === 'tools/list');
    expect(legacyList?.headers.get('mcp-protocol-version')).toBe(LEGACY_REVISION);
    expect(legacyList?.headers.get('mcp-method')).toBeNull();
    expect(JSON.stringify(legacyList?.body)).not.toContain(META_REVISION);
    expect(JSON.parse(legacyList!.answer).result).not.toHaveProperty('resultType');
    expect(currentList?.headers.get('mcp-protocol-version')).toBe(CURRENT_REVISION);
    expect(currentList?.body?.params).toMatchObject({
      _meta: { [META_REVISION]: CURRENT_REVISION },
    });
    expect(JSON.parse(currentList!.answer).result).toMatchObject({ resultType: 'complete' });
  });

  it('tools/list: the same tools, with the same schemas, in both eras', async () => {
    const both = await eras(['read', 'write']);
    const legacy = (await both.legacy.listTools()).tools;
    const current = (await both.current.listTools()).tools;
    expect(legacy.map((tool) => tool.name)).toEqual(ALL_TOOLS);
    expect(current.map((tool) => described(tool))).toEqual(legacy.map((tool) => described(tool)));
    for (const tool of current) {
      expect(tool.inputSchema.type, tool.name).toBe('object');
      expect(tool.outputSchema?.type, tool.name).toBe('object');
    }
  });

  it("a key's scopes filter both lists the same way: a read-only key is offered the read tools", async () => {
    const both = await eras(['read']);
    const legacy = (await both.legacy.listTools()).tools.map((tool) => tool.name);
    const current = (await both.current.listTools()).tools.map((tool) => tool.name);
    expect(READ_TOOLS.length).toBeGreaterThan(0);
    expect(READ_TOOLS.length).toBeLessThan(ALL_TOOLS.length);
    expect(legacy).toEqual(READ_TOOLS);
    expect(current).toEqual(READ_TOOLS);
  });

  it.each([
    ['list_facts', { dataset: DATASET, limit: 10 }],
    ['recall', { dataset: DATASET, query: 'which car is the user interested in' }],
    ['entity_facts', { dataset: DATASET, entity: 'honda civic' }],
  ])('%s answers the same structured content and text in both eras', async (name, args) => {
    const both = await eras(['read']);
    const { legacy, current } = await callBoth(both, name, args);
    expect(legacy.isError, textOfAnswer(legacy)).toBeFalsy();
    expect(current.isError, textOfAnswer(current)).toBeFalsy();
    // Something to compare: the demo dataset's facts.
    expect(JSON.stringify(legacy.structuredContent)).toMatch(/"factId"/);
    expect(current.structuredContent).toEqual(legacy.structuredContent);
    expect(current.content).toEqual(legacy.content);
  });
});

describe('errors read the same in both eras', () => {
  it('an unknown tool is JSON-RPC -32602 "Unknown tool: x", its code prefixed once by the 1.x client and never by the server', async () => {
    const both = await eras(['read']);
    const legacy = await thrown(both.legacy.callTool({ name: 'forget_everything', arguments: {} }));
    const current = await thrown(
      both.current.callTool({ name: 'forget_everything', arguments: {} }),
    );
    expect(legacy).toBeInstanceOf(McpError);
    expect(current).toBeInstanceOf(ProtocolError);
    expect(legacy.code).toBe(-32602);
    expect(current.code).toBe(-32602);
    // The 1.x client puts the code before the message it reads; the v2 client does not.
    expect(legacy.message).toBe('MCP error -32602: Unknown tool: forget_everything');
    expect(current.message).toBe('Unknown tool: forget_everything');
    // And on the wire, both eras' message is the server's own, unprefixed.
    for (const exchange of [
      lastOf(both.wire.legacy, 'tools/call'),
      lastOf(both.wire.current, 'tools/call'),
    ]) {
      expect(JSON.parse(exchange!.answer)).toMatchObject({
        error: { code: -32602, message: 'Unknown tool: forget_everything' },
      });
    }
  });

  it('a tool the key may not call is a FORBIDDEN tool result in both eras, and nothing is written', async () => {
    const both = await eras(['read']);
    const dataset = 'revisions-forbidden';
    const { legacy, current } = await callBoth(both, 'create_memory', {
      dataset,
      input: { text: 'The user likes tea.' },
    });
    expect(legacy.isError).toBe(true);
    expect(current.isError).toBe(true);
    expect(textOfAnswer(legacy)).toMatch(/^FORBIDDEN: .*write/);
    expect(textOfAnswer(current)).toBe(textOfAnswer(legacy));
    expect(await t.database.collections.memories.countDocuments({ dataset })).toBe(0);
  });

  it('an unknown dataset is NOT_FOUND in both eras, with the name it may have meant', async () => {
    const both = await eras(['read']);
    const { legacy, current } = await callBoth(both, 'list_facts', { dataset: 'User_42' });
    const meant = 'NOT_FOUND: No dataset "User_42" in this workspace; did you mean "user_42"?';
    expect(legacy.isError).toBe(true);
    expect(current.isError).toBe(true);
    expect(textOfAnswer(legacy)).toBe(meant);
    expect(textOfAnswer(current)).toBe(meant);
  });
});

describe("the edge's refusals in the current revision", () => {
  it('past the per-key rate limit, a tools/call of 2026-07-28 is a RATE_LIMITED tool result that says it is whole', async () => {
    const { gateway } = gatewayWith({ rateLimitPerMinute: 1 });
    const key = await t.key('acme', ['read']);
    const send = (id: number) =>
      post(gateway, key, modernCall(id, 'list_datasets'), modernHeaders('list_datasets'));
    const first = await send(1);
    expect(first.status).toBe(200);
    expect(((await first.json()) as { result: { isError?: boolean } }).result.isError).toBeFalsy();
    const refused = await send(2);
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
        resultType: 'complete',
      },
    });
    // The same refusal of a 2025 revision's call is that revision's result, with no resultType.
    const legacy = await post(
      gateway,
      key,
      {
        jsonrpc: '2.0',
        id: 3,
        method: 'tools/call',
        params: { name: 'list_datasets', arguments: {} },
      },
      { 'mcp-protocol-version': LEGACY_REVISION },
    );
    expect(legacy.status).toBe(200);
    expect(((await legacy.json()) as { result: Record<string, unknown> }).result).toEqual({
      isError: true,
      content: [{ type: 'text', text: expect.stringMatching(/^RATE_LIMITED: /) }],
    });
  });

  it('the v2 client reads that refusal as a tool result, not a thrown error', async () => {
    // Two points a minute: one for the client's discovery, one for a call that runs.
    const { gateway } = gatewayWith({ rateLimitPerMinute: 2 });
    const key = await t.key('acme', ['read']);
    const wire: Exchange[] = [];
    const client = await currentMcpClient('http://gateway.test', key, recording(gateway, wire));
    closing.push(client);
    const ran = await client.callTool({ name: 'list_datasets', arguments: {} });
    expect(ran.isError).toBeFalsy();
    const refused = await client.callTool({ name: 'list_datasets', arguments: {} });
    expect(refused.isError).toBe(true);
    expect(textOfAnswer(refused as ToolAnswer)).toMatch(/^RATE_LIMITED: Too many requests/);
    // It was the edge's refusal the client read (the limiter's answer, with Retry-After).
    const last = lastOf(wire, 'tools/call');
    expect(JSON.parse(last.answer)).toMatchObject({ result: { resultType: 'complete' } });
  });
});

describe('batches and the current revision', () => {
  const createMemory = (id: number, dataset: string, meta?: Record<string, unknown>) => ({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: {
      name: 'create_memory',
      arguments: { dataset, input: { text: `memory ${id} of a batch` } },
      ...(meta ? { _meta: meta } : {}),
    },
  });
  const refusedWhole = {
    jsonrpc: '2.0',
    id: null,
    error: {
      code: -32600,
      message: `Invalid Request: batches are not part of MCP ${CURRENT_REVISION}; send one message per request`,
    },
  };
  const memoriesIn = (dataset: string) =>
    t.database.collections.memories.countDocuments({ dataset });

  it.each([
    ['without MCP-Protocol-Version', {}],
    // A header naming a revision with batches does not make them the current revision's.
    ['with MCP-Protocol-Version: 2025-03-26', { 'mcp-protocol-version': '2025-03-26' }],
  ])(
    'messages claiming 2026-07-28 in their _meta, %s: refused whole (400, -32600) before anything runs',
    async (_name, headers) => {
      const { gateway, logs } = gatewayWith();
      const key = await t.key('acme', ['read', 'write']);
      const dataset = `batch-claimed-${Object.keys(headers).length}`;
      const response = await post(
        gateway,
        key,
        [createMemory(1, dataset, CURRENT_META), createMemory(2, dataset, CURRENT_META)],
        headers,
      );
      expect(response.status).toBe(400);
      expect(await response.json()).toEqual(refusedWhole);
      expect(await memoriesIn(dataset)).toBe(0);
      expect(logs.filter((l) => l.msg === 'request' && l.operation !== null)).toEqual([]);
      // The same message alone runs: what was refused was the batch.
      const alone = await post(
        gateway,
        key,
        createMemory(3, dataset, CURRENT_META),
        modernHeaders('create_memory'),
      );
      expect(alone.status).toBe(200);
      expect(await memoriesIn(dataset)).toBe(1);
    },
  );

  it('one claiming message among 2025 ones refuses the whole batch', async () => {
    const { gateway } = gatewayWith();
    const key = await t.key('acme', ['read', 'write']);
    const dataset = 'batch-mixed';
    const response = await post(gateway, key, [
      createMemory(1, dataset),
      createMemory(2, dataset, CURRENT_META),
    ]);
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual(refusedWhole);
    expect(await memoriesIn(dataset)).toBe(0);
  });

  it('MCP-Protocol-Version: 2026-07-28 on a batch without claims: refused the same way', async () => {
    const { gateway, logs } = gatewayWith();
    const key = await t.key('acme', ['read', 'write']);
    const dataset = 'batch-header';
    const response = await post(
      gateway,
      key,
      [createMemory(1, dataset), createMemory(2, dataset)],
      { 'mcp-protocol-version': CURRENT_REVISION },
    );
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual(refusedWhole);
    expect(await memoriesIn(dataset)).toBe(0);
    expect(logs.filter((l) => l.msg === 'request' && l.operation !== null)).toEqual([]);
  });
});

describe('the datasets as resources, in both eras', () => {
  let acme: Eras;
  let globex: Eras;

  beforeAll(async () => {
    acme = await eras(['read', 'write']);
    globex = await eras(['read', 'write'], 'globex');
    // A dataset only each workspace has.
    await acme.legacy.callTool({
      name: 'create_memory',
      arguments: { dataset: 'acme-only', input: { text: 'Only acme has this.' } },
    });
    await globex.legacy.callTool({
      name: 'create_memory',
      arguments: { dataset: 'globex-only', input: { text: 'Only globex has this.' } },
    });
  });

  it('resources/templates/list gives memory://dataset/{name} in both eras', async () => {
    const legacy = (await acme.legacy.listResourceTemplates()).resourceTemplates;
    const current = (await acme.current.listResourceTemplates()).resourceTemplates;
    expect(legacy.map((r) => r.uriTemplate)).toEqual(['memory://dataset/{name}']);
    expect(current.map((r) => ({ ...r }))).toEqual(legacy.map((r) => ({ ...r })));
  });

  it("resources/list lists the key's workspace's datasets, never another's, in both eras", async () => {
    for (const [both, own, others] of [
      [acme, 'acme-only', 'globex-only'],
      [globex, 'globex-only', 'acme-only'],
    ] as const) {
      const legacy = (await both.legacy.listResources()).resources;
      const current = (await both.current.listResources()).resources;
      const uris = legacy.map((r) => r.uri);
      expect(uris).toContain(`memory://dataset/${DATASET}`);
      expect(uris).toContain(`memory://dataset/${own}`);
      expect(uris).not.toContain(`memory://dataset/${others}`);
      expect(current.map((r) => r.uri)).toEqual(uris);
      expect(current.find((r) => r.name === own)).toMatchObject({
        uri: `memory://dataset/${own}`,
        mimeType: 'application/json',
      });
    }
  });

  it('resources/read of memory://dataset/user_42 answers JSON with its name and counts, the same in both eras', async () => {
    const uri = `memory://dataset/${DATASET}`;
    const legacy = await acme.legacy.readResource({ uri });
    const current = await acme.current.readResource({ uri });
    expect(legacy.contents).toHaveLength(1);
    const [content] = legacy.contents;
    expect(content).toMatchObject({ uri, mimeType: 'application/json' });
    const read = JSON.parse((content as { text: string }).text) as Record<string, unknown>;
    expect(read).toEqual({
      name: DATASET,
      createdAt: expect.any(String),
      facts: expect.any(Number),
      episodes: expect.any(Number),
      memories: expect.any(Number),
      changes: expect.any(Number),
    });
    // The demo dataset (docs/MCP.md's example): three facts believed now, nothing in its feed.
    expect(read).toMatchObject({ facts: 3, episodes: 3, memories: 2, changes: 0 });
    expect(current.contents.map((c) => ({ ...c }))).toEqual(legacy.contents.map((c) => ({ ...c })));
    // Read under the other workspace's key, the same URI is that workspace's own dataset.
    const other = await globex.current.readResource({ uri });
    expect(JSON.parse((other.contents[0] as { text: string }).text).createdAt).not.toBe(
      read.createdAt,
    );
  });

  it('an unknown dataset is resource-not-found in both eras: the URI in its data, the nearest names in its message', async () => {
    const uri = 'memory://dataset/User_42';
    const legacy = await thrown(acme.legacy.readResource({ uri }));
    const current = await thrown(acme.current.readResource({ uri }));
    // The SDK answers a miss -32602 with data exactly { uri } on every revision (MCP
    // 2026-07-28's rule; -32002 is only accepted from older peers): the v2 client knows it.
    expect(current).toBeInstanceOf(ResourceNotFoundError);
    expect((current as ResourceNotFoundError).uri).toBe(uri);
    expect(current.code).toBe(-32602);
    expect(current.message).toBe('No dataset "User_42" in this workspace; did you mean "user_42"?');
    expect(legacy).toBeInstanceOf(McpError);
    expect(legacy.code).toBe(current.code);
    expect(legacy.message).toBe(`MCP error ${current.code}: ${current.message}`);
    expect((legacy as McpError).data).toEqual({ uri });
    // Another workspace's dataset is not found either.
    const foreign = await thrown(
      acme.current.readResource({ uri: 'memory://dataset/globex-only' }),
    );
    expect(foreign).toBeInstanceOf(ResourceNotFoundError);
  });

  it.each(['https://example.com/user_42', 'memory://dataset/', 'memory://dataset/%E0%A4%A'])(
    'a URI that names no dataset (%s) is -32602 in both eras',
    async (uri) => {
      const legacy = await thrown(acme.legacy.readResource({ uri }));
      const current = await thrown(acme.current.readResource({ uri }));
      expect(legacy.code).toBe(-32602);
      expect(current.code).toBe(-32602);
      expect(current.message).toMatch(/dataset/);
      expect(legacy.message).toBe(`MCP error -32602: ${current.message}`);
      // Invalid params, not a resource that is missing: no URI in its data.
      expect(current).not.toBeInstanceOf(ResourceNotFoundError);
      expect((legacy as McpError).data).toBeUndefined();
    },
  );

  it('a key that may not read the change feed is FORBIDDEN in both eras', async () => {
    const both = await eras(['write']);
    const legacy = await thrown(both.legacy.listResources());
    const current = await thrown(both.current.listResources());
    expect(current.code).toBe(-32000);
    expect(current.message).toMatch(/^FORBIDDEN: /);
    expect(legacy.code).toBe(-32000);
    expect(legacy.message).toBe(`MCP error -32000: ${current.message}`);
  });

  it('resources.subscribe is offered to the current revision only', async () => {
    expect(acme.current.getServerCapabilities()?.resources).toEqual({ subscribe: true });
    expect(acme.legacy.getServerCapabilities()?.resources?.subscribe).toBe(false);
  });
});

describe('CORS on /mcp', () => {
  const ALLOWED = 'https://agents.example';
  const MODERN_HEADERS = 'authorization, content-type, mcp-protocol-version, mcp-method, mcp-name';

  it("a preflight from an allowed origin may send the current revision's Mcp-Method and Mcp-Name; another origin's may not", async () => {
    const { gateway } = gatewayWith({ corsOrigins: [ALLOWED] });
    const preflight = (origin: string) =>
      gateway.fetch(
        new Request('http://gateway.test/mcp', {
          method: 'OPTIONS',
          headers: {
            origin,
            'access-control-request-method': 'POST',
            'access-control-request-headers': MODERN_HEADERS,
          },
        }),
      );
    const allowed = await preflight(ALLOWED);
    expect(allowed.status).toBe(204);
    expect(allowed.headers.get('access-control-allow-origin')).toBe(ALLOWED);
    expect(allowed.headers.get('access-control-allow-methods')).toMatch(/\bPOST\b/);
    const headers = (allowed.headers.get('access-control-allow-headers') ?? '')
      .split(',')
      .map((h) => h.trim().toLowerCase());
    for (const asked of MODERN_HEADERS.split(', ')) expect(headers, asked).toContain(asked);
    const foreign = await preflight('https://evil.example');
    expect(foreign.headers.get('access-control-allow-origin')).toBeNull();
    expect(foreign.headers.get('access-control-allow-headers')).toBeNull();
    // And the call the preflight was for: answered, readable by the page.
    const key = await t.key('acme', ['read']);
    const call = await post(gateway, key, modernCall(1, 'list_datasets'), {
      ...modernHeaders('list_datasets'),
      origin: ALLOWED,
    });
    expect(call.status).toBe(200);
    expect(call.headers.get('access-control-allow-origin')).toBe(ALLOWED);
    expect(await call.json()).toMatchObject({ result: { resultType: 'complete' } });
  });
});
