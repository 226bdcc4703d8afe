import { tenantOf } from '../context.js';
import { GatewayError } from '../errors.js';
import { countChanges, type FeedChange, type FeedPosition, feedAfter } from '../store/changes.js';
import type { FeedEvent, StreamEnd } from '../store/changeWatch.js';
import { DATASET_CHANGE_KINDS } from '../store/documents.js';
import { tenantOfDataset } from '../store/tenant.js';
import { afterArg, datasetArg } from './args.js';
import { builder } from './builder.js';
import { connectionType, pageArgs, resolvePage } from './connections.js';
import { LOADED_OBJECT_COST, pageComplexity } from './cost.js';
import { type CursorKey, decodeCursor, encodeCursor } from './cursors.js';
import { DatasetRef } from './dataset.js';
import { EpisodeRef } from './episode.js';
import { ErasureCountsRef } from './erasure.js';
import { FactRef } from './fact.js';
import { MemoryRef } from './memory.js';
import { loadedReference } from './references.js';

/**
 * A dataset's change feed (docs/LIVE_UPDATES.md): every change the store made to it, in
 * the order it made them (store/changes.ts), read a page at a time after a cursor.
 */

const DatasetChangeKindEnum = builder.enumType('DatasetChangeKind', {
  description:
    'What a change did. FACT_* changes name their fact, EPISODE_RECORDED its episode, MEMORY_* their memory; EPISODE_ERASED and DATASET_ERASED carry only what they removed.',
  values: DATASET_CHANGE_KINDS,
});

/** A change's cursor: its feed's epoch and its number there. */
const CHANGE_CURSOR: CursorKey<FeedChange, FeedPosition> = {
  kind: 'change',
  shape: ['time', 'position'],
  of: (change) => [change.epoch, change.seq],
  position: ([epoch, seq]) => ({ epoch: epoch as number, seq: seq as number }),
};

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
    fact: t.field(
      loadedReference(
        FactRef,
        'FACT_* kinds: the fact.',
        (l) => l.factById,
        (c: FeedChange) => (c.factId ? { dataset: c.dataset, factId: c.factId } : null),
      ),
    ),
    episode: t.field(
      loadedReference(
        EpisodeRef,
        'EPISODE_RECORDED (and FACT_RECORDED): the episode.',
        (l) => l.episodeById,
        (c: FeedChange) => (c.episodeId ? { dataset: c.dataset, episodeId: c.episodeId } : null),
      ),
    ),
    memory: t.field(
      loadedReference(
        MemoryRef,
        'MEMORY_* kinds: the memory.',
        (l) => l.memoryById,
        (c: FeedChange) => (c.memoryId ? { dataset: c.dataset, memoryId: c.memoryId } : null),
      ),
    ),
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
    args: pageArgs,
    resolve: (ds, args, ctx, info) => {
      const tenant = tenantOfDataset(ds);
      return resolvePage({
        cursor: CHANGE_CURSOR,
        args,
        info,
        count: () => countChanges(ctx.store, tenant),
        list: async ({ first, after }) => {
          const all = await feedAfter(ctx.store, tenant, ds.createdAt.getTime(), after, first + 1);
          return { changes: all.slice(0, first), hasNextPage: all.length > first };
        },
        nodes: (page) => page.changes,
      });
    },
  }),
}));

/** How a live stream the gateway ended says so: the error, and that resuming is safe. */
const STREAM_ENDS: Record<StreamEnd, () => GatewayError> = {
  overflow: () =>
    new GatewayError(
      'STREAM_OVERFLOW',
      'This stream fell too far behind (LIVE_BUFFER changes waiting); subscribe again with after: the last cursor you received',
    ),
  shutdown: () =>
    new GatewayError(
      'SHUTTING_DOWN',
      'This gateway process is shutting down; subscribe again (with after: the last cursor you received) to continue on another',
    ),
  revoked: () =>
    new GatewayError('UNAUTHENTICATED', 'The API key of this stream is no longer valid'),
};

builder.subscriptionFields((t) => ({
  datasetChanges: t.withAuth({ read: true }).field({
    type: DatasetChangeRef,
    description:
      "The dataset's changes as they happen (docs/LIVE_UPDATES.md). Without `after`, from now; with a cursor (of `Dataset.changes` or of an earlier event), every change after it first, then live. A dataset that does not exist (or is another workspace's) is a silent stream. An error event ends the stream: STREAM_OVERFLOW and SHUTTING_DOWN are safe to resume from the last cursor.",
    args: {
      dataset: t.arg.string(datasetArg),
      after: t.arg.string(afterArg),
    },
    complexity: LOADED_OBJECT_COST,
    subscribe: (_root, args, ctx) => {
      const after = args.after
        ? CHANGE_CURSOR.position(decodeCursor(CHANGE_CURSOR.kind, args.after, CHANGE_CURSOR.shape))
        : null;
      if (!ctx.live) throw new GatewayError('NOT_BUILT', 'Live updates are not served here');
      return ctx.live.follow(ctx, tenantOf(ctx, args.dataset), after);
    },
    resolve: (event: FeedEvent) => {
      if ('end' in event) throw STREAM_ENDS[event.end]();
      return event.change;
    },
  }),
}));
