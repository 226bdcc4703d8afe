import { chmod, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Collections } from '../store/database.js';
import { countWorkspaces, createApiKey } from '../store/workspaces.js';
import { importJsonl } from '../transfer/importJsonl.js';

export const DEMO_WORKSPACE = 'development';
export const DEMO_DATASET = 'user_42';
const DEMO_FILE = new URL('./user_42.jsonl', import.meta.url);
const KEY_FILE = 'development-key.txt';

/**
 * Development mode on the embedded store: on an empty store, creates the `development`
 * workspace, a key with every scope, and the demo dataset `user_42` (the Memory Soda
 * document's examples plus history: a superseded, an expired, a future and a soft-deleted
 * fact, and memories including an archived and a superseded one), through the import path.
 * The database keeps only the key's hash; the developer's copy of the key is written to
 * DATA_DIR/development-key.txt (mode 0600) so later starts can print it again.
 * Returns the development key, or null when the store holds other data and no key file.
 */
export async function ensureDevelopmentData(
  db: Collections,
  dataDir: string,
  now: Date,
): Promise<string | null> {
  const keyFile = join(dataDir, KEY_FILE);
  if ((await countWorkspaces(db)) > 0) {
    try {
      return (await readFile(keyFile, 'utf8')).trim() || null;
    } catch {
      return null;
    }
  }
  const created = await createApiKey(db, DEMO_WORKSPACE, ['read', 'write', 'admin'], now);
  await loadDemoDataset(db, DEMO_WORKSPACE, now);
  await writeFile(keyFile, `${created.key}\n`, { mode: 0o600 });
  await chmod(keyFile, 0o600);
  return created.key;
}

/** Loads the demo dataset into a workspace (idempotent, like any import). */
export async function loadDemoDataset(
  db: Collections,
  workspace: string,
  now: Date,
): Promise<void> {
  const outcome = await importJsonl(db, {
    workspace,
    content: await readFile(DEMO_FILE, 'utf8'),
    defaultDataset: DEMO_DATASET,
    now,
  });
  if (!outcome.ok) throw new Error(`demo dataset is invalid: ${JSON.stringify(outcome.errors)}`);
}
