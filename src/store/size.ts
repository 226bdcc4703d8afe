import type { Collections } from './collections.js';
import { listDatasets } from './datasets.js';

/** How many facts one dataset holds. */
export interface DatasetSize {
  workspace: string;
  dataset: string;
  facts: number;
}

const DATASETS_PER_PAGE = 1000;

/**
 * The facts of every dataset of every workspace: the size the embedded store reports at
 * start-up and after an import (src/embedded/sizeNotice.ts). One count per dataset, each
 * on the tenant's own facts, so the embedded database decodes each fact once.
 */
export async function datasetSizes(db: Collections): Promise<DatasetSize[]> {
  const workspaces = await db.workspaces
    .find({}, { comment: 'store:datasetSizes' })
    .sort({ name: 1 })
    .toArray();
  const sizes: DatasetSize[] = [];
  for (const workspace of workspaces) {
    let after: string | null = null;
    for (;;) {
      const page = await listDatasets(db, workspace._id, { first: DATASETS_PER_PAGE, after });
      for (const { name } of page.datasets) {
        const facts = await db.facts.countDocuments(
          { workspaceId: workspace._id, dataset: name },
          { comment: 'store:datasetSizes' },
        );
        sizes.push({ workspace: workspace.name, dataset: name, facts });
      }
      if (!page.hasNextPage) break;
      after = page.datasets.at(-1)!.name;
    }
  }
  return sizes;
}
