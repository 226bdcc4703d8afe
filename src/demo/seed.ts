import { chmod, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Collections } from '../store/collections.js';
import { countWorkspaces, createApiKey } from '../store/workspaces.js';
import { importJsonl } from '../transfer/importJsonl.js';

export const DEMO_WORKSPACE = 'development';
export const DEMO_DATASET = 'user_42';
const DEMO_FILE = new URL('./user_42.jsonl', import.meta.url);
const KEY_FILE = 'development-key.txt';

/** Where the development key is kept, for later starts to print it again. */
export const developmentKeyFile = (dataDir: string) => join(dataDir, KEY_FILE);

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
  const keyFile = developmentKeyFile(dataDir);
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

/**
 * Why ensureDevelopmentData loaded nothing, for the banner: the store already held
 * workspaces (a key made with `npm run keys` before the first `npm start`, an import).
 * The first few names and how many there are.
 */
export async function workspacesBeforeDemo(
  db: Collections,
  shown = 3,
): Promise<{ names: string[]; total: number }> {
  const [docs, total] = await Promise.all([
    db.workspaces
      .find(
        {},
        {
          projection: { name: 1 },
          sort: { name: 1 },
          limit: shown,
          comment: 'store:workspacesBeforeDemo',
        },
      )
      .toArray(),
    countWorkspaces(db),
  ]);
  return { names: docs.map((doc) => doc.name), total };
}
