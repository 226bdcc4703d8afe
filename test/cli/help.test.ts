import { execFile } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * `npm run <script> -- --help` for every script in package.json that runs one of the
 * project's files: its usage on stdout, exit 0, and nothing done. The scripts are read from
 * package.json, so a script added there is checked too (or must be named below as one
 * that runs a tool, not a file of ours). Each runs as npm would run it, with `--help` after
 * the file, in an environment where real work fails fast: no database answers at
 * MONGODB_URI, no FerretDB binary is cached and no `go` can be found to build one, and
 * temporary files go to a folder of this test's own, checked empty afterwards.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Scripts that run a tool (its own --help) or other scripts (each checked on its own). */
const NOT_A_FILE_OF_OURS: Record<string, string> = {
  test: 'vitest',
  typecheck: 'tsc, twice',
  lint: 'biome and knip',
  format: 'biome',
  layers: 'dependency-cruiser',
  check: 'npm run typecheck, npm run lint, then npm run layers',
};

interface FileScript {
  script: string;
  /** Node's own options before the file (`--expose-gc`, `--import tsx`). */
  nodeOptions: string[];
  file: string;
}

/** `node [options] FILE` scripts; the built `dist/X.js` is run from its source, src/X.ts. */
function fileScripts(): FileScript[] {
  const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  const found: FileScript[] = [];
  for (const [script, command] of Object.entries(scripts)) {
    const words = command.split(/\s+/);
    const file = words.at(-1)!;
    if (words[0] !== 'node' || !/\.(ts|m?js)$/.test(file)) {
      expect(NOT_A_FILE_OF_OURS, `${script}: ${command}`).toHaveProperty(script);
      continue;
    }
    const built = /^dist\/(.*)\.js$/.exec(file);
    const nodeOptions = words.slice(1, -1);
    found.push({
      script,
      nodeOptions:
        built && !nodeOptions.includes('tsx') ? [...nodeOptions, '--import', 'tsx'] : nodeOptions,
      file: built ? `src/${built[1]}.ts` : file,
    });
  }
  for (const script of Object.keys(NOT_A_FILE_OF_OURS)) {
    expect(scripts, `${script} is no longer a script: drop it from the list`).toHaveProperty(
      script,
    );
  }
  return found;
}

const SCRIPTS = fileScripts();

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

let sandbox: string;

/** One script's file run as npm runs it, with the given arguments after the file. */
function run(nodeOptions: string[], file: string, ...args: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [...nodeOptions, file, ...args],
      {
        cwd: ROOT,
        encoding: 'utf8',
        timeout: 45_000,
        env: {
          // Nothing inherited: the configuration the machine happens to have plays no part.
          PATH: join(sandbox, 'bin'),
          HOME: join(sandbox, 'home'),
          TMPDIR: join(sandbox, 'tmp'),
          XDG_CACHE_HOME: join(sandbox, 'cache'),
          DATA_DIR: join(sandbox, 'data'),
          // Port 9 (discard): refused at once, and the driver gives up after 100 ms.
          MONGODB_URI: 'mongodb://127.0.0.1:9/?serverSelectionTimeoutMS=100',
          MONGODB_DB: 'never_opened',
        },
      },
      (error, stdout, stderr) => {
        if (error?.killed) reject(new Error(`${file} did not finish: ${stderr}`));
        else resolve({ code: error ? (error.code as number) : 0, stdout, stderr });
      },
    );
  });
}

/** What a script would have written: the project's generated files and build. */
function outputs(): Record<string, number> {
  const stamps: Record<string, number> = {};
  const stamp = (path: string) => {
    const at = join(ROOT, path);
    if (existsSync(at)) stamps[path] = statSync(at).mtimeMs;
  };
  for (const path of ['schema.graphql', 'dist', 'dist/main.js', 'bench-results.json']) stamp(path);
  for (const dir of ['src/generated', 'explorer/src/generated', 'test/generated']) {
    stamp(dir);
    if (existsSync(join(ROOT, dir)))
      for (const f of readdirSync(join(ROOT, dir))) stamp(`${dir}/${f}`);
  }
  return stamps;
}

/** What the runs left in the sandbox, but tsx's own compile cache. */
function leftBehind(): string[] {
  return ['tmp', 'cache', 'data', 'home'].flatMap((dir) =>
    existsSync(join(sandbox, dir))
      ? readdirSync(join(sandbox, dir))
          .filter((name) => !name.startsWith('tsx-'))
          .map((name) => `${dir}/${name}`)
      : [],
  );
}

beforeAll(() => {
  sandbox = mkdtempSync(join(tmpdir(), 'help-test-'));
  for (const dir of ['bin', 'home', 'tmp']) mkdirSync(join(sandbox, dir));
});

afterAll(() => {
  if (sandbox) rmSync(sandbox, { recursive: true, force: true });
});

describe('the walk of package.json', () => {
  it("finds the scripts that run the project's files", () => {
    const names = SCRIPTS.map((s) => s.script);
    for (const script of [
      'start',
      'build',
      'keys',
      'import',
      'export',
      'schema',
      'codegen',
      'build:db',
      'bench',
    ]) {
      expect(names).toContain(script);
    }
    expect(SCRIPTS.find((s) => s.script === 'start')?.file).toBe('scripts/start.mjs');
  });
});

describe.each(SCRIPTS)('npm run $script', ({ script, nodeOptions, file }) => {
  const invocation = script === 'start' ? 'npm start' : `npm run ${script}`;

  it('-- --help prints its usage, exits 0 and does nothing else', async () => {
    const before = outputs();
    const result = await run(nodeOptions, file, '--help');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(invocation);
    expect(outputs()).toEqual(before);
    expect(leftBehind()).toEqual([]);
  });

  it('-- --bogus names the option, then gives the usage, exit code 2', async () => {
    const before = outputs();
    const result = await run(nodeOptions, file, '--bogus');
    expect(result.code, result.stderr).toBe(2);
    expect(result.stdout).toBe('');
    const [first, ...usage] = result.stderr.split('\n');
    expect(first).toBe("Unknown option '--bogus'.");
    expect(usage.join('\n')).toContain(invocation);
    expect(outputs()).toEqual(before);
    expect(leftBehind()).toEqual([]);
  });
});

describe('unknown commands and arguments, refused before a store is opened', () => {
  const tsx = ['--import', 'tsx'];
  it.each([
    ['src/cli/keys.ts', ['bogus'], "Unknown command 'bogus'."],
    ['src/cli/keys.ts', [], 'Name a command: create, list or revoke.'],
    ['src/cli/keys.ts', ['list', '--bogus'], "Unknown option '--bogus'."],
    [
      'src/cli/keys.ts',
      ['list', '--scopes', 'read'],
      "The list command takes no option '--scopes'.",
    ],
    ['src/cli/keys.ts', ['revoke', 'a', 'b'], "Unexpected argument 'b'."],
    ['src/cli/keys.ts', ['create', '--workspace'], "Option '--workspace' needs a value."],
    ['src/cli/keys.ts', ['list', '--json=yes'], "Option '--json' takes no value."],
    [
      'src/cli/import.ts',
      ['file.jsonl', '--workspace', 'w', '--bogus'],
      "Unknown option '--bogus'.",
    ],
    [
      'src/cli/import.ts',
      ['a.jsonl', 'b.jsonl', '--workspace', 'w'],
      "Unexpected argument 'b.jsonl'.",
    ],
    ['src/cli/import.ts', ['--workspace', 'w'], 'Name the file to import.'],
    ['src/cli/export.ts', ['--workspace', 'w', '--bogus'], "Unknown option '--bogus'."],
    ['src/cli/export.ts', ['bogus', '--workspace', 'w'], "Unexpected argument 'bogus'."],
    ['src/cli/export.ts', [], '--workspace is required.'],
  ])('%s %j: "%s", then the usage', async (file, args, problem) => {
    const result = await run(tsx, file, ...args);
    expect(result.code, result.stderr).toBe(2);
    expect(result.stdout).toBe('');
    const [first, ...usage] = result.stderr.split('\n');
    expect(first).toBe(problem);
    expect(usage[0]).toMatch(/^Usage:/);
    expect(result.stderr).not.toMatch(/^Store:/m);
  });
});

describe('npm start given a setting as an option', () => {
  // The gateway is configured by environment variables alone (docs/CONFIGURATION.md): an
  // option named after one is answered with the command line that sets it, before anything
  // is built or started.
  it.each([
    [['--port', '5000'], 'PORT=5000 npm start'],
    [['--port=5000'], 'PORT=5000 npm start'],
    [['--host', '0.0.0.0'], 'HOST=0.0.0.0 npm start'],
    [['--log-level', 'debug'], 'LOG_LEVEL=debug npm start'],
    [
      ['--mongodb-uri', 'mongodb://db:27017/?replicaSet=rs0'],
      "MONGODB_URI='mongodb://db:27017/?replicaSet=rs0' npm start",
    ],
    [['--port'], 'PORT=<port> npm start'],
  ])('%j: one line naming the variable, exit code 2, nothing started', async (args, line) => {
    const before = outputs();
    const result = await run([], 'scripts/start.mjs', ...args);
    expect(result.code, result.stderr).toBe(2);
    expect(result.stdout).toBe('');
    const [first, ...usage] = result.stderr.split('\n');
    const variable = line.split('=')[0];
    expect(first).toBe(
      `Unknown option '${args[0]!.split('=')[0]}': npm start takes its settings from the environment, as in ${line}`,
    );
    expect(first).toContain(variable);
    expect(usage[0]).toMatch(/^Usage: npm start/);
    expect(outputs()).toEqual(before);
    expect(leftBehind()).toEqual([]);
  });
});
