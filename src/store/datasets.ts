import { documentId } from '../domain/ids.js';
import type { Collections } from './collections.js';
import { UPSERTS_PER_COMMAND } from './database.js';
import type { DatasetDoc } from './documents.js';
import { keysetPage } from './pages.js';
import type { ReadCache } from './readCache.js';

export function datasetDocumentId(workspaceId: string, name: string): string {
  return documentId('dataset', workspaceId, name);
}

/** Records that a dataset exists; writing it again changes nothing. */
export async function ensureDatasets(
  db: Collections,
  workspaceId: string,
  names: Iterable<string>,
  now: Date,
): Promise<void> {
  const ops = [...new Set(names)].map((name) => ({
    updateOne: {
      filter: { _id: datasetDocumentId(workspaceId, name) },
      update: { $setOnInsert: { workspaceId, name, createdAt: now } },
      upsert: true,
    },
  }));
  // A few upserts to a command: see UPSERTS_PER_COMMAND.
  for (let i = 0; i < ops.length; i += UPSERTS_PER_COMMAND) {
    await db.datasets.bulkWrite(ops.slice(i, i + UPSERTS_PER_COMMAND), {
      ordered: false,
      comment: 'store:ensureDatasets',
    });
  }
}

/** A dataset of the workspace, or null; with a `cache`, one found recently costs no read. */
export async function findDataset(
  db: Collections,
  workspaceId: string,
  name: string,
  cache: ReadCache | null = null,
): Promise<DatasetDoc | null> {
  const id = datasetDocumentId(workspaceId, name);
  const remembered = cache?.datasets.get(id);
  if (remembered) return remembered;
  const found = await db.datasets.findOne(
    { _id: id, workspaceId },
    { comment: 'store:findDataset' },
  );
  if (found) cache?.datasets.set(id, found);
  return found;
}

/** Forgets a dataset this process has just erased, so it reads as absent at once. */
export function forgetDataset(cache: ReadCache | null, workspaceId: string, name: string): void {
  cache?.datasets.delete(datasetDocumentId(workspaceId, name));
}

/** Datasets of a workspace in name order, keyset-paginated by name. */
export async function listDatasets(
  db: Collections,
  workspaceId: string,
  page: { first: number; after?: string | null },
): Promise<{ datasets: DatasetDoc[]; hasNextPage: boolean }> {
  const filter = page.after != null ? { workspaceId, name: { $gt: page.after } } : { workspaceId };
  const { nodes, hasNextPage } = await keysetPage(
    db.datasets.find(filter, { comment: 'store:listDatasets' }).sort({ name: 1 }),
    page.first,
  );
  return { datasets: nodes, hasNextPage };
}

export function countDatasets(db: Collections, workspaceId: string): Promise<number> {
  return db.datasets.countDocuments({ workspaceId }, { comment: 'store:countDatasets' });
}
