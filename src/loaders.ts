import type { Tracer } from '@opentelemetry/api';
import DataLoader from 'dataloader';
import { resolveTemporalSelection, type TemporalSelection } from './domain/factState.js';
import { normalizeUuid } from './domain/ids.js';
import { entityKey } from './domain/names.js';
import { inSpan } from './spans.js';
import type { Collections } from './store/collections.js';
import { findDataset } from './store/datasets.js';
import { type DocumentReads, mergedReads, readsCover } from './store/documentReads.js';
import type {
  DatasetDoc,
  EntityDoc,
  EpisodeDoc,
  FactDoc,
  FactView,
  MemoryDoc,
} from './store/documents.js';
import { entitiesByNames } from './store/entities.js';
import { episodesByIds } from './store/episodes.js';
import { factsByIds, factsOfEntities, factsOfEpisodes } from './store/facts.js';
import { memoriesByIds } from './store/memories.js';
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

/**
 * What the asking field's selection reads of the document (src/schema/selectedReads.ts;
 * absent or null: the whole view). Keys asking different reads are cached apart, and a
 * batch reads what all its keys ask, in one store call.
 */
interface ReadsKey {
  reads?: DocumentReads | null;
}

const readsOf = (key: ReadsKey) => key.reads ?? null;
const batchReads = (keys: readonly ReadsKey[]) => mergedReads(keys.map(readsOf));

/** Called with each batch's loader name and size (the batch-size metric). */
export type BatchObserver = (loader: string, size: number) => void;

/** What one loader is: its name, how its keys share store calls, and one such call. */
interface GroupedLoaderSpec<K, V> {
  /** The loader's name in the batch-size metric. */
  name: string;
  /** Keys with the same group are answered by one store call. */
  group: (key: K) => string;
  /**
   * The store call for one group's keys (`head`, the first of them, carries what the
   * group shares: its dataset, its arguments); returns the answer for each key.
   */
  load: (keys: K[], head: K) => Promise<(key: K) => V>;
  /**
   * The key's identity in the loader's cache (default: its JSON): keys that must share one
   * answer must have the same one, however the resolver spelled them.
   */
  cacheKey?: (key: K) => string;
}

/**
 * A DataLoader whose batch reports its size, groups its keys, makes one store call per
 * group, and answers in key order. Keys are cached by `cacheKey` (their JSON unless the
 * spec says otherwise): resolvers build a new key object for every parent, and equal keys
 * must share one answer.
 */
function groupedLoader<K, V>(
  spec: GroupedLoaderSpec<K, V>,
  onBatch?: BatchObserver,
  tracer?: Tracer | null,
): DataLoader<K, V, string> {
  const batch = async (keys: readonly K[]): Promise<V[]> => {
    onBatch?.(spec.name, keys.length);
    // Each key's group once: a group can take a selection's resolution to compute.
    const groupOf = keys.map(spec.group);
    const groups = new Map<string, K[]>();
    keys.forEach((key, i) => {
      const members = groups.get(groupOf[i]!);
      if (members) members.push(key);
      else groups.set(groupOf[i]!, [key]);
    });
    const answers = new Map<string, (key: K) => V>();
    await Promise.all(
      [...groups].map(async ([g, members]) =>
        answers.set(g, await spec.load(members, members[0]!)),
      ),
    );
    return keys.map((key, i) => answers.get(groupOf[i]!)!(key));
  };
  return new DataLoader<K, V, string>(
    // Traced, a batch is a span (the resolvers' reads summed up), its reads within it.
    tracer
      ? (keys) =>
          inSpan(tracer, `dataloader.${spec.name}`, { 'dataloader.batch_size': keys.length }, () =>
            batch(keys),
          )
      : batch,
    { cacheKeyFn: spec.cacheKey ?? ((key) => JSON.stringify(key)) },
  );
}

/** `Entity.facts`'s arguments in a loader key: instants as ISO strings, null when absent. */
interface EntityFactsArgs {
  asOf: string | null;
  validAt: string | null;
  knownAt: string | null;
  includeInvalidated: boolean;
  first: number;
}

const instant = (iso: string | null) => (iso === null ? null : new Date(iso));

/** The selection `Entity.facts` reads with: the same rule as `Dataset.facts`. */
function entityFactsSelection(args: EntityFactsArgs, now: Date): TemporalSelection {
  return resolveTemporalSelection(
    {
      asOf: instant(args.asOf),
      validAt: instant(args.validAt),
      knownAt: instant(args.knownAt),
      includeInvalidated: args.includeInvalidated,
    },
    now,
  );
}

/** A selection as a string: equal for equal selections, different for different ones. */
function selectionKey(selection: TemporalSelection): string {
  return selection.kind === 'all'
    ? 'all'
    : `${selection.validAt.toISOString()}/${selection.knownAt.toISOString()}`;
}

export function createLoaders(
  db: Collections,
  workspaceId: string,
  now: Date,
  options: {
    readCache?: ReadCache | null;
    onBatch?: BatchObserver | undefined;
    tracer?: Tracer | null;
  } = {},
) {
  const { onBatch, readCache = null, tracer = null } = options;
  const scope: LoaderScope = {
    db,
    workspaceId,
    now,
    tenant: (dataset) => ({ workspaceId, dataset }),
    loader: (spec) => groupedLoader(spec, onBatch, tracer),
  };
  const pages = entityPages();
  const documents = documentLoaders(scope, pages.readEntity);
  const factLists = factListLoaders(scope);
  return {
    datasetByName: datasetLoader(scope, readCache),
    factById: documents.factById,
    entityByName: documents.entityByName,
    knownEntities: pages.knownEntities,
    episodeById: documents.episodeById,
    memoryById: documents.memoryById,
    factsOfEntity: factLists.factsOfEntity,
    factsOfEpisode: factLists.factsOfEpisode,
  };
}

/** What a request's loaders share: its store, workspace and instant, and how a loader is made. */
interface LoaderScope {
  db: Collections;
  workspaceId: string;
  now: Date;
  tenant: (dataset: string) => Tenant;
  loader: <K, V>(spec: GroupedLoaderSpec<K, V>) => DataLoader<K, V, string>;
}

/** Each name is a group of its own: one cached read per dataset. */
function datasetLoader({ db, workspaceId, loader }: LoaderScope, readCache: ReadCache | null) {
  return loader<string, DatasetDoc | null>({
    name: 'datasetByName',
    group: (name) => name,
    load: async (_keys, name) => {
      const found = await findDataset(db, workspaceId, name, readCache);
      return () => found;
    },
  });
}

/**
 * Entities this request has read as pages: a fact's entity among them is answered from
 * that read instead of being looked up again by derived id. The pages are indexed only
 * when an entity is asked for (a REST list of every entity never is).
 */
function entityPages() {
  const pages: { entities: readonly EntityDoc[]; reads: DocumentReads | null }[] = [];
  const entitiesRead = new Map<string, { entity: EntityDoc; reads: DocumentReads | null }>();
  return {
    /** The entity as a page read it, if that read has every field `reads` asks for. */
    readEntity: (dataset: string, name: string, reads: DocumentReads | null) => {
      for (let page = pages.pop(); page; page = pages.pop()) {
        for (const entity of page.entities) {
          entitiesRead.set(`${entity.dataset}\u0000${entity.name}`, { entity, reads: page.reads });
        }
      }
      const read = entitiesRead.get(`${dataset}\u0000${name}`);
      return read && readsCover(read.reads, reads) ? read.entity : undefined;
    },
    /** A page of entities the request has read, with what it read of them (see `readEntity`). */
    knownEntities: (entities: readonly EntityDoc[], reads: DocumentReads | null = null) => {
      pages.push({ entities, reads });
    },
  };
}

/** Facts, entities, episodes and memories, one document per key. */
function documentLoaders(
  scope: LoaderScope,
  readEntity: (dataset: string, name: string, reads: DocumentReads | null) => EntityDoc | undefined,
) {
  return {
    factById: byIdLoader<DatasetKey & ReadsKey & { factId: string }, FactDoc>(
      scope,
      'factById',
      factsByIds,
      (k) => k.factId,
      normalizeUuid,
    ),
    entityByName: byIdLoader<DatasetKey & ReadsKey & { name: string }, EntityDoc>(
      scope,
      'entityByName',
      entitiesByNames,
      (k) => k.name,
      entityKey,
      readEntity,
    ),
    episodeById: byIdLoader<DatasetKey & ReadsKey & { episodeId: string }, EpisodeDoc>(
      scope,
      'episodeById',
      episodesByIds,
      (k) => k.episodeId,
      normalizeUuid,
    ),
    memoryById: byIdLoader<DatasetKey & ReadsKey & { memoryId: string }, MemoryDoc>(
      scope,
      'memoryById',
      memoriesByIds,
      (k) => k.memoryId,
      normalizeUuid,
    ),
  };
}

/**
 * One document per key, by one `$in` query per dataset, for the keys `alreadyRead` does
 * not answer from what the request has read before.
 */
function byIdLoader<K extends DatasetKey & ReadsKey, V>(
  { db, tenant, loader }: LoaderScope,
  name: string,
  find: (
    db: Collections,
    tenant: Tenant,
    ids: string[],
    reads: DocumentReads | null,
  ) => Promise<Map<string, V>>,
  idOf: (key: K) => string,
  normalize: (id: string) => string,
  alreadyRead: (dataset: string, id: string, reads: DocumentReads | null) => V | undefined = () =>
    undefined,
) {
  return loader<K, V | null>({
    name,
    group: (k) => k.dataset,
    // By the id as the store compares it: `Acme` and `acme` are one entity, one answer.
    cacheKey: (k) => JSON.stringify([k.dataset, normalize(idOf(k)), k.reads?.key ?? null]),
    load: async (keys, head) => {
      const known = (k: K) => alreadyRead(k.dataset, normalize(idOf(k)), readsOf(k));
      const unknown = keys.filter((k) => known(k) === undefined);
      const found =
        unknown.length === 0
          ? new Map<string, V>()
          : await find(db, tenant(head.dataset), unknown.map(idOf), batchReads(unknown));
      return (k) => known(k) ?? found.get(normalize(idOf(k))) ?? null;
    },
  });
}

/** The facts of an entity and of an episode, one list per key. */
function factListLoaders({ db, now, tenant, loader }: LoaderScope) {
  return {
    /**
     * Facts touching an entity (subject or object). The key carries the field's temporal
     * arguments as given (instants as ISO strings); keys whose arguments resolve to the same
     * selection (resolveTemporalSelection at the request's now) and `first` share one store
     * call per dataset, and keys with different selections never do.
     */
    factsOfEntity: loader<DatasetKey & ReadsKey & { name: string } & EntityFactsArgs, FactView[]>({
      name: 'factsOfEntity',
      group: (k) =>
        JSON.stringify([k.dataset, selectionKey(entityFactsSelection(k, now)), k.first]),
      cacheKey: (k) =>
        JSON.stringify([
          k.dataset,
          entityKey(k.name),
          k.asOf,
          k.validAt,
          k.knownAt,
          k.includeInvalidated,
          k.first,
          k.reads?.key ?? null,
        ]),
      load: async (keys, head) => {
        const found = await factsOfEntities(
          db,
          tenant(head.dataset),
          keys.map((k) => k.name),
          entityFactsSelection(head, now),
          head.first,
          batchReads(keys),
        );
        return (k) => found.get(entityKey(k.name)) ?? [];
      },
    }),
    /** The facts an episode produced, whatever their state (the first `first`). */
    factsOfEpisode: loader<
      DatasetKey & ReadsKey & { episodeId: string; first: number },
      FactView[]
    >({
      name: 'factsOfEpisode',
      group: (k) => JSON.stringify([k.dataset, k.first]),
      cacheKey: (k) =>
        JSON.stringify([k.dataset, normalizeUuid(k.episodeId), k.first, k.reads?.key ?? null]),
      load: async (keys, head) => {
        const found = await factsOfEpisodes(
          db,
          tenant(head.dataset),
          keys.map((k) => k.episodeId),
          head.first,
          batchReads(keys),
        );
        return (k) => found.get(normalizeUuid(k.episodeId)) ?? [];
      },
    }),
  };
}
