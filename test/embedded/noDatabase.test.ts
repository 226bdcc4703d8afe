import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * Without Go (so the embedded database cannot be built) and without MONGODB_URI, start-up
 * fails with one sentence saying what to install or set.
 */
const scratch = mkdtempSync(join(tmpdir(), 'memory-gateway-nogo-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('no database available', () => {
  it('npm start explains in one sentence what to install or set', () => {
    const { MONGODB_URI: _uri, ...env } = process.env;
    const result = spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: new URL('../../', import.meta.url),
      encoding: 'utf8',
      env: {
        ...env,
        // Only Node's own folder on PATH: no `go`; an empty cache: nothing built yet.
        PATH: dirname(process.execPath),
        XDG_CACHE_HOME: join(scratch, 'cache'),
        DATA_DIR: join(scratch, 'data'),
        PORT: '0',
      },
      timeout: 60_000,
    });
    expect(result.status).toBe(1);
    expect(result.stderr.trim()).toBe(
      'No database configured: install Go (1.24 or newer) so the embedded FerretDB can be built, or set MONGODB_URI to a MongoDB server.',
    );
  });

  it('a bad setting stops start-up with one message naming the variable', () => {
    const result = spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: new URL('../../', import.meta.url),
      encoding: 'utf8',
      env: { ...process.env, PORT: 'eighty' },
      timeout: 60_000,
    });
    expect(result.status).toBe(1);
    expect(result.stderr.trim()).toBe('Invalid configuration: PORT="eighty" must be a number.');
  });
});
