import type { Filter } from 'mongodb';
import { type Collections, UNPAGED_BATCH_SIZE } from './database.js';
import { type EpisodeDoc, episodeDocumentId } from './documents.js';
import { afterCursor, keysetPage } from './pages.js';
import type { Tenant } from './tenant.js';

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
  const filter: Filter<EpisodeDoc> = {
    workspaceId: tenant.workspaceId,
    dataset: tenant.dataset,
    ...(page.after ? afterCursor('occurredAt', 'episodeId', page.after) : {}),
  };
  const { nodes, hasNextPage } = await keysetPage(
    c.episodes
      .find(filter, { comment: 'store:listEpisodes' })
      .sort({ occurredAt: -1, episodeId: -1 }),
    page.first,
  );
  return { episodes: nodes, hasNextPage };
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
