import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { docSection } from '../helpers/docs.js';
import { type SpawnedGateway, spawnGateway } from '../helpers/spawnGateway.js';
import { until } from '../helpers/until.js';

/**
 * The banner of `npm start` on the embedded store says where the development key is, or,
 * when the demo was not loaded because the store already held workspaces (a key made with
 * the CLI before the first start), says so and how to make a key.
 */

const ROOT = new URL('../../', import.meta.url);
const scratch = mkdtempSync(join(tmpdir(), 'memory-gateway-demo-banner-'));
// Empty counts as unset: the embedded store under DATA_DIR, whatever this machine has.
const EMBEDDED = { MONGODB_URI: '', NODE_ENV: 'development' };

let running: SpawnedGateway | null = null;

afterEach(async () => {
  const child = running?.child;
  running = null;
  if (!child || child.exitCode !== null) return;
  const exited = new Promise((done) => child.once('exit', done));
  child.kill('SIGTERM');
  await exited;
});

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** `npm run keys -- ...` on DATA_DIR. */
function keys(dataDir: string, ...args: string[]): Promise<string> {
  return new Promise((done, fail) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'src/cli/keys.ts', ...args],
      {
        cwd: ROOT,
        encoding: 'utf8',
        timeout: 60_000,
        env: { ...process.env, ...EMBEDDED, DATA_DIR: dataDir },
      },
      (error, stdout, stderr) =>
        error ? fail(new Error(`${error.message}\n${stderr}`)) : done(stdout),
    );
  });
}

/** The banner, once its last line (the key, or how to make one) is out. */
async function banner(gateway: SpawnedGateway, last: RegExp): Promise<string[]> {
  await until(
    () => last.test(gateway.output()),
    () => `banner line ${last}:\n${gateway.output()}`,
    {
      everyMs: 50,
    },
  );
  return gateway.output().split('\n');
}

describe('the banner of the first start', () => {
  it('on an empty store: the demo is loaded, and the banner says where the key is kept', async () => {
    const dataDir = join(scratch, 'empty');
    running = await spawnGateway({ ...EMBEDDED, DATA_DIR: dataDir });
    const lines = await banner(running, /Try: curl/);
    expect(lines).toContain(
      `  Development key (workspace "development", scopes read,write,admin; kept in ${join(dataDir, 'development-key.txt')}):`,
    );
    expect(lines.join('\n')).not.toContain('Demo data not loaded');
  });

  it("prints every line of the README's sample banner (its port, DATA_DIR and key aside)", async () => {
    const dataDir = join(scratch, 'readme');
    running = await spawnGateway({ ...EMBEDDED, DATA_DIR: dataDir });
    const lines = await banner(running, /Try: curl/);
    const base = /listening on (http:\/\/\S+)/.exec(lines.join('\n'))![1]!;
    const fence = /```\n(Memory gateway listening on [^`]*)```/.exec(
      docSection('README.md', '## Two commands'),
    );
    const sample = fence![1]!
      .trim()
      .split('\n')
      .filter((line) => line.trim() !== '...' && line.trim() !== 'mk_…')
      .map((line) =>
        line
          .replaceAll('http://127.0.0.1:3004', base)
          .replace('data/development-key.txt', join(dataDir, 'development-key.txt')),
      );
    expect(sample.length).toBeGreaterThan(4);
    for (const line of sample) expect(lines).toContain(line);
  });

  it('on a store that already holds a workspace: says the demo was not loaded, why, and how to make a key', async () => {
    const dataDir = join(scratch, 'key-first');
    // A newcomer's key made with the CLI before the first `npm start`.
    await keys(dataDir, 'create', '--workspace', 'acme', '--scopes', 'read,write');
    running = await spawnGateway({ ...EMBEDDED, DATA_DIR: dataDir });
    const lines = await banner(running, /API key: /);
    expect(lines).toContain(
      `  Demo data not loaded: the store already holds workspace(s) "acme", and ${join(dataDir, 'development-key.txt')} does not exist (the demo loads only into an empty store; start with an empty DATA_DIR to get it).`,
    );
    expect(lines).toContain(
      '  API key: none printed; make one with  npm run keys -- create --workspace acme --scopes read,write,admin',
    );
    expect(lines.join('\n')).not.toContain('Development key');
  });
});
