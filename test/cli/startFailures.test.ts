import { execFile } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StartupError } from '../../src/config.js';
import { unusableDataDir } from '../../src/embedded/ferretdb.js';

/**
 * Every start-up failure a user can cause ends `npm start` with one line on stderr saying
 * what is wrong and what to do, and a non-zero exit; the stack only with LOG_LEVEL=debug.
 * Each runs src/main.ts in a process of its own, on loopback only.
 */

const ROOT = new URL('../../', import.meta.url);
const STACK_LINE = /^\s+at /m;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

let scratch: string;
/** A server of this test's own, holding a port. */
let holder: Server;
let heldPort: number;
/** A loopback port nothing listens on (one a server had, then gave back). */
let closedPort: number;

function listenOnLoopback(): Promise<Server> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => done(server));
  });
}

const portOf = (server: Server) => (server.address() as { port: number }).port;

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'memory-gateway-start-failures-'));
  holder = await listenOnLoopback();
  heldPort = portOf(holder);
  const closed = await listenOnLoopback();
  closedPort = portOf(closed);
  await new Promise((done) => closed.close(done));
});

afterAll(async () => {
  await new Promise((done) => holder?.close(done));
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

/**
 * `npm start` (or another entry: `npm run build:db`'s script) with `env` over this
 * process's environment (no MONGODB_URI, no LOG_LEVEL).
 */
function start(env: Record<string, string>, entry = 'src/main.ts'): Promise<Run> {
  const { MONGODB_URI: _uri, LOG_LEVEL: _level, ...inherited } = process.env;
  return new Promise((done, fail) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', entry],
      {
        cwd: ROOT,
        encoding: 'utf8',
        timeout: 60_000,
        env: { ...inherited, ...env },
      },
      (error, stdout, stderr) => {
        if (error?.killed) fail(new Error(`${entry} did not stop by itself:\n${stderr}`));
        else done({ code: error ? (error.code as number) : 0, stdout, stderr });
      },
    );
  });
}

/** The one line a failed start printed: exit code 1, nothing else on stderr, no stack. */
function oneLine(run: Run): string {
  expect(run.code, run.stderr).toBe(1);
  expect(run.stderr).not.toMatch(STACK_LINE);
  const lines = run.stderr.split('\n').filter((line) => line !== '');
  expect(lines, run.stderr).toHaveLength(1);
  return lines[0]!;
}

/** A folder whose `go` is a script of the test's: `go version` answers `version`. */
function fakeGo(name: string, script: string): string {
  const bin = join(scratch, name);
  mkdirSync(bin, { recursive: true });
  writeFileSync(join(bin, 'go'), `#!/bin/sh\n${script}\n`);
  chmodSync(join(bin, 'go'), 0o755);
  return bin;
}

/** Only Node's own folder on PATH: no `go`. */
const NODE_ONLY = dirname(process.execPath);

describe('npm start, when the port is taken', () => {
  it('names the port and suggests PORT', async () => {
    const run = await start({ DATA_DIR: join(scratch, 'busy-port'), PORT: String(heldPort) });
    expect(oneLine(run)).toBe(
      `Port ${heldPort} on 127.0.0.1 is already in use (is the gateway already running?): stop what holds it, or set PORT to a free port (PORT=0 picks any).`,
    );
    // The embedded database it started was stopped, and its record released.
    expect(existsSync(join(scratch, 'busy-port', 'embedded-db.json'))).toBe(false);
  });
});

describe('npm start, when MONGODB_URI answers nothing', () => {
  it('names the host and the wait, never the password', async () => {
    const run = await start({
      MONGODB_URI: `mongodb://reader:s3cret-word@127.0.0.1:${closedPort}/`,
      DB_TIMEOUT_MS: '500',
    });
    const line = oneLine(run);
    expect(line).toBe(
      `Could not reach MongoDB at 127.0.0.1:${closedPort} (MONGODB_URI) within 500 ms: connect ECONNREFUSED 127.0.0.1:${closedPort}. Check that it is running and reachable from here, or unset MONGODB_URI to use the embedded database.`,
    );
    expect(run.stderr + run.stdout).not.toContain('s3cret-word');
    expect(run.stderr + run.stdout).not.toContain('reader');
  });

  it('names every host of a replica set', async () => {
    const run = await start({
      MONGODB_URI: `mongodb://127.0.0.1:${closedPort},127.0.0.1:${closedPort}/?replicaSet=rs0`,
      DB_TIMEOUT_MS: '500',
    });
    expect(oneLine(run)).toMatch(
      new RegExp(
        `^Could not reach MongoDB at 127\\.0\\.0\\.1:${closedPort},127\\.0\\.0\\.1:${closedPort} \\(MONGODB_URI\\) within 500 ms: `,
      ),
    );
  });

  it('with LOG_LEVEL=debug, adds the stack', async () => {
    const run = await start({
      MONGODB_URI: `mongodb://reader:s3cret-word@127.0.0.1:${closedPort}/`,
      DB_TIMEOUT_MS: '500',
      LOG_LEVEL: 'debug',
    });
    expect(run.code).toBe(1);
    const [first] = run.stderr.split('\n');
    expect(first).toMatch(/^Could not reach MongoDB at 127\.0\.0\.1:\d+ \(MONGODB_URI\)/);
    expect(run.stderr).toMatch(STACK_LINE);
    expect(run.stderr).not.toContain('s3cret-word');
  });
});

describe('npm start, when the embedded database cannot be built', () => {
  it('without Go, says which Go to install (the version embedded-db/go.mod asks for)', async () => {
    const needed = /^go\s+(\d+\.\d+)(?:\.0)?\s*$/m.exec(
      readFileSync(new URL('embedded-db/go.mod', ROOT), 'utf8'),
    )?.[1];
    const run = await start({
      PATH: NODE_ONLY,
      // An empty cache: nothing built yet.
      XDG_CACHE_HOME: join(scratch, 'no-go', 'cache'),
      DATA_DIR: join(scratch, 'no-go', 'data'),
      PORT: '0',
    });
    expect(oneLine(run)).toBe(
      `No database configured: install Go (${needed} or newer) so the embedded FerretDB can be built, or set MONGODB_URI to a MongoDB server.`,
    );
  });

  it('npm run build:db without Go: the same one line, no stack', async () => {
    const run = await start(
      { PATH: NODE_ONLY, XDG_CACHE_HOME: join(scratch, 'build-no-go', 'cache') },
      'scripts/build-embedded-db.ts',
    );
    expect(oneLine(run)).toMatch(/^No database configured: install Go \(/);
  });

  it('with too old a Go, says which to install instead', async () => {
    const bin = fakeGo('old-go', 'echo "go version go1.20.14 linux/amd64"');
    const run = await start({
      PATH: `${bin}:${NODE_ONLY}`,
      XDG_CACHE_HOME: join(scratch, 'old-go', 'cache'),
      DATA_DIR: join(scratch, 'old-go', 'data'),
      PORT: '0',
    });
    expect(oneLine(run)).toBe(
      'Go 1.20.14 is too old to build the embedded FerretDB: install Go 1.24 or newer from https://go.dev/dl/, or set MONGODB_URI to a MongoDB server.',
    );
  });

  it('when the build fails, says at which step, what Go said last, and where the log is', async () => {
    const bin = fakeGo(
      'offline-go',
      [
        'if [ "$1" = version ]; then echo "go version go1.26.0 linux/amd64"; exit 0; fi',
        'echo "go: downloading github.com/FerretDB/FerretDB v1.24.2" >&2',
        'echo "go: github.com/FerretDB/FerretDB@v1.24.2: dial tcp: lookup proxy.golang.org: no such host" >&2',
        'exit 1',
      ].join('\n'),
    );
    const cache = join(scratch, 'offline-go', 'cache');
    const run = await start({
      PATH: `${bin}:${NODE_ONLY}`,
      XDG_CACHE_HOME: cache,
      DATA_DIR: join(scratch, 'offline-go', 'data'),
      PORT: '0',
    });
    expect(run.code).toBe(1);
    expect(run.stderr).not.toMatch(STACK_LINE);
    const lines = run.stderr.trim().split('\n');
    // Not a TTY: the steps are plain lines, each with the time since the build began.
    expect(lines.slice(0, -1)).toEqual([
      'Building the embedded database (FerretDB) with Go; this happens once and takes a few minutes.',
      expect.stringMatching(
        /^ {2}Go's output: .*bitemporal-memory-gateway\/embedded-db-[0-9a-f]{16}\.build\.log$/,
      ),
      "  downloading FerretDB's Go module (0s)",
    ]);
    const log = /Go's output: (.*)$/.exec(lines[1]!)![1]!;
    expect(log.startsWith(cache)).toBe(true);
    expect(lines.at(-1)).toBe(
      `Building the embedded database failed while downloading FerretDB's Go module: go: github.com/FerretDB/FerretDB@v1.24.2: dial tcp: lookup proxy.golang.org: no such host. Go's whole output is in ${log}; fix what it says and start again, or set MONGODB_URI to a MongoDB server.`,
    );
    expect(readFileSync(log, 'utf8')).toContain(
      'go: downloading github.com/FerretDB/FerretDB v1.24.2',
    );
  });
});

describe('npm start, when DATA_DIR cannot hold the database', () => {
  it('names DATA_DIR when it is a file', async () => {
    const file = join(scratch, 'a-file');
    writeFileSync(file, '');
    const run = await start({ DATA_DIR: file, PORT: '0' });
    expect(oneLine(run)).toBe(
      `Cannot keep the embedded database's files in DATA_DIR=${file}: it is a file, not a folder (EEXIST). Set DATA_DIR to a folder this user can write (it is created if missing), or set MONGODB_URI to a MongoDB server.`,
    );
  });

  it('names DATA_DIR when a part of its path is a file', async () => {
    const file = join(scratch, 'another-file');
    writeFileSync(file, '');
    const run = await start({ DATA_DIR: join(file, 'data'), PORT: '0' });
    expect(oneLine(run)).toBe(
      `Cannot keep the embedded database's files in DATA_DIR=${join(file, 'data')}: a part of that path is a file, not a folder (ENOTDIR). Set DATA_DIR to a folder this user can write (it is created if missing), or set MONGODB_URI to a MongoDB server.`,
    );
  });

  // Root may write in any folder, and running the gateway as another user needs the
  // checkout readable by that user: the sentence for a folder this user may not write is
  // checked on the errors the file system gives, the same function the two cases above reach.
  it.each([
    ['EACCES', 'this user may not write there'],
    ['EPERM', 'this user may not write there'],
    ['EROFS', 'it is on a read-only file system'],
  ])('names DATA_DIR when writing there fails with %s', (code, why) => {
    const folder = join(scratch, 'read-only');
    const refused = Object.assign(new Error(`${code}: mkdir '${folder}'`), { code });
    const said = unusableDataDir(folder, refused) as Error;
    expect(said).toBeInstanceOf(StartupError);
    expect(said.message).toBe(
      `Cannot keep the embedded database's files in DATA_DIR=${folder}: ${why} (${code}). Set DATA_DIR to a folder this user can write (it is created if missing), or set MONGODB_URI to a MongoDB server.`,
    );
    // Anything else is not a DATA_DIR problem and passes through as it is.
    const other = Object.assign(new Error('EIO'), { code: 'EIO' });
    expect(unusableDataDir(folder, other)).toBe(other);
  });
});
