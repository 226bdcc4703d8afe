import type { EpisodeDoc } from '../store/documents.js';
import { countEpisodes, listEpisodes } from '../store/episodes.js';
import { tenantOfDataset } from '../store/tenant.js';
import {
  deprecatedIdArg,
  EPISODE_ID,
  renamedIdArg,
  renamedIdSchema,
  renamedIdValue,
} from './args.js';
import { READABLE_WITHOUT_READ } from './authScopes.js';
import { builder } from './builder.js';
import { connectionType, pageArgs, resolvePage } from './connections.js';
import { LOADED_OBJECT_COST, pageComplexity } from './cost.js';
import { timeThenId } from './cursors.js';
import { DatasetRef } from './dataset.js';
import { nodeKey, parseNodeKey } from './nodeIds.js';
import { documentFields, selectedReads } from './selectedReads.js';

export const EpisodeRef = builder.objectRef<EpisodeDoc>('Episode');

/** What an episode's fields read of its document (src/schema/selectedReads.ts). */
export const episodeFields = documentFields<EpisodeDoc>();

builder.node(EpisodeRef, {
  description: 'A conversation turn (or other source text) that facts were extracted from.',
  id: {
    resolve: (e) => nodeKey(e.dataset, e.episodeId),
    ...episodeFields.reads('dataset', 'episodeId'),
  },
  // Only an episode has occurredAt (a fact has an episodeId too); its content is read only
  // when selected, so it cannot tell them apart.
  isTypeOf: (value) => typeof value === 'object' && value !== null && 'occurredAt' in value,
  ...episodeFields.always('episodeId', 'dataset', 'occurredAt'),
  authScopes: { read: true },
  loadOne: (key, ctx) => {
    const parsed = parseNodeKey(key);
    return parsed
      ? ctx.loaders.episodeById.load({ dataset: parsed.dataset, episodeId: parsed.id })
      : null;
  },
  fields: (t) => ({
    episodeId: t.exposeID('episodeId', READABLE_WITHOUT_READ),
    dataset: t.exposeString('dataset'),
    occurredAt: t.expose('occurredAt', { type: 'DateTime' }),
    source: t.exposeString('source'),
    content: t.exposeString('content'),
    recordedAt: t.expose('recordedAt', { type: 'DateTime' }),
  }),
});

const EpisodeConnection = connectionType(EpisodeRef, 'Episode');

const EPISODE_CURSOR = timeThenId('episode', 'occurredAt', 'episodeId');

builder.objectFields(DatasetRef, (t) => ({
  episodes: t.field({
    type: EpisodeConnection,
    description: 'Episodes, most recent (occurredAt) first.',
    complexity: pageComplexity,
    args: pageArgs,
    resolve: (ds, args, ctx, info) => {
      const tenant = tenantOfDataset(ds);
      return resolvePage({
        cursor: EPISODE_CURSOR,
        args,
        info,
        count: () => countEpisodes(ctx.store, tenant),
        list: (page) => listEpisodes(ctx.store, tenant, page, selectedReads(info, 'Episode')),
        nodes: (page) => page.episodes,
      });
    },
  }),
  episode: t.field({
    type: EpisodeRef,
    nullable: true,
    args: {
      episodeId: t.arg.id(renamedIdArg(EPISODE_ID, 'The episode.')),
      id: t.arg.id(deprecatedIdArg(EPISODE_ID)),
    },
    validate: renamedIdSchema(EPISODE_ID),
    complexity: LOADED_OBJECT_COST,
    resolve: (ds, args, ctx, info) =>
      ctx.loaders.episodeById.load({
        dataset: ds.name,
        episodeId: renamedIdValue(EPISODE_ID, args),
        reads: selectedReads(info, 'Episode'),
      }),
  }),
}));
