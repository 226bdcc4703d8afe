import {
  type ChangeDoc,
  changesAfter,
  countChanges,
  DATASET_CHANGE_KINDS,
  datasetErasureAfter,
} from '../store/changes.js';
import type { AuditDoc } from '../store/documents.js';
import { tenantOfDataset } from '../store/tenant.js';
import { afterArg, pageFirstArg } from './args.js';
import { builder } from './builder.js';
import { connectionType, resolvePage } from './connections.js';
import { LOADED_OBJECT_COST, pageComplexity } from './cost.js';
import { type CursorKey, encodeCursor } from './cursors.js';
import { DatasetRef } from './dataset.js';
import { EpisodeRef } from './episode.js';
import { ErasureCountsRef } from './erasure.js';
import { FactRef } from './fact.js';
import { MemoryRef } from './memory.js';

/**
 * A dataset's change feed (docs/LIVE_UPDATES.md): every change the store made to it, in
 * the order it made them (store/changes.ts), read a page at a time after a cursor.
 */

const DatasetChangeKindEnum = builder.enumType('DatasetChangeKind', {
  description:
    'What a change did. FACT_* changes name their fact, EPISODE_RECORDED its episode, MEMORY_* their memory; EPISODE_ERASED and DATASET_ERASED carry only what they removed.',
  values: DATASET_CHANGE_KINDS,
});

/**
 * A change as the feed serves it, with the creation instant of the dataset it was read
 * from (its feed's epoch): a cursor holds both, so a cursor into a feed that an erasure
 * removed is told apart from one into today's.
 */
type FeedChange = Pick<
  ChangeDoc,
  'dataset' | 'seq' | 'changeId' | 'at' | 'kind' | 'factId' | 'episodeId' | 'memoryId' | 'counts'
> & { epoch: number };

/** A change's cursor: its feed's epoch and its number there. */
const CHANGE_CURSOR: CursorKey<FeedChange, { epoch: number; seq: number }> = {
  kind: 'change',
  shape: ['time', 'position'],
  of: (change) => [change.epoch, change.seq],
  position: ([epoch, seq]) => ({ epoch: epoch as number, seq: seq as number }),
};

/** What a client whose cursor named an erased feed is told first: that it was erased. */
function erasureNotice(erased: AuditDoc | null, dataset: string, epoch: number): FeedChange {
  return {
    dataset,
    seq: 0,
    changeId: `dataset-erased:${erased?._id ?? epoch}`,
    at: erased?.at ?? new Date(epoch),
    kind: 'DATASET_ERASED',
    factId: null,
    episodeId: null,
    memoryId: null,
    counts: erased ? (erased.counts as unknown as ChangeDoc['counts']) : null,
    epoch,
  };
}

const DatasetChangeRef = builder.objectRef<FeedChange>('DatasetChange').implement({
  description:
    "One change to a dataset. Its fact, episode or memory is as it is now (it may have changed again since; a later change says so); erased content is gone from the feed, the erasure's own change says what went.",
  authScopes: { read: true },
  fields: (t) => ({
    id: t.exposeID('changeId', {
      description: 'Stable: the same change always has the same id (drop a repeat by it).',
    }),
    cursor: t.string({
      description: 'Resume point: `after: cursor` continues right after this change.',
      resolve: (change) => encodeCursor(CHANGE_CURSOR.kind, CHANGE_CURSOR.of(change)),
    }),
    at: t.expose('at', { type: 'DateTime', description: 'Its transaction time.' }),
    kind: t.expose('kind', { type: DatasetChangeKindEnum }),
    fact: t.field({
      type: FactRef,
      nullable: true,
      description: 'FACT_* kinds: the fact.',
      complexity: LOADED_OBJECT_COST,
      resolve: (change, _args, ctx) =>
        change.factId
          ? ctx.loaders.factById.load({ dataset: change.dataset, factId: change.factId })
          : null,
    }),
    episode: t.field({
      type: EpisodeRef,
      nullable: true,
      description: 'EPISODE_RECORDED (and FACT_RECORDED): the episode.',
      complexity: LOADED_OBJECT_COST,
      resolve: (change, _args, ctx) =>
        change.episodeId
          ? ctx.loaders.episodeById.load({ dataset: change.dataset, episodeId: change.episodeId })
          : null,
    }),
    memory: t.field({
      type: MemoryRef,
      nullable: true,
      description: 'MEMORY_* kinds: the memory.',
      complexity: LOADED_OBJECT_COST,
      resolve: (change, _args, ctx) =>
        change.memoryId
          ? ctx.loaders.memoryById.load({ dataset: change.dataset, memoryId: change.memoryId })
          : null,
    }),
    erased: t.field({
      type: ErasureCountsRef,
      nullable: true,
      description: 'EPISODE_ERASED and DATASET_ERASED: what the erasure removed.',
      resolve: (change) => change.counts,
    }),
  }),
});

const DatasetChangeConnection = connectionType(DatasetChangeRef, 'DatasetChange');

builder.objectFields(DatasetRef, (t) => ({
  changes: t.field({
    type: DatasetChangeConnection,
    description:
      "The dataset's change feed, oldest first: every change after the cursor `after` (from the first without it). A client that resumes with the last cursor it saw misses nothing; a change whose write was slow comes after changes with a later `at` (docs/LIVE_UPDATES.md).",
    complexity: pageComplexity,
    args: {
      first: t.arg.int(pageFirstArg),
      after: t.arg.string(afterArg),
    },
    resolve: (ds, args, ctx, info) => {
      const tenant = tenantOfDataset(ds);
      return resolvePage({
        cursor: CHANGE_CURSOR,
        args,
        info,
        count: () => countChanges(ctx.store, tenant),
        list: async ({ first, after }) => {
          const epoch = ds.createdAt.getTime();
          const served = (c: ChangeDoc): FeedChange => ({ ...c, epoch });
          // A cursor into a feed an erasure removed: that erasure, then today's feed.
          const stale = after !== null && after.epoch !== epoch;
          const notice = stale
            ? [
                erasureNotice(
                  await datasetErasureAfter(ctx.store, tenant, new Date(after.epoch)),
                  ds.name,
                  epoch,
                ),
              ]
            : [];
          const changes = (
            await changesAfter(ctx.store, tenant, stale ? 0 : (after?.seq ?? 0), first + 1)
          ).map(served);
          const all = [...notice, ...changes];
          return { changes: all.slice(0, first), hasNextPage: all.length > first };
        },
        nodes: (page) => page.changes,
      });
    },
  }),
}));
