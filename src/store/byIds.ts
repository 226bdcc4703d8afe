import type { Collection, Filter } from 'mongodb';
import { UNPAGED_BATCH_SIZE } from './database.js';
import type { Tenant } from './tenant.js';

/**
 * A tenant's documents by their `_id`s, in one `$in` read (a loader's batch, a write's
 * check that what it names exists), keyed by `keyOf` (the public id, or the name): an id
 * that is missing, or another tenant's, is simply absent. The `_id`s are derived from the
 * tenant and the public id (store/documents.ts), so the read is by primary key; the tenant
 * is in the filter as well, for the shard key to route it.
 */
export async function documentsByIds<
  D extends { _id: string; workspaceId: string; dataset: string },
>(
  collection: Collection<D>,
  tenant: Tenant,
  documentIds: readonly string[],
  keyOf: (doc: D) => string,
  comment: string,
  options: { projection?: Readonly<Record<string, 0 | 1>> | undefined } = {},
): Promise<Map<string, D>> {
  const filter = {
    _id: { $in: [...new Set(documentIds)] },
    workspaceId: tenant.workspaceId,
    dataset: tenant.dataset,
  } as Filter<D>;
  const docs = (await collection
    .find(filter, { comment, projection: options.projection })
    .batchSize(UNPAGED_BATCH_SIZE)
    .toArray()) as D[];
  return new Map(docs.map((d) => [keyOf(d), d]));
}
