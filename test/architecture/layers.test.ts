import { execFile } from 'node:child_process';
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * The layers of layers.cjs, as `npm run check` enforces them (`npm run layers`): no import
 * closes a circle, none runs up a layer, and every file under src/ belongs to one layer.
 * The check is run as the script runs it, on the project and on copies given one circle or
 * one upward import, which it must refuse.
 */

const run = promisify(execFile);
const root = join(import.meta.dirname, '../..');
const require = createRequire(import.meta.url);
const { LAYERS } = require('../../layers.cjs') as {
  LAYERS: { name: string; paths: string[] }[];
};
const depcruise = join(root, 'node_modules/.bin/depcruise');

/** The command of `npm run layers`, as package.json declares it. */
const layersCommand = (): string[] => {
  const pkg = require('../../package.json') as { scripts: Record<string, string> };
  const [command, ...args] = (pkg.scripts.layers ?? '').split(' ');
  expect(command).toBe('depcruise');
  return args;
};

/** `npm run layers` on the tree at `dir`: its exit code and what it printed. */
async function checkLayers(dir: string): Promise<{ exitCode: number; output: string }> {
  try {
    const { stdout } = await run(depcruise, layersCommand(), { cwd: dir });
    return { exitCode: 0, output: stdout };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string };
    if (typeof failed.code !== 'number') throw error;
    return { exitCode: failed.code, output: failed.stdout ?? '' };
  }
}

/** The files the check reads, as its JSON report lists them. */
async function filesChecked(dir: string): Promise<Set<string>> {
  const args = [...layersCommand().slice(0, -2), '--output-type', 'json'];
  const { stdout } = await run(depcruise, args, { cwd: dir, maxBuffer: 64 * 2 ** 20 });
  const report = JSON.parse(stdout) as { modules: { source: string }[] };
  return new Set(report.modules.map((m) => m.source));
}

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(join(dir, 'src'), { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => relative(dir, join(e.parentPath, e.name)).split('\\').join('/'))
    .sort();
}

const copies: string[] = [];
afterAll(async () => {
  await Promise.all(copies.map((dir) => rm(dir, { recursive: true, force: true })));
});

/** A copy of what the check reads, with `change` made to it. */
async function copyWith(change: (dir: string) => Promise<void>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'layers-'));
  copies.push(dir);
  for (const name of ['src', '.dependency-cruiser.cjs', 'layers.cjs', 'tsconfig.json']) {
    await cp(join(root, name), join(dir, name), { recursive: true });
  }
  await change(dir);
  return dir;
}

async function prepend(dir: string, file: string, line: string): Promise<void> {
  const path = join(dir, file);
  await writeFile(path, `${line}\n${await readFile(path, 'utf8')}`);
}

describe('the layers', () => {
  it('claim every file under src/, each exactly once', async () => {
    const files = await sourceFiles(root);
    expect(files.length).toBeGreaterThan(100);
    const unclaimed = files.filter((file) => {
      const layers = LAYERS.filter((l) => l.paths.some((p) => new RegExp(p).test(file)));
      return layers.length !== 1;
    });
    expect(unclaimed).toEqual([]);
  });

  it('hold: no circle and no upward import, over every file under src/', async () => {
    const { exitCode, output } = await checkLayers(root);
    expect(output).toContain('no dependency violations found');
    expect(exitCode).toBe(0);
    // The check read every file, not a part of the tree.
    const read = await filesChecked(root);
    expect((await sourceFiles(root)).filter((file) => !read.has(file))).toEqual([]);
  }, 120_000);

  it('refuse a circle closed by a type-only import', async () => {
    // documents.ts is below changes.ts, which imports it.
    const dir = await copyWith((d) =>
      prepend(d, 'src/store/documents.ts', "import type { NewChange } from './changes.js';"),
    );
    const { exitCode, output } = await checkLayers(dir);
    expect(exitCode).not.toBe(0);
    expect(output).toMatch(/error no-circular: src\/store\/(documents|changes)\.ts/);
  }, 120_000);

  it('refuse an import from a higher layer', async () => {
    const dir = await copyWith((d) =>
      prepend(d, 'src/store/tenant.ts', "import type { RequestContext } from '../context.js';"),
    );
    const { exitCode, output } = await checkLayers(dir);
    expect(exitCode).not.toBe(0);
    expect(output).toContain('error no-import-up-from-store: src/store/tenant.ts → src/context.ts');
  }, 120_000);
});
