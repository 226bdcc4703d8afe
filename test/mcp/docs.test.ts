import { readFileSync } from 'node:fs';
import type { ServerType } from '@hono/node-server';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGateway } from '../../src/http/app.js';
import { MCP_TOOLS } from '../../src/mcp/tools.js';
import { clockFrom, openTestGateway, type TestGateway } from '../helpers/gateway.js';
import { closeServer, listenOnLoopback } from '../helpers/listener.js';
import { answerPattern, callTool, textOf } from '../helpers/mcp.js';

/**
 * docs/MCP.md, run: each client's configuration connects the MCP SDK's client (the stdio
 * bridge's spawns the bridge), and each tool's example, in the order written, answers the
 * text written under it on the demo dataset (`…` standing for anything).
 */

const doc = readFileSync(new URL('../../docs/MCP.md', import.meta.url), 'utf8');
const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const DOC_ORIGIN = 'http://127.0.0.1:3004';
const KEY_PLACEHOLDER = 'mk_…';

let t: TestGateway;
let server: ServerType;
let origin: string;
let key: string;

beforeAll(async () => {
  t = await openTestGateway({ demoWorkspaces: ['development'] });
  key = await t.key('development', ['read', 'write']);
  const gateway = createGateway({
    database: t.database,
    keyUseFlushMs: 0,
    clock: clockFrom('2026-12-01T00:00:00Z'),
  });
  ({ server, origin } = await listenOnLoopback(gateway.fetch));
});

afterAll(() => closeServer(server));

/** The doc's fenced blocks: their language and text, in order. */
const blocks = (text: string) =>
  [...text.matchAll(/```(\w+)\n([\s\S]*?)```/g)].map((m) => ({ lang: m[1]!, body: m[2]! }));

/** A URL or key of the doc, pointed at this test's gateway. */
const here = (text: string) => text.replaceAll(DOC_ORIGIN, origin).replaceAll(KEY_PLACEHOLDER, key);

/** Connects the SDK's client over HTTP with a configuration's URL and headers, and recalls. */
async function recallThrough(url: string, headers: Record<string, string>) {
  const client = new Client({ name: 'docs', version: '1' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(here(url)), {
      requestInit: {
        headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, here(v)])),
      },
    }),
  );
  return answerOf(client);
}

async function answerOf(client: Client) {
  const { tools } = await client.listTools();
  const recalled = await callTool(client, 'recall', {
    dataset: 'user_42',
    query: 'what car is the user interested in',
  });
  await client.close();
  expect(tools).toHaveLength(10);
  expect(textOf(recalled)).toContain('toyota corolla hybrid');
}

describe('docs/MCP.md: connecting a client', () => {
  const connecting = doc.slice(doc.indexOf('## Connecting a client'), doc.indexOf('## Tools'));
  const configs = blocks(connecting);

  it('configures Claude Code, Cursor, VS Code and a stdio client', () => {
    expect(configs.map((c) => c.lang)).toEqual(['sh', 'json', 'json', 'json']);
  });

  it('Claude Code: the URL and header of its command line', async () => {
    const command = configs[0]!.body;
    const match = /--transport http (\w+) (\S+) --header "([^:]+): ([^"]+)"/.exec(command);
    expect(match, command).not.toBeNull();
    await recallThrough(match![2]!, { [match![3]!]: match![4]! });
  });

  it('Cursor: mcpServers with url and headers', async () => {
    const { url, headers } = JSON.parse(configs[1]!.body).mcpServers.memory;
    await recallThrough(url, headers);
  });

  it('VS Code: servers with type http, url and headers', async () => {
    const { type, url, headers } = JSON.parse(configs[2]!.body).servers.memory;
    expect(type).toBe('http');
    await recallThrough(url, headers);
  });

  it('stdio: the bridge, spawned as configured, relays to the gateway', async () => {
    const { command, args, env } = JSON.parse(configs[3]!.body).mcpServers.memory;
    expect(command).toBe('node');
    // `npm run build` compiles src/ file by file: dist/cli/mcpStdio.js is src/cli/mcpStdio.ts
    // (test/embedded/start.test.ts runs the built one); here it runs through tsx.
    expect(args).toEqual(['/path/to/gateway/dist/cli/mcpStdio.js']);
    const client = new Client({ name: 'docs', version: '1' });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ['--import', 'tsx', 'src/cli/mcpStdio.ts'],
      cwd: new URL('../../', import.meta.url).pathname,
      env: { ...(process.env as Record<string, string>), ...JSON.parse(here(JSON.stringify(env))) },
      stderr: 'pipe',
    });
    await client.connect(transport);
    await answerOf(client);
  });

  it('stdio: without a key, the bridge says so and stops', async () => {
    const client = new Client({ name: 'docs', version: '1' });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ['--import', 'tsx', 'src/cli/mcpStdio.ts'],
      cwd: new URL('../../', import.meta.url).pathname,
      env: { ...(process.env as Record<string, string>), MEMORY_GATEWAY_KEY: '' },
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    await expect(client.connect(transport)).rejects.toThrow();
    expect(stderr).toMatch(/MEMORY_GATEWAY_KEY is not set/);
  });
});

// Before the tools' examples, which change the demo dataset.
describe("README's agent call", () => {
  it('is one tools/call with curl, answering the text shown under it', async () => {
    const at = readme.indexOf('One tool call, as an agent');
    const [command, answer] = blocks(readme.slice(at));
    expect(command?.lang).toBe('sh');
    const shell = command!.body.replaceAll('\\\n', ' ');
    const url = /curl -s (\S+)/.exec(shell)![1]!;
    const headers = Object.fromEntries(
      [...shell.matchAll(/-H (["'])([^:]+): (.*?)\1/g)].map((m) => [
        m[2]!,
        m[3]!.replace('$KEY', key),
      ]),
    );
    const body = /-d '([^']*)'/.exec(shell)![1]!;
    const response = await fetch(here(url), { method: 'POST', headers, body });
    expect(response.status).toBe(200);
    const { result } = (await response.json()) as {
      result: { isError?: boolean; content: { text: string }[] };
    };
    expect(result.isError).toBeFalsy();
    expect(answer?.lang).toBe('text');
    expect(result.content[0]!.text).toMatch(answerPattern(answer!.body));
  });
});

describe('docs/MCP.md: each tool’s example answers what it says', () => {
  const tools = doc.slice(doc.indexOf('## Tools and scopes'), doc.indexOf('## Errors'));
  const sections = [...tools.matchAll(/^### (\w+)\n([\s\S]*?)(?=^### |$(?![\s\S]))/gm)].map(
    (m) => ({ tool: m[1]!, blocks: blocks(m[2]!) }),
  );

  it('has an example for every tool', () => {
    expect(sections.map((s) => s.tool).sort()).toEqual(MCP_TOOLS.map((tool) => tool.name).sort());
  });

  it('each example, in order, answers the text under it', async () => {
    const client = new Client({ name: 'docs', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL('/mcp', origin), {
        requestInit: { headers: { authorization: `Bearer ${key}` } },
      }),
    );
    let calls = 0;
    for (const { tool, blocks: parts } of sections) {
      let args: Record<string, unknown> | null = null;
      for (const part of parts) {
        if (part.lang === 'json') {
          args = JSON.parse(part.body);
          continue;
        }
        // A text block answers the arguments above it (again, when it follows another answer).
        expect(args, `${tool}: an answer without arguments`).not.toBeNull();
        const result = await callTool(client, tool, args!);
        calls++;
        expect(result.isError, textOf(result)).toBeFalsy();
        expect(textOf(result), tool).toMatch(answerPattern(part.body));
      }
    }
    expect(calls).toBeGreaterThanOrEqual(12);
    await client.close();
  });
});
