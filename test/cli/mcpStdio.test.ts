import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';
import type { ServerType } from '@hono/node-server';
import { Client as CurrentClient, ResourceNotFoundError } from '@modelcontextprotocol/client';
import { StdioClientTransport as CurrentStdioTransport } from '@modelcontextprotocol/client/stdio';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGateway } from '../../src/http/app.js';
import { openTestGateway, type TestGateway } from '../helpers/gateway.js';
import { closeServer, listenOnLoopback } from '../helpers/listener.js';
import { streamsFollowing } from '../helpers/live.js';
import { CURRENT_REVISION } from '../helpers/mcp.js';
import { until } from '../helpers/until.js';

/**
 * The stdio bridge (src/cli/mcpStdio.ts, docs/MCP.md). When the gateway will not serve it,
 * a key the gateway refuses is said as such, once, and apart from a gateway that did not
 * answer at all; the stdio client gets a JSON-RPC error saying the same. When it does, a
 * 2025 client's requests after `initialize` name the revision agreed to, and a client of
 * the current revision (2026-07-28) works through it as over HTTP: each request
 * reaches /mcp with the headers the SDK's HTTP client sends, a refusal's JSON-RPC error
 * reaches the client as the gateway wrote it, and a listen's stream is relayed as it comes
 * and ended when the client cancels it.
 */

const ROOT = new URL('../../', import.meta.url).pathname;
const DATASET_URI = 'memory://dataset/user_42';

/** What reached the gateway's /mcp: each POST's MCP headers and key. */
interface Seen {
  method: string | null;
  name: string | null;
  version: string | null;
  authorization: string | null;
}

let t: TestGateway;
let server: ServerType;
let origin: string;
const seen: Seen[] = [];

beforeAll(async () => {
  t = await openTestGateway({ demoWorkspaces: ['development'] });
  ({ server, origin } = await listenOnLoopback((request) => {
    if (request.method === 'POST') {
      const header = (name: string) => request.headers.get(name);
      seen.push({
        method: header('mcp-method'),
        name: header('mcp-name'),
        version: header('mcp-protocol-version'),
        authorization: header('authorization'),
      });
    }
    return t.gateway.fetch(request);
  }));
});

afterAll(async () => {
  await closeServer(server);
  t.gateway.beginShutdown();
  await t.database.close();
});

/** The bridge's command line and environment, as a stdio client is configured to spawn it. */
const bridgeCommand = (url: string, key: string) => ({
  command: process.execPath,
  args: ['--import', 'tsx', 'src/cli/mcpStdio.ts'],
  cwd: ROOT,
  env: {
    ...(process.env as Record<string, string>),
    MEMORY_GATEWAY_URL: url,
    MEMORY_GATEWAY_KEY: key,
  },
});

/** Spawns the bridge with this URL and key, initializes through it, and answers how it failed. */
async function bridgeFailure(url: string, key: string) {
  const client = new Client({ name: 'stdio-test', version: '1' });
  const transport = new StdioClientTransport({ ...bridgeCommand(url, key), stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const error = await client.connect(transport).then(
    () => null,
    (e: unknown) => e as Error,
  );
  await until(() => stderr.includes('mcp:stdio:'), 'the bridge writes what went wrong');
  // Time for a second line, were one coming: the bridge writes before it answers the client.
  await new Promise((resolve) => setTimeout(resolve, 200));
  await client.close();
  return { message: error?.message ?? '', lines: stderr.trim().split('\n') };
}

/**
 * The SDK's v2 client pinned to the current revision, spawning the bridge over stdio (its
 * `server/discover` probe runs on a sibling process of its own, as the SDK does on stdio).
 */
async function currentClientThroughBridge(url: string, key: string) {
  const client = new CurrentClient(
    { name: 'stdio-agent', version: '2.0.0' },
    { versionNegotiation: { mode: { pin: CURRENT_REVISION } } },
  );
  const transport = new CurrentStdioTransport({ ...bridgeCommand(url, key), stderr: 'pipe' });
  const stderr: string[] = [];
  transport.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));
  await client.connect(transport);
  return { client, stderr };
}

/**
 * The bridge driven line by line, as a stdio client writes to it: `answer` writes one
 * request and resolves with the line answering its id, exactly as the bridge wrote it.
 */
function rawBridge(url: string, key: string) {
  const { command, args, cwd, env } = bridgeCommand(url, key);
  const child: ChildProcessWithoutNullStreams = spawn(command, args, { cwd, env });
  const lines: Record<string, unknown>[] = [];
  createInterface({ input: child.stdout }).on('line', (line) => lines.push(JSON.parse(line)));
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return {
    lines,
    stderr: () => stderr,
    write: (message: object) => child.stdin.write(`${JSON.stringify(message)}\n`),
    async answer(request: { id: string | number }) {
      child.stdin.write(`${JSON.stringify(request)}\n`);
      const answered = () => lines.find((line) => line.id === request.id && !('method' in line));
      await until(() => answered() !== undefined, `the bridge answers ${request.id}`);
      return answered()!;
    },
    close: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.stdin.end();
      }),
  };
}

/** A local port nothing listens on. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** A current-revision request, its `_meta` naming the revision as the SDK's client does. */
const currentRequest = (id: string, method: string, params: Record<string, unknown>) => ({
  jsonrpc: '2.0',
  id,
  method,
  params: {
    ...params,
    _meta: {
      'io.modelcontextprotocol/protocolVersion': CURRENT_REVISION,
      'io.modelcontextprotocol/clientInfo': { name: 'raw-stdio', version: '1' },
      'io.modelcontextprotocol/clientCapabilities': {},
    },
  },
});

/** What the gateway answers the request sent straight to /mcp: its status and body. */
async function direct(gatewayUrl: string, key: string, request: ReturnType<typeof currentRequest>) {
  const response = await fetch(gatewayUrl, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': CURRENT_REVISION,
      'mcp-method': request.method,
    },
    body: JSON.stringify(request),
  });
  return { status: response.status, body: (await response.json()) as unknown };
}

describe('mcp:stdio: when the gateway does not serve the bridge', () => {
  it('a refused key: "the gateway refused the key", with the gateway\'s reason, once', async () => {
    const url = `${origin}/mcp`;
    const { message, lines } = await bridgeFailure(url, 'mk_not_a_key');
    expect(message).toMatch(
      `The gateway at ${url} refused the key: UNAUTHENTICATED: The API key is not valid`,
    );
    expect(message).not.toMatch(/did not answer/);
    expect(lines).toEqual([
      `mcp:stdio: ${url}: the gateway refused the key: UNAUTHENTICATED: The API key is not valid (unknown, revoked or malformed)`,
    ]);
  });

  it('no gateway there: "did not answer", once', async () => {
    const url = `http://127.0.0.1:${await closedPort()}/mcp`;
    const { message, lines } = await bridgeFailure(url, 'mk_not_a_key');
    expect(message).toMatch(`The gateway at ${url} did not answer`);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toBe(
      `mcp:stdio: ${url}: the gateway did not answer: fetch failed (ECONNREFUSED)`,
    );
  });
});

describe('mcp:stdio: a client of a 2025 revision', () => {
  it('initializes through the bridge; later requests name the revision the gateway agreed to', async () => {
    const key = await t.key('development', ['read']);
    const client = new Client({ name: 'stdio-test', version: '1' });
    const transport = new StdioClientTransport({
      ...bridgeCommand(`${origin}/mcp`, key),
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    try {
      seen.length = 0;
      await client.connect(transport);
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toContain('list_datasets');
      // initialize, notifications/initialized, tools/list: the two after it name the revision
      // agreed to, the 1.x client's latest (which the gateway serves).
      expect(seen.map((s) => s.version)).toEqual([
        null,
        LATEST_PROTOCOL_VERSION,
        LATEST_PROTOCOL_VERSION,
      ]);
      expect(seen.every((s) => s.authorization === `Bearer ${key}` && s.method === null)).toBe(
        true,
      );
      expect(stderr).toBe('');
    } finally {
      await client.close();
    }
  });
});

describe('mcp:stdio: a client of the current revision', () => {
  it('discovers, lists and calls tools through the bridge, each POST with its MCP headers', async () => {
    const key = await t.key('development', ['read']);
    const { client, stderr } = await currentClientThroughBridge(`${origin}/mcp`, key);
    try {
      seen.length = 0;
      const discovered = await client.discover();
      expect(discovered.supportedVersions).toContain(CURRENT_REVISION);
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toContain('list_datasets');
      const called = await client.callTool({ name: 'list_datasets', arguments: {} });
      expect(called.isError).toBeFalsy();
      expect(JSON.stringify(called.structuredContent)).toContain('user_42');
      // The SDK's HTTP transport derives these from each message's `_meta` claim.
      const auth = `Bearer ${key}`;
      expect(seen).toEqual([
        { method: 'server/discover', name: null, version: CURRENT_REVISION, authorization: auth },
        { method: 'tools/list', name: null, version: CURRENT_REVISION, authorization: auth },
        {
          method: 'tools/call',
          name: 'list_datasets',
          version: CURRENT_REVISION,
          authorization: auth,
        },
      ]);
      expect(stderr).toEqual([]);
    } finally {
      await client.close();
    }
  });

  it("a refusal's JSON-RPC error reaches the client as the gateway wrote it: HTTP 429, and resource not found in a 200", async () => {
    // One live stream per key: a second listen is refused at the cap, 429 RATE_LIMITED.
    const capped = createGateway({
      database: t.database,
      keyUseFlushMs: 0,
      live: { maxStreamsPerKey: 1 },
    });
    const listener = await listenOnLoopback((request) => capped.fetch(request));
    const url = `${listener.origin}/mcp`;
    const key = await t.key('development', ['read']);
    const bridge = rawBridge(url, key);
    try {
      const listen = (id: string, uri: string) =>
        currentRequest(id, 'subscriptions/listen', {
          notifications: { resourceSubscriptions: [uri] },
        });
      // Not a dataset of the workspace: resource not found, a JSON-RPC error in a 200.
      const unknown = listen('unknown', 'memory://dataset/no_such_dataset');
      const unknownDirect = await direct(url, key, unknown);
      expect(unknownDirect.status).toBe(200);
      expect(unknownDirect.body).toMatchObject({
        id: 'unknown',
        error: { data: { uri: 'memory://dataset/no_such_dataset' } },
      });
      expect(await bridge.answer(unknown)).toEqual(unknownDirect.body);

      // The first listen holds the key's one stream (acknowledged: the stream is open).
      bridge.write(listen('first', DATASET_URI));
      await until(
        () => bridge.lines.some((l) => l.method === 'notifications/subscriptions/acknowledged'),
        'the first listen acknowledged',
      );
      expect(capped.live.counts().streams).toBe(1);
      const second = listen('second', DATASET_URI);
      const secondDirect = await direct(url, key, second);
      expect(secondDirect.status).toBe(429);
      expect(secondDirect.body).toMatchObject({
        id: 'second',
        error: { data: { code: 'RATE_LIMITED' } },
      });
      expect(await bridge.answer(second)).toEqual(secondDirect.body);
      // An answer, not the bridge's failure: nothing said on stderr.
      expect(bridge.stderr()).toBe('');
    } finally {
      await bridge.close();
      await closeServer(listener.server);
      capped.beginShutdown();
    }
  });

  it('a refusal made before the gateway read the request (id null) answers that request, its error untouched', async () => {
    // A body past BODY_LIMIT_BYTES is refused unread: HTTP 413, a JSON-RPC error with id null.
    const limited = createGateway({ database: t.database, keyUseFlushMs: 0, bodyLimitBytes: 600 });
    const listener = await listenOnLoopback((request) => limited.fetch(request));
    const url = `${listener.origin}/mcp`;
    const key = await t.key('development', ['read']);
    const bridge = rawBridge(url, key);
    try {
      const call = currentRequest('large', 'tools/call', {
        name: 'recall',
        arguments: { dataset: 'user_42', query: 'x'.repeat(1000) },
      });
      const refused = await direct(url, key, call);
      expect(refused.status).toBe(413);
      expect(refused.body).toMatchObject({
        id: null,
        error: { data: { code: 'PAYLOAD_TOO_LARGE' } },
      });
      expect(await bridge.answer(call)).toEqual({ ...(refused.body as object), id: 'large' });
      expect(bridge.stderr()).toBe('');
    } finally {
      await bridge.close();
      await closeServer(listener.server);
      limited.beginShutdown();
    }
  });

  it("a listen: its stream relayed as it comes; cancelled, the gateway frees the key's live stream", async () => {
    const key = await t.key('development', ['read', 'write']);
    const { client, stderr } = await currentClientThroughBridge(`${origin}/mcp`, key);
    try {
      const announced: string[] = [];
      client.setNotificationHandler('notifications/resources/updated', (n) => {
        announced.push(n.params.uri);
      });
      const filter = { resourceSubscriptions: [DATASET_URI] };
      // Resolves on the stream's acknowledgement, relayed before anything is written.
      const listening = await client.listen(filter);
      expect(listening.honoredFilter).toEqual(filter);
      await streamsFollowing(t.gateway.live, 1);
      const created = await client.callTool({
        name: 'create_memory',
        arguments: { dataset: 'user_42', input: { text: 'The user walks to work.' } },
      });
      expect(created.isError).toBeFalsy();
      await until(() => announced.length > 0, 'the change announced over stdio');
      expect(announced[0]).toBe(DATASET_URI);
      // Announced while the listen still holds its stream.
      expect(t.gateway.live.counts().streams).toBe(1);

      // close() sends notifications/cancelled for the listen over stdio: the bridge ends its POST.
      await listening.close();
      await until(
        () => t.gateway.live.counts().streams === 0,
        () => `the key's live stream freed (${JSON.stringify(t.gateway.live.counts())})`,
      );
      expect(stderr).toEqual([]);
    } finally {
      await client.close();
    }
  });

  it("a listen refused before streaming rejects the client's listen() with the gateway's error", async () => {
    const key = await t.key('development', ['read']);
    const { client, stderr } = await currentClientThroughBridge(`${origin}/mcp`, key);
    try {
      const uri = 'memory://dataset/no_such_dataset';
      const refused = await client.listen({ resourceSubscriptions: [uri] }).then(
        () => null,
        (error: unknown) => error,
      );
      // The SDK reads the gateway's error naming the URI as its resource-not-found error.
      expect(refused).toBeInstanceOf(ResourceNotFoundError);
      expect((refused as ResourceNotFoundError).uri).toBe(uri);
      expect((refused as ResourceNotFoundError).message).toMatch(
        'No dataset "no_such_dataset" in this workspace',
      );
      expect(stderr).toEqual([]);
    } finally {
      await client.close();
    }
  });
});
