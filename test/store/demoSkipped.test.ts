import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureDevelopmentData, workspacesBeforeDemo } from '../../src/demo/seed.js';
import type { Database } from '../../src/store/database.js';
import { createApiKey } from '../../src/store/workspaces.js';
import { openTestDatabase } from '../helpers/database.js';

/** What the banner says when the demo found the store not empty (src/main.ts). */

let database: Database;
let dataDir: string;

beforeAll(async () => {
  database = await openTestDatabase();
  dataDir = mkdtempSync(join(tmpdir(), 'demo-skipped-test-'));
});

afterAll(async () => {
  await database?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe('workspacesBeforeDemo', () => {
  it('names the first workspaces by name, and counts them all', async () => {
    const db = database.collections;
    for (const name of ['zeta', 'acme', 'beta', 'mid']) {
      await createApiKey(db, name, ['read'], new Date());
    }
    // The store is not empty and DATA_DIR has no key file: no demo, no key.
    expect(await ensureDevelopmentData(db, dataDir, new Date())).toBeNull();
    expect(await workspacesBeforeDemo(db)).toEqual({ names: ['acme', 'beta', 'mid'], total: 4 });
    expect(await workspacesBeforeDemo(db, 10)).toEqual({
      names: ['acme', 'beta', 'mid', 'zeta'],
      total: 4,
    });
  });
});
