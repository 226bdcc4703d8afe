import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  type Dirent,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { open, readFile, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { SCALAR_FIELDS } from '../store/database.js';

/**
 * The embedded database: FerretDB 1.24.2 on its SQLite backend, run from the small Go
 * program in `embedded-db/` (it embeds FerretDB's Go package; a plain `go install` of
 * cmd/ferretdb panics at start, FerretDB issue 2982). The binary is built with the
 * machine's Go on first use into a cache outside the repository and reused afterwards.
 *
 * Sharing: the server and the CLI commands use the same data folder, and SQLite files
 * must be served by one FerretDB process. Whichever starts first runs it and records
 * `{pid, ownerPid, uri, role}` in DATA_DIR/embedded-db.json; the other connects to that
 * one. A record whose processes are gone is stale and replaced. The FerretDB process
 * exits when its owner's pipe to it closes, so an owner that dies leaves no orphan.
 */

const SOURCE_DIR = fileURLToPath(new URL('../../embedded-db/', import.meta.url));
const RECORD_FILE = 'embedded-db.json';

export class EmbeddedDbError extends Error {
  override name = 'EmbeddedDbError';
}

function cacheDir(): string {
  const base = process.env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return join(base, 'bitemporal-memory-gateway');
}

/** FerretDB's files the build replaces with the patched copies in `embedded-db/_patches/`. */
function patchedFiles(): string[] {
  const root = join(SOURCE_DIR, '_patches');
  return (readdirSync(root, { recursive: true, withFileTypes: true }) as Dirent[])
    .filter((entry) => entry.isFile())
    .map((entry) => relative(root, join(entry.parentPath, entry.name)))
    .sort();
}

/** The binary's path: keyed by a hash of the Go sources and patches, so a change rebuilds it. */
function binaryPath(): string {
  const hash = createHash('sha256');
  for (const file of [
    'go.mod',
    'go.sum',
    'main.go',
    ...patchedFiles().map((f) => join('_patches', f)),
  ]) {
    hash.update(file);
    hash.update(readFileSync(join(SOURCE_DIR, file)));
  }
  return join(cacheDir(), `embedded-db-${hash.digest('hex').slice(0, 16)}`);
}

function runGo(args: string[], what: string): string {
  const run = spawnSync('go', args, {
    cwd: SOURCE_DIR,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (run.status !== 0) {
    throw new EmbeddedDbError(`${what} failed:\n${run.stderr || run.stdout}`);
  }
  return run.stdout;
}

/**
 * Builds the binary at `output` from FerretDB's module with the files of
 * `embedded-db/_patches/` in place of its own (embedded-db/README.md says what they change
 * and why). Go does not let a build overlay files of its module cache, so the module is
 * copied next to the output, patched, and named by a `replace` in a copy of go.mod passed
 * with `-modfile`; the committed go.mod stays the plain dependency.
 */
function buildPatched(output: string): void {
  const work = `${output}.src`;
  rmSync(work, { recursive: true, force: true });
  try {
    const module = JSON.parse(
      runGo(['mod', 'download', '-json', 'github.com/FerretDB/FerretDB'], 'Downloading FerretDB'),
    ) as { Dir?: string };
    if (!module.Dir) throw new EmbeddedDbError('Downloading FerretDB gave no module folder');
    const copy = join(work, 'ferretdb');
    copyWritable(module.Dir, copy);
    for (const file of patchedFiles()) {
      copyFileSync(join(SOURCE_DIR, '_patches', file), join(copy, file));
    }
    const modfile = join(work, 'go.mod');
    writeFileSync(
      modfile,
      `${readFileSync(join(SOURCE_DIR, 'go.mod'), 'utf8')}\nreplace github.com/FerretDB/FerretDB => ${copy}\n`,
    );
    copyFileSync(join(SOURCE_DIR, 'go.sum'), join(work, 'go.sum'));
    runGo(
      ['build', '-trimpath', `-modfile=${modfile}`, '-o', output, '.'],
      'Building the embedded database',
    );
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** A copy of a folder whose files and folders the owner may change (the module cache's are read-only). */
function copyWritable(from: string, to: string): void {
  mkdirSync(to, { recursive: true });
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    const source = join(from, entry.name);
    const target = join(to, entry.name);
    if (entry.isDirectory()) copyWritable(source, target);
    else if (entry.isFile()) {
      copyFileSync(source, target);
      chmodSync(target, 0o644);
    }
  }
}

/** Builds the FerretDB binary if the cache lacks it; returns its path. */
export function ensureFerretDbBinary(log: (line: string) => void = () => {}): string {
  const target = binaryPath();
  if (existsSync(target)) return target;
  const go = spawnSync('go', ['version'], { encoding: 'utf8' });
  if (go.error || go.status !== 0) {
    throw new EmbeddedDbError(
      'No database configured: install Go (1.24 or newer) so the embedded FerretDB can be built, or set MONGODB_URI to a MongoDB server.',
    );
  }
  log(
    'Building the embedded database (FerretDB) with Go; this happens once and takes a few minutes...',
  );
  mkdirSync(cacheDir(), { recursive: true });
  const tmp = `${target}.${process.pid}.tmp`;
  try {
    buildPatched(tmp);
  } catch (error) {
    rmSync(tmp, { force: true });
    throw error;
  }
  renameSync(tmp, target);
  return target;
}

export interface RunningFerretDb {
  uri: string;
  pid: number;
  /** Stops the process and waits for it to exit. */
  stop(): Promise<void>;
  /** Resolves when the process exits, for whatever reason. */
  exited: Promise<number | null>;
  /** Whether this process started it (and so stops it). */
  owned: boolean;
}

/**
 * Starts a private FerretDB whose SQLite files live in `dir`, on a free loopback port (or
 * on `listen`, e.g. to bring one back on the address it had). It is told the store's
 * scalar fields (SCALAR_FIELDS), so the store's queries run whole in SQL; `scalarFields:
 * null` starts it without, as a plain FerretDB (the pushdown tests compare the two).
 */
export async function startFerretDb(
  dir: string,
  log?: (line: string) => void,
  listen = '127.0.0.1:0',
  scalarFields: object | null = SCALAR_FIELDS,
): Promise<RunningFerretDb> {
  const binary = ensureFerretDbBinary(log);
  mkdirSync(dir, { recursive: true });
  const args = ['--data-dir', resolve(dir), '--listen', listen];
  if (scalarFields) args.push('--scalar-fields', JSON.stringify(scalarFields));
  const child = spawn(binary, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const uri = await new Promise<string>((done, fail) => {
    const lines = createInterface({ input: child.stdout! });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      fail(new EmbeddedDbError(`The embedded database did not start within 60s. ${stderr}`));
    }, 60_000);
    lines.once('line', (line) => {
      clearTimeout(timer);
      try {
        done(JSON.parse(line).uri as string);
      } catch {
        fail(new EmbeddedDbError(`The embedded database printed an unexpected line: ${line}`));
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      fail(
        new EmbeddedDbError(
          `The embedded database exited (code ${code}) before it started. ${stderr}`,
        ),
      );
    });
  });
  return {
    uri,
    pid: child.pid!,
    owned: true,
    exited,
    stop: () => stopChild(child, exited),
  };
}

async function stopChild(child: ChildProcess, exited: Promise<unknown>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}

/** Who runs the shared embedded database of a data folder (its lock file). */
interface OwnerRecord {
  ownerPid: number;
  role: 'server' | 'cli';
  pid?: number;
  uri?: string;
}

function isAlive(pid: number | undefined): boolean {
  if (!pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function readRecord(file: string): Promise<OwnerRecord | null> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as OwnerRecord;
  } catch {
    return null;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The shared embedded database for DATA_DIR: connects to the one another process runs, or
 * starts (and records) one. A server waits for a CLI-owned database to be released rather
 * than depend on a process that is about to exit.
 */
export async function acquireEmbeddedDb(
  dataDir: string,
  role: 'server' | 'cli',
  log: (line: string) => void = () => {},
): Promise<RunningFerretDb> {
  mkdirSync(dataDir, { recursive: true });
  const file = join(dataDir, RECORD_FILE);
  const deadline = performance.now() + 10 * 60_000;
  let waitingSaid = false;
  while (performance.now() < deadline) {
    const record = await readRecord(file);
    if (record) {
      const ownerAlive = isAlive(record.ownerPid) && record.ownerPid !== process.pid;
      if (ownerAlive && record.uri && isAlive(record.pid)) {
        if (role === 'cli' || record.role === 'server') {
          return {
            uri: record.uri,
            pid: record.pid!,
            owned: false,
            exited: new Promise(() => {}),
            stop: async () => {},
          };
        }
        if (!waitingSaid)
          log(`Waiting for the command using ${dataDir} (pid ${record.ownerPid}) to finish...`);
        waitingSaid = true;
        await sleep(250);
        continue;
      }
      if (ownerAlive && !record.uri) {
        await sleep(100); // another process is starting it
        continue;
      }
      // Stale: its owner is gone (its FerretDB exits with it) or its FerretDB died.
      if (record.pid && isAlive(record.pid) && !ownerAlive) process.kill(record.pid, 'SIGTERM');
      await rm(file, { force: true });
      continue;
    }
    let handle: Awaited<ReturnType<typeof open>>;
    try {
      handle = await open(file, 'wx');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') continue;
      throw error;
    }
    await handle.writeFile(JSON.stringify({ ownerPid: process.pid, role } satisfies OwnerRecord));
    await handle.close();
    let db: RunningFerretDb;
    try {
      db = await startFerretDb(join(dataDir, 'ferretdb'), log);
    } catch (error) {
      await rm(file, { force: true });
      throw error;
    }
    const recordOwner = (running: RunningFerretDb) =>
      writeFile(
        file,
        JSON.stringify({
          ownerPid: process.pid,
          role,
          pid: running.pid,
          uri: running.uri,
        } satisfies OwnerRecord),
      );
    await recordOwner(db);
    const release = async () => {
      const current = await readRecord(file);
      if (current?.ownerPid === process.pid) await rm(file, { force: true });
    };
    if (role === 'server') return superviseEmbeddedDb(dataDir, db, recordOwner, release, log);
    void db.exited.then(release);
    return {
      ...db,
      stop: async () => {
        await db.stop();
        await release();
      },
    };
  }
  throw new EmbeddedDbError(`Timed out waiting for the embedded database in ${dataDir}.`);
}

/** How often the embedded database may die before the server stops bringing it back. */
const EMBEDDED_RESTARTS = { max: 3, windowMs: 60_000, delayMs: 500 };

/**
 * The server's embedded database, brought back when it dies: started again on the same
 * address with the same files, so the server's database client reconnects by itself and
 * requests in between get 503s. At most `EMBEDDED_RESTARTS.max` restarts within its
 * window; one more death, or a restart that fails, ends supervision: `exited` resolves
 * and the server stops with a message saying so (src/main.ts).
 */
function superviseEmbeddedDb(
  dataDir: string,
  first: RunningFerretDb,
  record: (running: RunningFerretDb) => Promise<void>,
  release: () => Promise<void>,
  log: (line: string) => void,
): RunningFerretDb {
  let current = first;
  let stopping = false;
  const deaths: number[] = [];
  let giveUp: (code: number | null) => void = () => {};
  const exited = new Promise<number | null>((done) => {
    giveUp = done;
  });
  const watch = (running: RunningFerretDb) => {
    void running.exited.then(async (code) => {
      if (stopping) return;
      const now = performance.now();
      deaths.push(now);
      while (deaths.length > 0 && deaths[0]! < now - EMBEDDED_RESTARTS.windowMs) deaths.shift();
      if (deaths.length > EMBEDDED_RESTARTS.max) {
        log(
          `The embedded database died ${deaths.length} times within ${EMBEDDED_RESTARTS.windowMs / 1000} s (last exit code ${code}); not starting it again.`,
        );
        await release();
        giveUp(code);
        return;
      }
      log(`The embedded database exited (code ${code}); starting it again on ${running.uri}...`);
      await sleep(EMBEDDED_RESTARTS.delayMs);
      try {
        const address = new URL(running.uri).host;
        current = await startFerretDb(join(dataDir, 'ferretdb'), log, address);
        await record(current);
        log('The embedded database is back.');
        watch(current);
      } catch (error) {
        log(`The embedded database could not be started again: ${(error as Error).message}`);
        await release();
        giveUp(code);
      }
    });
  };
  watch(first);
  return {
    uri: first.uri,
    get pid() {
      return current.pid;
    },
    owned: true,
    exited,
    stop: async () => {
      stopping = true;
      await current.stop();
      await release();
    },
  };
}
