import type { Filter } from 'mongodb';
import { documentsByIds } from './byIds.js';
import type { Collections } from './collections.js';
import { type EpisodeDoc, episodeDocumentId } from './documents.js';
import { EPISODE_ORDER } from './orders.js';
import { afterCursor, keysetPage } from './pages.js';
import type { Tenant } from './tenant.js';

export interface EpisodeCursor {
  occurredAt: Date;
  episodeId: string;
}

/** Episodes, most recent first. */
export async function listEpisodes(
  db: Collections,
  tenant: Tenant,
  page: { first: number; after?: EpisodeCursor | null },
): Promise<{ episodes: EpisodeDoc[]; hasNextPage: boolean }> {
  const filter: Filter<EpisodeDoc> = {
    workspaceId: tenant.workspaceId,
    dataset: tenant.dataset,
    ...(page.after ? afterCursor('occurredAt', 'episodeId', page.after) : {}),
  };
  const { nodes, hasNextPage } = await keysetPage(
    db.episodes.find(filter, { comment: 'store:listEpisodes' }).sort(EPISODE_ORDER),
    page.first,
  );
  return { episodes: nodes, hasNextPage };
}

export function countEpisodes(db: Collections, tenant: Tenant): Promise<number> {
  return db.episodes.countDocuments(
    { workspaceId: tenant.workspaceId, dataset: tenant.dataset },
    { comment: 'store:countEpisodes' },
  );
}

export function episodesByIds(
  db: Collections,
  tenant: Tenant,
  episodeIds: readonly string[],
): Promise<Map<string, EpisodeDoc>> {
  const ids = episodeIds.map((id) => episodeDocumentId(tenant, id));
  return documentsByIds(db.episodes, tenant, ids, (d) => d.episodeId, 'store:episodesByIds');
}
