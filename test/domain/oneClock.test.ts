import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * One clock: domain time comes from src/clock.ts, read once per request (or per command
 * run) and passed down. Anything else in src/ that reads the system time is a second
 * clock some request will disagree with, and a test that cannot set "now".
 */
const SRC = new URL('../../src/', import.meta.url).pathname;
const ALLOWED = new Set(['clock.ts']);
const SYSTEM_TIME = /new Date\(\s*\)|Date\.now\(\)/;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'generated' ? [] : sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

describe('one clock', () => {
  it('nothing in src/ but src/clock.ts reads the system time', () => {
    const files = sourceFiles(SRC);
    // A walk that finds no source checks nothing.
    expect(files.length).toBeGreaterThan(50);
    const readers = files
      .filter((file) => !ALLOWED.has(relative(SRC, file)))
      .flatMap((file) =>
        readFileSync(file, 'utf8')
          .split('\n')
          .map((line, i) => ({ line, at: `${relative(SRC, file)}:${i + 1}` }))
          .filter(({ line }) => SYSTEM_TIME.test(line) && !line.trim().startsWith('*')),
      )
      .map(({ at, line }) => `${at}: ${line.trim()}`);
    expect(readers).toEqual([]);
  });

  it('the check finds a reader where there is one', () => {
    expect(SYSTEM_TIME.test('const at = new Date();')).toBe(true);
    expect(SYSTEM_TIME.test('if (Date.now() > x)')).toBe(true);
    expect(SYSTEM_TIME.test("new Date('2026-01-01')")).toBe(false);
  });
});
