import { createServer } from 'node:net';
import type { ServerType } from '@hono/node-server';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestGateway, type TestGateway } from '../helpers/gateway.js';
import { closeServer, listenOnLoopback } from '../helpers/listener.js';
import { until } from '../helpers/until.js';

/**
 * The stdio bridge (src/cli/mcpStdio.ts, docs/MCP.md) when the gateway will not serve it:
 * a key the gateway refuses is said as such, once, and apart from a gateway that did not
 * answer at all; the stdio client gets a JSON-RPC error saying the same.
 */

let t: TestGateway;
let server: ServerType;
let origin: string;

beforeAll(async () => {
  t = await openTestGateway({ demoWorkspaces: [] });
  ({ server, origin } = await listenOnLoopback((request) => t.gateway.fetch(request)));
});

afterAll(async () => {
  await closeServer(server);
  await t.database.close();
});

/** Spawns the bridge with this URL and key, initializes through it, and answers how it failed. */
async function bridgeFailure(url: string, key: string) {
  const client = new Client({ name: 'stdio-test', version: '1' });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ['--import', 'tsx', 'src/cli/mcpStdio.ts'],
    cwd: new URL('../../', import.meta.url).pathname,
    env: {
      ...(process.env as Record<string, string>),
      MEMORY_GATEWAY_URL: url,
      MEMORY_GATEWAY_KEY: key,
    },
    stderr: 'pipe',
  });
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

/** A local port nothing listens on. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
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
