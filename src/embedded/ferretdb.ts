import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  accessSync,
  appendFileSync,
  chmodSync,
  constants,
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
import { homedir, tmpdir } from 'node:os';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { applyPatch, parsePatch, type StructuredPatch } from 'diff';
import { systemClock } from '../clock.js';
import { StartupError } from '../config.js';
import { SCALAR_FIELDS } from '../store/collections.js';
import { type BuildProgress, buildProgress } from './buildProgress.js';

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

class EmbeddedDbError extends StartupError {
  override name = 'EmbeddedDbError';
}

const OR_MONGODB = 'or set MONGODB_URI to a MongoDB server';

function cacheDir(): string {
  const base = process.env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return join(base, 'bitemporal-memory-gateway');
}

/**
 * Our changes to FerretDB's module, at its paths: `<file>.diff`, a unified diff against the
 * module's own file, and any other file, one we add (embedded-db/README.md says what each
 * changes and why). The `_` keeps Go tooling from taking the new files for packages here.
 */
const CHANGES_DIR = join(SOURCE_DIR, '_ferretdb');

/** A folder's files, as sorted paths relative to it. */
function filesUnder(root: string): string[] {
  return (readdirSync(root, { recursive: true, withFileTypes: true }) as Dirent[])
    .filter((entry) => entry.isFile())
    .map((entry) => relative(root, join(entry.parentPath, entry.name)))
    .sort();
}

/** The binary's path: keyed by a hash of the Go sources and our changes, so a change rebuilds it. */
function binaryPath(): string {
  const hash = createHash('sha256');
  for (const file of [
    'go.mod',
    'go.sum',
    'main.go',
    ...filesUnder(CHANGES_DIR).map((f) => join('_ferretdb', f)),
  ]) {
    hash.update(file);
    hash.update(readFileSync(join(SOURCE_DIR, file)));
  }
  return join(cacheDir(), `embedded-db-${hash.digest('hex').slice(0, 16)}`);
}

/** A path as the repository names it, when it is in the repository. */
function shown(path: string): string {
  const inRepository = relative(join(SOURCE_DIR, '..'), path);
  return inRepository.startsWith('..') || isAbsolute(inRepository) ? path : inRepository;
}

/**
 * `text` with `diff` applied, or why it does not apply. Exactly: every hunk must find the
 * lines it shows at the line its header names (no fuzz, no offset), so what is built is
 * what the diff was written against, or nothing.
 */
function applied(text: string, diff: string): string | { why: string } {
  let patches: StructuredPatch[];
  try {
    patches = parsePatch(diff);
  } catch (error) {
    return { why: `it is not a unified diff (${(error as Error).message})` };
  }
  if (patches.length !== 1) return { why: `it holds ${patches.length} file diffs, not one` };
  const lines = text.split('\n');
  let free = 0;
  for (const hunk of patches[0]!.hunks) {
    // The file's lines the hunk shows: context and removed (an empty line is context whose
    // space an editor took off, as applyPatch reads it too).
    const before = hunk.lines.filter((l) => /^[ -]|^$/.test(l)).map((l) => l.slice(1));
    const at = hunk.oldStart - 1;
    if (at < free) return { why: `its hunk at line ${hunk.oldStart} overlaps the one before` };
    if (before.some((line, i) => lines[at + i] !== line)) {
      return { why: `its hunk at line ${hunk.oldStart} is not what the file has there` };
    }
    free = at + before.length;
  }
  const result = applyPatch(text, patches[0]!, { autoConvertLineEndings: false });
  return result === false ? { why: 'its end of file is not what the file has' } : result;
}

/**
 * Writes into `target` (a copy of FerretDB's module) the files our changes make: each
 * `.diff` of `changes` applied to the module's own file in `module`, each other file
 * added. A diff that does not apply, or a new file the module already has, stops the build
 * with one line naming it.
 */
export function applyFerretDbChanges(module: string, target: string, changes = CHANGES_DIR): void {
  const refuse = (doing: string, why: string) =>
    new EmbeddedDbError(
      `Building the embedded database failed while ${doing}: ${why}; embedded-db/README.md says how to bring a change up to date, ${OR_MONGODB}.`,
    );
  for (const file of filesUnder(changes)) {
    const own = file.endsWith('.diff') ? file.slice(0, -'.diff'.length) : file;
    const into = join(target, own);
    mkdirSync(dirname(into), { recursive: true });
    if (own === file) {
      if (existsSync(join(module, own))) {
        throw refuse(
          `adding ${shown(join(changes, file))}`,
          `FerretDB has its own ${own}, so a change to it is carried as ${own}.diff`,
        );
      }
      copyFileSync(join(changes, file), into);
      continue;
    }
    const doing = `applying ${shown(join(changes, file))} to FerretDB's ${own}`;
    let text: string;
    try {
      text = readFileSync(join(module, own), 'utf8');
    } catch {
      throw refuse(doing, 'FerretDB has no such file');
    }
    const result = applied(text, readFileSync(join(changes, file), 'utf8'));
    if (typeof result !== 'string') throw refuse(doing, result.why);
    writeFileSync(into, result);
  }
}

/** The last line of a command's output that says something: what went wrong, usually. */
function lastLine(output: string): string {
  return (
    output
      .split('\n')
      .map((line) => line.trim())
      .filter(Boolean)
      .at(-1) ?? 'no output'
  );
}

/**
 * Runs go in `embedded-db/`, its output appended to the build's log; resolves with its
 * stdout. A failure is one line: the step, go's last line, and where the rest is.
 */
function runGo(args: string[], logFile: string, step: string): Promise<string> {
  return new Promise((done, fail) => {
    const child = spawn('go', args, { cwd: SOURCE_DIR, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let tail = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      appendFileSync(logFile, chunk);
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      tail = (tail + chunk.toString()).slice(-4000);
      appendFileSync(logFile, chunk);
    });
    child.once('error', (error) =>
      fail(new EmbeddedDbError(`Could not run go (${error.message}).`, { cause: error })),
    );
    child.once('close', (code) => {
      if (code === 0) done(stdout);
      else
        fail(
          new EmbeddedDbError(
            `Building the embedded database failed while ${step}: ${lastLine(tail)}. Go's whole output is in ${logFile}; fix what it says and start again, ${OR_MONGODB}.`,
          ),
        );
    });
  });
}

/**
 * Builds the binary at `output` from FerretDB's module with our changes of
 * `embedded-db/_ferretdb/` applied (embedded-db/README.md says what they change and why).
 * Go does not let a build overlay files of its module cache, so the module is copied next
 * to the output, changed there, and named by a `replace` in a copy of go.mod passed with
 * `-modfile`; the committed go.mod stays the plain dependency.
 */
async function buildPatched(
  output: string,
  logFile: string,
  progress: BuildProgress | null,
): Promise<void> {
  const work = `${output}.src`;
  rmSync(work, { recursive: true, force: true });
  try {
    let step = "downloading FerretDB's Go module";
    progress?.step(step);
    const module = JSON.parse(
      await runGo(['mod', 'download', '-json', 'github.com/FerretDB/FerretDB'], logFile, step),
    ) as { Dir?: string };
    if (!module.Dir) throw new EmbeddedDbError('Downloading FerretDB gave no module folder');
    progress?.step('copying the module and applying embedded-db/_ferretdb');
    const copy = join(work, 'ferretdb');
    copyWritable(module.Dir, copy);
    applyFerretDbChanges(module.Dir, copy);
    const modfile = join(work, 'go.mod');
    writeFileSync(
      modfile,
      `${readFileSync(join(SOURCE_DIR, 'go.mod'), 'utf8')}\nreplace github.com/FerretDB/FerretDB => ${copy}\n`,
    );
    copyFileSync(join(SOURCE_DIR, 'go.sum'), join(work, 'go.sum'));
    step = 'compiling';
    progress?.step(step);
    // -v names each package as it is compiled: the log shows how far the build got.
    await runGo(
      ['build', '-v', '-trimpath', `-modfile=${modfile}`, '-o', output, '.'],
      logFile,
      step,
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

/** The Go version embedded-db/go.mod asks for, as people write it (`1.24`, not `1.24.0`). */
function requiredGoVersion(): string {
  const goMod = readFileSync(join(SOURCE_DIR, 'go.mod'), 'utf8');
  const version = /^go\s+(\d+\.\d+(?:\.\d+)?)\s*$/m.exec(goMod)?.[1] ?? '1.24';
  return version.replace(/^(\d+\.\d+)\.0$/, '$1');
}

/** a < b, for dotted version numbers (`1.20.14` < `1.24`). */
function olderThan(a: string, b: string): boolean {
  const x = a.split('.').map(Number);
  const y = b.split('.').map(Number);
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) < (y[i] ?? 0);
  }
  return false;
}

/**
 * Refuses, in one sentence saying what to install, a machine whose Go cannot build the
 * embedded database. Asked outside embedded-db/ so Go reports itself without first
 * fetching the toolchain go.mod names; Go 1.21 and newer fetch it themselves during the
 * build (unless GOTOOLCHAIN=local), so only an older one, or that setting, is refused.
 */
function checkGo(log: (line: string) => void): void {
  const needed = requiredGoVersion();
  const go = spawnSync('go', ['version'], { cwd: tmpdir(), encoding: 'utf8' });
  if (go.error) {
    throw new EmbeddedDbError(
      `No database configured: install Go (${needed} or newer) so the embedded FerretDB can be built, ${OR_MONGODB}.`,
    );
  }
  if (go.status !== 0) {
    throw new EmbeddedDbError(
      `"go version" failed (${lastLine(go.stderr || go.stdout)}): the embedded FerretDB is built with Go ${needed} or newer; install it from https://go.dev/dl/, ${OR_MONGODB}.`,
    );
  }
  const found = /\bgo(\d+\.\d+(?:\.\d+)?)/.exec(go.stdout)?.[1];
  if (!found || !olderThan(found, needed)) return;
  const switches = !olderThan(found, '1.21') && process.env.GOTOOLCHAIN !== 'local';
  if (!switches) {
    throw new EmbeddedDbError(
      `Go ${found} is too old to build the embedded FerretDB: install Go ${needed} or newer from https://go.dev/dl/, ${OR_MONGODB}.`,
    );
  }
  log(`Go ${found} is older than the ${needed} the build needs: go downloads Go ${needed} for it.`);
}

/**
 * Builds the FerretDB binary if the cache lacks it; returns its path. With `log`, says
 * what it does while it builds (a live line on a terminal) and where Go's output goes.
 */
export async function ensureFerretDbBinary(log?: (line: string) => void): Promise<string> {
  const target = binaryPath();
  if (existsSync(target)) return target;
  checkGo(log ?? (() => {}));
  try {
    mkdirSync(cacheDir(), { recursive: true });
    accessSync(cacheDir(), constants.W_OK);
  } catch (error) {
    throw new EmbeddedDbError(
      `Cannot write the embedded database's build cache ${cacheDir()} (${(error as NodeJS.ErrnoException).code}): set XDG_CACHE_HOME to a folder this user can write, ${OR_MONGODB}.`,
      { cause: error },
    );
  }
  const logFile = `${target}.build.log`;
  writeFileSync(
    logFile,
    `go output of the embedded database's build, ${systemClock().toISOString()}\n`,
  );
  log?.(
    'Building the embedded database (FerretDB) with Go; this happens once and takes a few minutes.',
  );
  log?.(`  Go's output: ${logFile}`);
  const progress = log
    ? buildProgress({ log, terminal: process.stderr.isTTY ? process.stderr : null })
    : null;
  const tmp = `${target}.${process.pid}.tmp`;
  try {
    await buildPatched(tmp, logFile, progress);
  } catch (error) {
    progress?.end('failed');
    rmSync(tmp, { force: true });
    throw error;
  }
  renameSync(tmp, target);
  progress?.end('built');
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
  const binary = await ensureFerretDbBinary(log);
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

/**
 * DATA_DIR that cannot hold the database's files, said in one sentence; other errors as they are.
 * @internal exported for its test: a folder root may not write cannot be made on every machine.
 */
export function unusableDataDir(dataDir: string, error: unknown): unknown {
  const code = (error as NodeJS.ErrnoException).code ?? '';
  const why: Record<string, string> = {
    EEXIST: 'it is a file, not a folder',
    ENOTDIR: 'a part of that path is a file, not a folder',
    EACCES: 'this user may not write there',
    EPERM: 'this user may not write there',
    EROFS: 'it is on a read-only file system',
  };
  if (!why[code]) return error;
  const named = isAbsolute(dataDir) ? dataDir : `${dataDir} (${resolve(dataDir)})`;
  return new EmbeddedDbError(
    `Cannot keep the embedded database's files in DATA_DIR=${named}: ${why[code]} (${code}). Set DATA_DIR to a folder this user can write (it is created if missing), ${OR_MONGODB}.`,
    { cause: error },
  );
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
  try {
    mkdirSync(dataDir, { recursive: true });
    accessSync(dataDir, constants.W_OK);
  } catch (error) {
    throw unusableDataDir(dataDir, error);
  }
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
      throw unusableDataDir(dataDir, error);
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
