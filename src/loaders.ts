import DataLoader from 'dataloader';
import { resolveTemporalSelection, type TemporalSelection } from './domain/factState.js';
import { normalizeUuid } from './domain/ids.js';
import { entityKey } from './domain/names.js';
import type { Collections } from './store/database.js';
import { findDataset } from './store/datasets.js';
import type { DatasetDoc, EntityDoc, EpisodeDoc, FactDoc, FactView } from './store/documents.js';
import { entitiesByNames } from './store/entities.js';
import { episodesByIds } from './store/episodes.js';
import { factsByIds, factsOfEntities, factsOfEpisodes } from './store/facts.js';
import type { ReadCache } from './store/readCache.js';
import type { Tenant } from './store/tenant.js';

/**
 * Every DataLoader of a request, declared in one place and created per request with its
 * context (never shared: a loader's cache is one workspace's data). Keys carry the
 * dataset, and the batch functions issue one query per dataset (and per distinct
 * temporal argument set), however many parents ask.
 */
export type Loaders = ReturnType<typeof createLoaders>;

interface DatasetKey {
  dataset: string;
}

const cacheKey = (key: object) => JSON.stringify(key);

/** Groups keys by a string so each group is one store call; answers in key order. */
function batchBy<K, V>(
  group: (key: K) => string,
  load: (groupKeys: K[]) => Promise<(key: K) => V>,
): (keys: readonly K[]) => Promise<V[]> {
  return async (keys) => {
    const groups = new Map<string, K[]>();
    for (const key of keys) {
      const g = group(key);
      groups.set(g, [...(groups.get(g) ?? []), key]);
    }
    const answers = new Map<string, (key: K) => V>();
    await Promise.all(
      [...groups].map(async ([g, groupKeys]) => answers.set(g, await load(groupKeys))),
    );
    return keys.map((key) => answers.get(group(key))!(key));
  };
}

/** Called with each batch's loader name and size (the batch-size metric). */
export type BatchObserver = (loader: string, size: number) => void;

export function createLoaders(
  c: Collections,
  workspaceId: string,
  now: Date,
  options: { readCache?: ReadCache | null; onBatch?: BatchObserver | undefined } = {},
) {
  const { onBatch, readCache = null } = options;
  const tenant = (dataset: string): Tenant => ({ workspaceId, dataset });
  const observed =
    <K, V>(name: string, batch: (keys: readonly K[]) => Promise<V[]>) =>
    (keys: readonly K[]) => {
      onBatch?.(name, keys.length);
      return batch(keys);
    };

  const datasetByName = new DataLoader<string, DatasetDoc | null>(
    observed('datasetByName', async (names) =>
      Promise.all(names.map((name) => findDataset(c, workspaceId, name, readCache))),
    ),
  );

  const factById = new DataLoader<DatasetKey & { factId: string }, FactDoc | null, string>(
    observed(
      'factById',
      batchBy(
        (k) => k.dataset,
        async (keys) => {
          const found = await factsByIds(
            c,
            tenant(keys[0]!.dataset),
            keys.map((k) => k.factId),
          );
          return (k) => found.get(normalizeUuid(k.factId)) ?? null;
        },
      ),
    ),
    { cacheKeyFn: cacheKey },
  );

  const entityByName = new DataLoader<DatasetKey & { name: string }, EntityDoc | null, string>(
    observed(
      'entityByName',
      batchBy(
        (k) => k.dataset,
        async (keys) => {
          const found = await entitiesByNames(
            c,
            tenant(keys[0]!.dataset),
            keys.map((k) => k.name),
          );
          return (k) => found.get(entityKey(k.name)) ?? null;
        },
      ),
    ),
    { cacheKeyFn: cacheKey },
  );

  const episodeById = new DataLoader<DatasetKey & { episodeId: string }, EpisodeDoc | null, string>(
    observed(
      'episodeById',
      batchBy(
        (k) => k.dataset,
        async (keys) => {
          const found = await episodesByIds(
            c,
            tenant(keys[0]!.dataset),
            keys.map((k) => k.episodeId),
          );
          return (k) => found.get(normalizeUuid(k.episodeId)) ?? null;
        },
      ),
    ),
    { cacheKeyFn: cacheKey },
  );

  /** Facts touching an entity (subject or object), per temporal argument set. */
  const factsOfEntity = new DataLoader<
    DatasetKey & {
      name: string;
      asOf: string | null;
      includeInvalidated: boolean;
      first: number;
    },
    FactView[],
    string
  >(
    observed(
      'factsOfEntity',
      batchBy(
        (k) => JSON.stringify([k.dataset, k.asOf, k.includeInvalidated, k.first]),
        async (keys) => {
          const first = keys[0]!;
          const selection: TemporalSelection = resolveTemporalSelection(
            {
              asOf: first.asOf ? new Date(first.asOf) : null,
              includeInvalidated: first.includeInvalidated,
            },
            now,
          );
          const found = await factsOfEntities(
            c,
            tenant(first.dataset),
            keys.map((k) => k.name),
            selection,
            first.first,
          );
          return (k) => found.get(entityKey(k.name)) ?? [];
        },
      ),
    ),
    { cacheKeyFn: cacheKey },
  );

  /** The facts an episode produced, whatever their state (the first `first`). */
  const factsOfEpisode = new DataLoader<
    DatasetKey & { episodeId: string; first: number },
    FactView[],
    string
  >(
    observed(
      'factsOfEpisode',
      batchBy(
        (k) => JSON.stringify([k.dataset, k.first]),
        async (keys) => {
          const found = await factsOfEpisodes(
            c,
            tenant(keys[0]!.dataset),
            keys.map((k) => k.episodeId),
            keys[0]!.first,
          );
          return (k) => found.get(normalizeUuid(k.episodeId)) ?? [];
        },
      ),
    ),
    { cacheKeyFn: cacheKey },
  );

  return { datasetByName, factById, entityByName, episodeById, factsOfEntity, factsOfEpisode };
}
