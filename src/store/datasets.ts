import { documentId } from '../domain/ids.js';
import type { Collections } from './database.js';
import type { DatasetDoc } from './documents.js';

export function datasetDocumentId(workspaceId: string, name: string): string {
  return documentId('dataset', workspaceId, name);
}

/** Records that a dataset exists; writing it again changes nothing. */
export async function ensureDatasets(
  c: Collections,
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
  if (ops.length > 0)
    await c.datasets.bulkWrite(ops, { ordered: false, comment: 'store:ensureDatasets' });
}

export async function findDataset(
  c: Collections,
  workspaceId: string,
  name: string,
): Promise<DatasetDoc | null> {
  return c.datasets.findOne(
    { _id: datasetDocumentId(workspaceId, name), workspaceId },
    { comment: 'store:findDataset' },
  );
}

/** Datasets of a workspace in name order, keyset-paginated by name. */
export async function listDatasets(
  c: Collections,
  workspaceId: string,
  page: { first: number; after?: string | null },
): Promise<{ datasets: DatasetDoc[]; hasNextPage: boolean }> {
  const filter = page.after != null ? { workspaceId, name: { $gt: page.after } } : { workspaceId };
  const docs = await c.datasets
    .find(filter, { comment: 'store:listDatasets' })
    .sort({ name: 1 })
    .limit(page.first + 1)
    .batchSize(page.first + 1)
    .toArray();
  return { datasets: docs.slice(0, page.first), hasNextPage: docs.length > page.first };
}

export function countDatasets(c: Collections, workspaceId: string): Promise<number> {
  return c.datasets.countDocuments({ workspaceId }, { comment: 'store:countDatasets' });
}
