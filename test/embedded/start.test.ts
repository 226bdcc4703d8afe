import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callTool, mcpClient, textOf } from '../helpers/mcp.js';
import { until } from '../helpers/until.js';

/**
 * The newcomer's path: `npm start` with no MONGODB_URI runs the embedded FerretDB under
 * DATA_DIR, loads the demo, prints the key and URLs, serves GraphQL, and on SIGTERM stops
 * the database too (no orphan). A CLI command run meanwhile shares that database.
 */
const ROOT = new URL('../../', import.meta.url);
// The CLI commands run through tsx's loader, as `npm run keys` does.
const TSX = ['--import', 'tsx'];
const dataDir = mkdtempSync(join(tmpdir(), 'memory-gateway-start-'));
const children: ChildProcess[] = [];

// As `npm start` runs it (scripts/start.mjs): compiled to dist/, then one Node process,
// so signals reach the server.
beforeAll(() => {
  const build = spawnSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, encoding: 'utf8' });
  expect(build.status, build.stderr).toBe(0);
});

afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
});

function env(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const { MONGODB_URI: _uri, ...rest } = process.env;
  return {
    ...rest,
    DATA_DIR: dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
    MONGODB_DB: 'start_test',
    ...extra,
  };
}

function startServer(extra: NodeJS.ProcessEnv = {}): {
  child: ChildProcess;
  output: () => string;
  ready: Promise<string>;
} {
  const child = spawn(process.execPath, ['dist/main.js'], { cwd: ROOT, env: env(extra) });
  children.push(child);
  let out = '';
  const ready = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${out}`)), 120_000);
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(out);
      // Ready once the banner is out to its last line (the curl example's URL, printed
      // after the key): the lines can arrive in several chunks.
      if (match && out.includes('Development key') && /Try: curl[\s\S]*\/facts"\n/.test(out)) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`server exited ${code}:\n${out}`)));
  });
  return { child, output: () => out, ready };
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function runCli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...TSX, ...args], { cwd: ROOT, env: env() });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('npm start on the embedded database', () => {
  it('serves the demo with a printed key, shares its database with the CLI, and leaves no orphan', async () => {
    const server = startServer();
    const base = await server.ready;
    const key = /\n\s+(mk_[0-9a-f]{24}_[A-Za-z0-9_-]{43})\n/.exec(server.output())?.[1];
    expect(key, server.output()).toBeDefined();
    expect(server.output()).toContain(`${base}/graphql`);
    expect(readFileSync(join(dataDir, 'development-key.txt'), 'utf8').trim()).toBe(key);

    const response = await fetch(`${base}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ dataset(name: "user_42") { facts { totalCount } } }' }),
    });
    expect(await response.json()).toEqual({ data: { dataset: { facts: { totalCount: 3 } } } });

    // The memory explorer, built by npm start's build: its page (with the development key,
    // asked for on loopback) and its script.
    expect(server.output()).toContain(`${base}/explorer`);
    const explorer = await fetch(`${base}/explorer`);
    expect(explorer.status).toBe(200);
    expect(await explorer.text()).toContain(key);
    expect((await fetch(`${base}/explorer/assets/explorer.js`)).status).toBe(200);

    // Agents: /mcp with the development key, named by the banner; and the stdio bridge as
    // built, relaying to it (docs/MCP.md).
    expect(server.output()).toContain(`MCP (agents):       ${base}/mcp`);
    const agent = await mcpClient(base, key!);
    const recalled = await callTool(agent, 'recall', {
      dataset: 'user_42',
      query: 'what car is the user interested in',
    });
    expect(textOf(recalled)).toContain('toyota corolla hybrid');
    await agent.close();
    const bridged = new Client({ name: 'start-test', version: '1' });
    await bridged.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: ['dist/cli/mcpStdio.js'],
        cwd: ROOT.pathname,
        env: {
          ...(env() as Record<string, string>),
          MEMORY_GATEWAY_URL: `${base}/mcp`,
          MEMORY_GATEWAY_KEY: key!,
        },
        stderr: 'pipe',
      }),
    );
    expect((await bridged.listTools()).tools).toHaveLength(10);
    await bridged.close();

    // Once up, the embedded store says how big it is (the demo: one small dataset, no warning).
    await until(
      () => server.output().includes('Embedded store:'),
      () => `the store's size:\n${server.output()}`,
      {
        everyMs: 100,
      },
    );
    expect(server.output()).toMatch(
      /Embedded store: (\d+) facts in 1 dataset; the largest, "user_42" \(workspace "development"\), holds \1\./,
    );
    expect(server.output()).not.toContain('Warning:');

    // The record says which FerretDB serves DATA_DIR; the CLI connects to that one.
    const record = JSON.parse(readFileSync(join(dataDir, 'embedded-db.json'), 'utf8'));
    expect(record).toMatchObject({ ownerPid: server.child.pid, role: 'server' });
    expect(isAlive(record.pid)).toBe(true);
    const created = await runCli([
      'src/cli/keys.ts',
      'create',
      '--workspace',
      'development',
      '--scopes',
      'read',
      '--json',
    ]);
    expect(created.code, created.stderr).toBe(0);
    // Run with no MONGODB_URI, it says which store it opened.
    expect(created.stderr).toContain(`Store: the embedded database in ${dataDir}`);
    const cliKey = JSON.parse(created.stdout).key as string;
    const viaCli = await fetch(`${base}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${cliKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ viewer { workspace } }' }),
    });
    expect(await viaCli.json()).toEqual({ data: { viewer: { workspace: 'development' } } });
    expect(isAlive(record.pid)).toBe(true);

    // SIGTERM: the server stops, and so does the database it started.
    const exited = new Promise<number | null>((r) => server.child.once('exit', (code) => r(code)));
    server.child.kill('SIGTERM');
    expect(await exited).toBe(0);
    await until(() => !isAlive(record.pid), 'the embedded database gone', { everyMs: 100 });
    expect(() => readFileSync(join(dataDir, 'embedded-db.json'))).toThrow();
  }, 180_000);

  it('a second start reuses the data and prints the same key; a killed server leaves no orphan and a stale record is replaced', async () => {
    const firstKey = readFileSync(join(dataDir, 'development-key.txt'), 'utf8').trim();
    const server = startServer();
    await server.ready;
    expect(server.output()).toContain(firstKey);
    const record = JSON.parse(readFileSync(join(dataDir, 'embedded-db.json'), 'utf8'));

    // SIGKILL gives the server no chance to clean up: FerretDB sees its pipe close and exits.
    server.child.kill('SIGKILL');
    await until(() => !isAlive(record.pid), 'the orphaned embedded database gone', {
      everyMs: 100,
    });

    // The record left behind is stale; a CLI command replaces it and works.
    const listed = await runCli(['src/cli/keys.ts', 'list', '--json']);
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout).length).toBe(2);
    // The CLI stopped the database it started and removed its record.
    expect(() => readFileSync(join(dataDir, 'embedded-db.json'))).toThrow();
  });

  it('brings a killed embedded database back while the server stays up; killed past its limit, the server stops and says why', async () => {
    const server = startServer();
    const base = await server.ready;
    const key = readFileSync(join(dataDir, 'development-key.txt'), 'utf8').trim();
    const count = async () => {
      const response = await fetch(`${base}/graphql`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ viewer { workspace } }' }),
      });
      return response.status;
    };
    const exited = new Promise<number | null>((r) => server.child.once('exit', (code) => r(code)));
    for (let round = 1; round <= 3; round++) {
      const record = JSON.parse(readFileSync(join(dataDir, 'embedded-db.json'), 'utf8'));
      process.kill(record.pid, 'SIGKILL');
      // The server stays up, starts it again, and answers again by itself.
      await until(
        () => server.output().split('The embedded database is back.').length > round,
        () => `round ${round}: the database back:\n${server.output()}`,
        { everyMs: 100 },
      );
      expect(server.output().split('The embedded database is back.').length, server.output()).toBe(
        round + 1,
      );
      await until(async () => (await count().catch(() => 0)) === 200, `round ${round}: a 200`, {
        everyMs: 200,
      });
      expect(server.child.exitCode).toBeNull();
    }
    // A fourth death within the minute: not started again; the server stops, saying why.
    const record = JSON.parse(readFileSync(join(dataDir, 'embedded-db.json'), 'utf8'));
    process.kill(record.pid, 'SIGKILL');
    expect(await exited).toBe(1);
    expect(server.output()).toMatch(/died 4 times within 60 s .*not starting it again/);
    expect(server.output()).toMatch(/kept dying or could not be started again/);
  }, 180_000);

  it('with NODE_ENV=production, no page carries the development key', async () => {
    const server = startServer({ NODE_ENV: 'production', GRAPHIQL: 'true' });
    const base = await server.ready;
    const key = readFileSync(join(dataDir, 'development-key.txt'), 'utf8').trim();
    try {
      for (const path of ['/graphql', '/explorer']) {
        const page = await fetch(`${base}${path}`, { headers: { accept: 'text/html' } });
        expect(page.status, path).toBe(200);
        expect(await page.text(), path).not.toContain(key);
      }
    } finally {
      const exited = new Promise((r) => server.child.once('exit', r));
      server.child.kill('SIGTERM');
      await exited;
    }
  }, 120_000);

  it('an import reports the store size, with no warning for a dataset of thousands of facts', async () => {
    const file = join(dataDir, 'big.jsonl');
    // Past the 2,500 where an earlier version warned that lists slow down.
    const FACTS = 2_501;
    const lines = Array.from({ length: FACTS }, (_, i) =>
      JSON.stringify({
        type: 'fact',
        dataset: 'big',
        factId: randomUUID(),
        subject: `person ${i % 50}`,
        predicate: 'likes',
        object: `thing ${i}`,
        confidence: 0.8,
        validAt: '2026-01-01',
      }),
    );
    writeFileSync(file, `${lines.join('\n')}\n`);
    const imported = await runCli(['src/cli/import.ts', file, '--workspace', 'development']);
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stdout).toContain(
      'facts in 2 datasets; the largest, "big" (workspace "development"), holds 2,501.',
    );
    expect(imported.stdout).not.toMatch(/warning/i);
  }, 120_000);
});
