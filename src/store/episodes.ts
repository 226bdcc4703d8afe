import { documentId, normalizeUuid } from '../domain/ids.js';
import { type Collections, UNPAGED_BATCH_SIZE } from './database.js';
import type { EpisodeDoc } from './documents.js';
import type { Tenant } from './tenant.js';

export function episodeDocumentId(tenant: Tenant, episodeId: string): string {
  return documentId('episode', tenant.workspaceId, tenant.dataset, normalizeUuid(episodeId));
}

export interface EpisodeCursor {
  occurredAt: Date;
  episodeId: string;
}

/** Episodes, most recent first. */
export async function listEpisodes(
  c: Collections,
  tenant: Tenant,
  page: { first: number; after?: EpisodeCursor | null },
): Promise<{ episodes: EpisodeDoc[]; hasNextPage: boolean }> {
  const filter = {
    workspaceId: tenant.workspaceId,
    dataset: tenant.dataset,
    ...(page.after
      ? {
          $or: [
            { occurredAt: { $lt: page.after.occurredAt } },
            { occurredAt: page.after.occurredAt, episodeId: { $lt: page.after.episodeId } },
          ],
        }
      : {}),
  };
  const docs = await c.episodes
    .find(filter, { comment: 'store:listEpisodes' })
    .sort({ occurredAt: -1, episodeId: -1 })
    .limit(page.first + 1)
    .batchSize(page.first + 1)
    .toArray();
  return { episodes: docs.slice(0, page.first), hasNextPage: docs.length > page.first };
}

export function countEpisodes(c: Collections, tenant: Tenant): Promise<number> {
  return c.episodes.countDocuments(
    { workspaceId: tenant.workspaceId, dataset: tenant.dataset },
    { comment: 'store:countEpisodes' },
  );
}

export async function episodesByIds(
  c: Collections,
  tenant: Tenant,
  episodeIds: readonly string[],
): Promise<Map<string, EpisodeDoc>> {
  const ids = [...new Set(episodeIds.map((id) => episodeDocumentId(tenant, id)))];
  const docs = await c.episodes
    .find(
      { _id: { $in: ids }, workspaceId: tenant.workspaceId, dataset: tenant.dataset },
      { comment: 'store:episodesByIds' },
    )
    .batchSize(UNPAGED_BATCH_SIZE)
    .toArray();
  return new Map(docs.map((d) => [d.episodeId, d]));
}
