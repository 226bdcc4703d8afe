import type { Filter } from 'mongodb';
import { documentsByIds } from './byIds.js';
import type { Collections } from './collections.js';
import { type DocumentReads, projectionFor } from './documentReads.js';
import { type EpisodeDoc, episodeDocumentId } from './documents.js';
import { EPISODE_ORDER } from './orders.js';
import { afterCursor, keysetPage } from './pages.js';
import type { Tenant } from './tenant.js';

/** What a page of episodes reads whatever is asked: its order. */
const EPISODE_PAGE_NEEDS = ['occurredAt', 'episodeId'] as const;

export interface EpisodeCursor {
  occurredAt: Date;
  episodeId: string;
}

/** Episodes, most recent first. */
export async function listEpisodes(
  db: Collections,
  tenant: Tenant,
  page: { first: number; after?: EpisodeCursor | null },
  reads: DocumentReads | null = null,
): Promise<{ episodes: EpisodeDoc[]; hasNextPage: boolean }> {
  const filter: Filter<EpisodeDoc> = {
    workspaceId: tenant.workspaceId,
    dataset: tenant.dataset,
    ...(page.after ? afterCursor('occurredAt', 'episodeId', page.after) : {}),
  };
  const { nodes, hasNextPage } = await keysetPage(
    db.episodes
      .find(filter, {
        comment: 'store:listEpisodes',
        projection: projectionFor(reads, undefined, EPISODE_PAGE_NEEDS),
      })
      .sort(EPISODE_ORDER),
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
  reads: DocumentReads | null = null,
): Promise<Map<string, EpisodeDoc>> {
  const ids = episodeIds.map((id) => episodeDocumentId(tenant, id));
  return documentsByIds(db.episodes, tenant, ids, (d) => d.episodeId, 'store:episodesByIds', {
    projection: projectionFor(reads, undefined, ['episodeId']),
  });
}
