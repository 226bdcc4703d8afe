import { spawnSync } from 'node:child_process';
import {
  cpSync,
  type Dirent,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyFerretDbChanges } from '../../src/embedded/ferretdb.js';

/**
 * The embedded database is FerretDB 1.24.2 with our changes of embedded-db/_ferretdb/: a
 * diff for each of its files we change, whole the files we add (embedded-db/README.md).
 * Every diff must apply exactly to the module Go downloads for embedded-db/go.mod, and one
 * that does not must stop the build with one line naming it.
 */

const SOURCE_DIR = fileURLToPath(new URL('../../embedded-db/', import.meta.url));
const CHANGES_DIR = join(SOURCE_DIR, '_ferretdb');
const FIND_DIFF = 'internal/handler/msg_find.go.diff';
const STRING_DIFF = 'internal/handler/sjson/string.go.diff';

let module: string;
let dir: string;

beforeAll(() => {
  const download = spawnSync('go', ['mod', 'download', '-json', 'github.com/FerretDB/FerretDB'], {
    cwd: SOURCE_DIR,
    encoding: 'utf8',
  });
  expect(download.status, download.stderr).toBe(0);
  module = (JSON.parse(download.stdout) as { Dir: string }).Dir;
  dir = mkdtempSync(join(tmpdir(), 'ferretdb-changes-'));
}, 120_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A folder's files, as sorted paths relative to it. */
const filesUnder = (root: string) =>
  (readdirSync(root, { recursive: true, withFileTypes: true }) as Dirent[])
    .filter((entry) => entry.isFile())
    .map((entry) => relative(root, join(entry.parentPath, entry.name)))
    .sort();

describe("our changes to FerretDB's module", () => {
  it('apply exactly to FerretDB 1.24.2: each diff changes its file, each new file is added', () => {
    const target = join(dir, 'applied');
    applyFerretDbChanges(module, target);
    const files = filesUnder(CHANGES_DIR);
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) {
      if (file.endsWith('.diff')) {
        const own = file.slice(0, -'.diff'.length);
        expect(readFileSync(join(target, own), 'utf8'), own).not.toBe(
          readFileSync(join(module, own), 'utf8'),
        );
      } else {
        expect(existsSync(join(module, file)), `${file} is new`).toBe(false);
        expect(readFileSync(join(target, file), 'utf8')).toBe(
          readFileSync(join(CHANGES_DIR, file), 'utf8'),
        );
      }
    }
  });

  /** A copy of the changes with one diff edited. */
  const broken = (name: string, file: string, edit: (diff: string) => string) => {
    const changes = join(dir, name);
    cpSync(CHANGES_DIR, changes, { recursive: true });
    const diff = join(changes, file);
    const text = readFileSync(diff, 'utf8');
    expect(edit(text), 'the edit changes the diff').not.toBe(text);
    writeFileSync(diff, edit(text));
    return changes;
  };

  it.each<[string, string, (diff: string) => string]>([
    ['a changed context line', FIND_DIFF, (diff) => diff.replace(/\n \t}\n/, '\n \t} // x\n')],
    // The right lines, one line lower than the header says: no offset is taken.
    [
      'a hunk at the wrong line',
      FIND_DIFF,
      (diff) => diff.replace(/^@@ -(\d+)/m, (_, line) => `@@ -${Number(line) + 1}`),
    ],
    [
      'a removed line the file does not have',
      STRING_DIFF,
      (diff) => diff.replace(/\n-(.*)\n/, '\n-$1 // x\n'),
    ],
    [
      'a hunk whose counts are wrong',
      FIND_DIFF,
      (diff) => diff.replace(/^@@ -(\d+),\d+/m, '@@ -$1,9'),
    ],
  ])('stop the build naming the diff when it does not apply: %s', (name, file, edit) => {
    const slug = name.replaceAll(' ', '-');
    const changes = broken(slug, file, edit);
    let message = '';
    try {
      applyFerretDbChanges(module, join(dir, `${slug}-out`), changes);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/^Building the embedded database failed while applying /);
    expect(message).toContain(join(changes, file));
    expect(message).not.toContain('\n');
  });

  it('stop the build when a new file would replace one of FerretDB’s own', () => {
    const changes = join(dir, 'replacing');
    cpSync(CHANGES_DIR, changes, { recursive: true });
    mkdirSync(join(changes, 'cmd/ferretdb'), { recursive: true });
    writeFileSync(join(changes, 'cmd/ferretdb/main.go'), 'package main\n');
    expect(() => applyFerretDbChanges(module, join(dir, 'replacing-out'), changes)).toThrow(
      /cmd\/ferretdb\/main\.go: FerretDB has its own cmd\/ferretdb\/main\.go/,
    );
  });
});
