import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { ensureFerretDbBinary } from '../../src/embedded/ferretdb.js';

/**
 * The embedded database links a SQLite driver whose query cancellation cannot reach another
 * query. FerretDB 1.24.2 asks for modernc.org/sqlite v1.32.0, where a command stopped at
 * its maxTimeMS could leave SQLite's interrupt pending on the pooled connection (the flag was
 * checked, then the interrupt sent, with the connection perhaps already serving another
 * command; and rows cut short that way were never closed, so the interrupt stayed in force):
 * a later, unrelated read on that connection then failed with "interrupted", a 500 for a
 * tenant whose own request had time left. v1.42.2 checks and interrupts under one lock and
 * closes such rows (embedded-db/README.md, "The SQLite driver").
 */
const FIXED = [1, 42, 2];

const newer = (version: number[], than: number[]) => {
  for (let i = 0; i < than.length; i++) {
    if ((version[i] ?? 0) !== than[i]) return (version[i] ?? 0) > than[i]!;
  }
  return true;
};

describe('the embedded database’s SQLite driver', () => {
  it('is the release whose cancellations stay with their own query', async () => {
    const binary = await ensureFerretDbBinary();
    // What the built binary links, as Go recorded it (not what a go.mod asks for).
    const info = spawnSync('go', ['version', '-m', binary], { encoding: 'utf8' });
    expect(info.status, info.stderr).toBe(0);
    const line = info.stdout.split('\n').find((l) => /\bdep\s+modernc\.org\/sqlite\s/.test(l));
    expect(line, info.stdout).toBeDefined();
    const version = /\sv(\d+)\.(\d+)\.(\d+)/.exec(line!);
    expect(version, line).not.toBeNull();
    const linked = version!.slice(1, 4).map(Number);
    expect(newer(linked, FIXED), `links modernc.org/sqlite v${linked.join('.')}`).toBe(true);
  });
});
