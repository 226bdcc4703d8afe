import { createHash } from 'node:crypto';
import { tenantOf } from '../context.js';
import { badInput, GatewayError } from '../errors.js';
import {
  countChanges,
  type FeedChange,
  type FeedPosition,
  feedAfter,
  feedIssued,
} from '../store/changes.js';
import type { FeedEvent, StreamEnd } from '../store/changeWatch.js';
import type { Collections } from '../store/collections.js';
import { findDataset } from '../store/datasets.js';
import { DATASET_CHANGE_KINDS } from '../store/documents.js';
import { type Tenant, tenantOfDataset } from '../store/tenant.js';
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

/**
 * Which feed a cursor was issued by: a digest of the workspace, the dataset and the
 * feed's epoch. A check against mistakes (a cursor of another dataset, or one altered),
 * not a secret: a key reads only its own workspace's feeds whatever a cursor says.
 */
function feedMark(tenant: Tenant, epoch: number): string {
  return createHash('sha256')
    .update(JSON.stringify([tenant.workspaceId, tenant.dataset, epoch]))
    .digest('base64url')
    .slice(0, 16);
}

/** A change's cursor: its feed's epoch, its number there, and the mark of its feed. */
const CHANGE_CURSOR: CursorKey<FeedChange, FeedPosition & { mark: string }> = {
  kind: 'change',
  shape: ['time', 'position', 'string'],
  of: (change) => [change.epoch, change.seq, feedMark(change, change.epoch)],
  position: ([epoch, seq, mark]) => ({
    epoch: epoch as number,
    seq: seq as number,
    mark: mark as string,
  }),
};

/**
 * The position of `after` in the feed of `tenant`'s dataset (created at `epoch`; 0: it
 * does not exist now), once proven to be one this feed issued; otherwise BAD_USER_INPUT
 * naming `after`, never a page read from a position the feed never had.
 */
async function issuedPosition(
  store: Collections,
  tenant: Tenant,
  epoch: number,
  after: string,
): Promise<FeedPosition> {
  const { mark, ...position } = CHANGE_CURSOR.position(
    decodeCursor(CHANGE_CURSOR.kind, after, CHANGE_CURSOR.shape),
  );
  const shown = after.slice(0, 60);
  if (mark !== feedMark(tenant, position.epoch)) {
    throw badInput(
      `after: "${shown}" is not a cursor of this dataset's changes (it is another dataset's, or was altered)`,
    );
  }
  if (!(await feedIssued(store, tenant, epoch, position))) {
    throw badInput(`after: "${shown}" is not a position this dataset's changes ever had`);
  }
  return position;
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
    resolve: async (ds, args, ctx, info) => {
      const tenant = tenantOfDataset(ds);
      const epoch = ds.createdAt.getTime();
      const after = args.after ? await issuedPosition(ctx.store, tenant, epoch, args.after) : null;
      return resolvePage({
        cursor: CHANGE_CURSOR,
        // `after` is decoded and proven above.
        args: { first: args.first },
        info,
        count: () => countChanges(ctx.store, tenant),
        list: async ({ first }) => {
          const all = await feedAfter(ctx.store, tenant, epoch, after, first + 1);
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
    subscribe: async (_root, args, ctx) => {
      if (!ctx.live) throw new GatewayError('NOT_BUILT', 'Live updates are not served here');
      const tenant = tenantOf(ctx, args.dataset);
      let after: FeedPosition | null = null;
      if (args.after) {
        // The dataset as the store has it now (uncached, as the feed's watch reads it).
        const dataset = await findDataset(ctx.store, tenant.workspaceId, tenant.dataset);
        const epoch = dataset?.createdAt.getTime() ?? 0;
        after = await issuedPosition(ctx.store, tenant, epoch, args.after);
      }
      return ctx.live.follow(ctx, tenant, after);
    },
    resolve: (event: FeedEvent) => {
      if ('end' in event) throw STREAM_ENDS[event.end]();
      return event.change;
    },
  }),
}));
