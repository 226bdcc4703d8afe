import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { open, readFile, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

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

/** The binary's path: keyed by a hash of the Go sources, so a change rebuilds it. */
function binaryPath(): string {
  const hash = createHash('sha256');
  for (const file of ['go.mod', 'go.sum', 'main.go'])
    hash.update(readFileSync(join(SOURCE_DIR, file)));
  return join(cacheDir(), `embedded-db-${hash.digest('hex').slice(0, 16)}`);
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
  const build = spawnSync('go', ['build', '-trimpath', '-o', tmp, '.'], {
    cwd: SOURCE_DIR,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (build.status !== 0) {
    rmSync(tmp, { force: true });
    throw new EmbeddedDbError(
      `Building the embedded database failed:\n${build.stderr || build.stdout}`,
    );
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
 * on `listen`, e.g. to bring one back on the address it had).
 */
export async function startFerretDb(
  dir: string,
  log?: (line: string) => void,
  listen = '127.0.0.1:0',
): Promise<RunningFerretDb> {
  const binary = ensureFerretDbBinary(log);
  mkdirSync(dir, { recursive: true });
  const child = spawn(binary, ['--data-dir', resolve(dir), '--listen', listen], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
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
    await writeFile(
      file,
      JSON.stringify({
        ownerPid: process.pid,
        role,
        pid: db.pid,
        uri: db.uri,
      } satisfies OwnerRecord),
    );
    const release = async () => {
      const current = await readRecord(file);
      if (current?.ownerPid === process.pid) await rm(file, { force: true });
    };
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
