import { EventEmitter } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { documentId } from '../domain/ids.js';
import { duplicateKeyIndexes } from './bulkErrors.js';
import type { Collections } from './collections.js';
import { isDuplicateKey } from './database.js';
import type { AuditDoc, ChangeDoc } from './documents.js';
import type { Tenant } from './tenant.js';

/**
 * A dataset's change feed (docs/LIVE_UPDATES.md): every change a write makes, in the order
 * the store took them, each at a per-dataset sequence number claimed by inserting the
 * change itself as `change:<tenant>:<seq>`. Inserting an existing `_id` fails atomically
 * on FerretDB and MongoDB alike, so two writers never share a number, and a writer takes
 * number n+1 only after it has read n, so every number a reader sees has all the lower
 * ones already visible: reading "after seq s" in order never skips a change, on any
 * replica. The same insert claims the change's natural key (`changeId`, unique in its
 * dataset: the `tenant_change_once` index), so the database itself refuses a second copy
 * of a change however many writers (retries, racing deliveries, repairs) append it at
 * once. A change is never deleted (a reused number could hide a later change from a
 * client that had read past it); erasure redacts it in place.
 */

export type NewChange = Pick<ChangeDoc, 'changeId' | 'at' | 'kind'> &
  Partial<Pick<ChangeDoc, 'factId' | 'episodeId' | 'memoryId' | 'counts'>>;

/**
 * Feed writes made by this process, by tenant (`feedKey`): the watches of this process
 * (store/changeWatch.ts) read at once instead of at their next poll. Other processes'
 * writes reach them by polling.
 */
export const localFeedWrites = new EventEmitter();
localFeedWrites.setMaxListeners(0);

export const feedKey = (tenant: Tenant) => JSON.stringify([tenant.workspaceId, tenant.dataset]);

/** Tells this process's watch of the dataset, if any, that its feed has changed. */
export function announceFeedWrite(tenant: Tenant): void {
  localFeedWrites.emit(feedKey(tenant));
}

function changeDocumentId(tenant: Tenant, seq: number): string {
  return documentId('change', tenant.workspaceId, tenant.dataset, String(seq));
}

/**
 * Lost races for a number retried. Each lost race means another writer's change landed, so
 * this only bounds a livelock; a write that runs out fails (its retry or the start-up
 * repair appends the change later, with a later number).
 */
const MAX_ATTEMPTS = 100;

/** Which of `changeIds` the dataset's feed holds. */
async function changesThere(
  db: Collections,
  tenant: Tenant,
  changeIds: readonly string[],
): Promise<Set<string>> {
  const there = await db.changes
    .find(
      { workspaceId: tenant.workspaceId, dataset: tenant.dataset, changeId: { $in: changeIds } },
      { projection: { changeId: 1 }, comment: 'store:appendChanges' },
    )
    .toArray();
  return new Set(there.map((c) => c.changeId));
}

/**
 * Appends changes to the dataset's feed, in the order given, each once. Those already
 * there (a retry, a repair) are skipped when read first; the database refuses the rest of
 * the repeats (a racing writer appending the same change: the unique `changeId`). Numbers
 * are claimed from the highest one seen: a duplicate key is either a number another writer
 * took (the rest are tried again above the new highest) or a change another writer
 * appended meanwhile (dropped, the rest go on).
 */
export async function appendChanges(
  db: Collections,
  tenant: Tenant,
  changes: readonly NewChange[],
): Promise<void> {
  if (changes.length === 0) return;
  const scope = { workspaceId: tenant.workspaceId, dataset: tenant.dataset };
  const tag = { comment: 'store:appendChanges' };
  const known = await changesThere(
    db,
    tenant,
    changes.map((c) => c.changeId),
  );
  let pending = changes.filter((c) => !known.has(c.changeId));
  for (let attempt = 0; pending.length > 0; attempt++) {
    if (attempt >= MAX_ATTEMPTS) throw new Error('The change feed is too busy; try again');
    const last = await db.changes.findOne(scope, {
      sort: { seq: -1 },
      projection: { seq: 1 },
      ...tag,
    });
    const base = last?.seq ?? 0;
    const docs: ChangeDoc[] = pending.map((c, i) => ({
      _id: changeDocumentId(tenant, base + i + 1),
      ...scope,
      seq: base + i + 1,
      changeId: c.changeId,
      at: c.at,
      kind: c.kind,
      factId: c.factId ?? null,
      episodeId: c.episodeId ?? null,
      memoryId: c.memoryId ?? null,
      counts: c.counts ?? null,
      redacted: false,
    }));
    try {
      await db.changes.insertMany(docs, { ordered: true, ...tag });
      pending = [];
      announceFeedWrite(tenant);
    } catch (error) {
      if (!isDuplicateKey(error)) throw error;
      announceFeedWrite(tenant);
      // Ordered: the changes before the refused one went in; the refused one is dropped if
      // another writer appended it meanwhile (else its number was taken); the rest go on.
      const [refused = 0] = duplicateKeyIndexes(error);
      const blocked = pending[refused];
      const appended =
        blocked && (await changesThere(db, tenant, [blocked.changeId])).has(blocked.changeId);
      pending = pending.slice(appended ? refused + 1 : refused);
      if (!appended) await sleep(Math.min(attempt, 10));
    }
  }
}

/** A page of the feed: the changes after `afterSeq` (0: from the start), in order. */
export function changesAfter(
  db: Collections,
  tenant: Tenant,
  afterSeq: number,
  first: number,
): Promise<ChangeDoc[]> {
  return db.changes
    .find(
      {
        workspaceId: tenant.workspaceId,
        dataset: tenant.dataset,
        seq: { $gt: afterSeq },
        redacted: false,
      },
      { sort: { seq: 1 }, limit: first, comment: 'store:changesAfter' },
    )
    .toArray();
}

/** The highest number the dataset's feed has used (0: none), redacted changes included. */
export async function lastChangeSeq(db: Collections, tenant: Tenant): Promise<number> {
  const last = await db.changes.findOne(
    { workspaceId: tenant.workspaceId, dataset: tenant.dataset },
    { sort: { seq: -1 }, projection: { seq: 1 }, comment: 'store:lastChangeSeq' },
  );
  return last?.seq ?? 0;
}

/**
 * A change as the feed serves it, with its tenant and the creation instant of the dataset
 * it was read from (its feed's epoch; 0: the dataset did not exist): a cursor holds all
 * three, so a cursor into a feed that an erasure removed is told apart from one into
 * today's, and one of another dataset's feed from both.
 */
export type FeedChange = Pick<
  ChangeDoc,
  | 'workspaceId'
  | 'dataset'
  | 'seq'
  | 'changeId'
  | 'at'
  | 'kind'
  | 'factId'
  | 'episodeId'
  | 'memoryId'
  | 'counts'
> & { epoch: number };

/** Where a reader of the feed is: after change `seq` of the feed of epoch `epoch`. */
export interface FeedPosition {
  epoch: number;
  seq: number;
}

/**
 * What a reader whose position is in an erased feed is told first: that the dataset was
 * erased (the audit trail's record of it, when there is one), at position 0 of `epoch`.
 */
export function erasureNotice(erased: AuditDoc | null, tenant: Tenant, epoch: number): FeedChange {
  return {
    workspaceId: tenant.workspaceId,
    dataset: tenant.dataset,
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

/**
 * Up to `first` changes after `after` (null: from the start) of the feed of the dataset
 * created at `epoch`. A position in an older feed (an erasure removed it) reads that
 * erasure first, then today's feed from its start.
 */
export async function feedAfter(
  db: Collections,
  tenant: Tenant,
  epoch: number,
  after: FeedPosition | null,
  first: number,
): Promise<FeedChange[]> {
  const stale = after !== null && after.epoch !== epoch;
  const notice = stale
    ? [erasureNotice(await datasetErasureAfter(db, tenant, new Date(after.epoch)), tenant, epoch)]
    : [];
  const changes = await changesAfter(db, tenant, stale ? 0 : (after?.seq ?? 0), first);
  return [...notice, ...changes.map((c): FeedChange => ({ ...pickFeedFields(c), epoch }))];
}

function pickFeedFields(c: ChangeDoc): Omit<FeedChange, 'epoch'> {
  const { workspaceId, dataset, seq, changeId, at, kind, factId, episodeId, memoryId, counts } = c;
  return { workspaceId, dataset, seq, changeId, at, kind, factId, episodeId, memoryId, counts };
}

/**
 * Whether the feed of the dataset whose creation instant is `epoch` (0: it does not exist
 * now) can have issued `position`: a number today's feed has used (0: before its first
 * change), or a position in an earlier feed of the dataset that an erasure of the whole
 * dataset ended (its notice is what a reader there is told). A position neither is made
 * up: reading after it would serve nothing, or an erasure that never happened.
 */
export async function feedIssued(
  db: Collections,
  tenant: Tenant,
  epoch: number,
  position: FeedPosition,
): Promise<boolean> {
  if (position.epoch === epoch) {
    return position.seq === 0 || position.seq <= (await lastChangeSeq(db, tenant));
  }
  if (epoch !== 0 && position.epoch > epoch) return false;
  return (await datasetErasureAfter(db, tenant, new Date(position.epoch))) !== null;
}

/** How many changes the dataset's feed serves (redacted ones are not served). */
export function countChanges(db: Collections, tenant: Tenant): Promise<number> {
  return db.changes.countDocuments(
    { workspaceId: tenant.workspaceId, dataset: tenant.dataset, redacted: false },
    { comment: 'store:countChanges' },
  );
}

/**
 * Erased content leaves the feed: the changes about the given facts and episode keep
 * their numbers and lose the rest, their ids included (which name their subjects). A
 * write of the erased content again is claimed anew, so it never needs the old ids.
 * (`eraseDataset` removes the whole feed instead: the dataset's name goes too.)
 */
export async function redactChanges(
  db: Collections,
  tenant: Tenant,
  about: { factIds: string[]; episodeId: string },
): Promise<void> {
  const tag = { comment: 'store:redactChanges' };
  const slots = await db.changes
    .find(
      {
        workspaceId: tenant.workspaceId,
        dataset: tenant.dataset,
        $or: [{ factId: { $in: about.factIds } }, { episodeId: about.episodeId }],
      },
      { projection: { _id: 1, seq: 1 }, ...tag },
    )
    .toArray();
  await redactSlots(db, tenant, slots, 'redacted');
}

/**
 * The prefix of the changes a derived history tells (store/materialise.ts
 * `historyChanges`): the only ones a materialisation redacts when its history no longer
 * tells them (changes written before the history was derived keep theirs).
 */
export const HISTORY_CHANGE = 'history:';

/**
 * Redacts the history changes about `factIds` that are not in `keep`: what an erasure
 * re-derived away (a supersession by an erased fact, a version that no longer exists).
 */
export async function redactFactChangesExcept(
  db: Collections,
  tenant: Tenant,
  factIds: readonly string[],
  keep: ReadonlySet<string>,
): Promise<void> {
  if (factIds.length === 0) return;
  const slots = await db.changes
    .find(
      {
        workspaceId: tenant.workspaceId,
        dataset: tenant.dataset,
        factId: { $in: [...factIds] },
      },
      { projection: { _id: 1, seq: 1, changeId: 1 }, comment: 'store:redactChanges' },
    )
    .toArray();
  await redactSlots(
    db,
    tenant,
    slots.filter((c) => c.changeId.startsWith(HISTORY_CHANGE) && !keep.has(c.changeId)),
    'redacted',
  );
}

/**
 * Redacts changes in place: each keeps its number and loses the rest. Its `changeId`
 * becomes `<reason>:<seq>`, unique like every change's (the feed's unique natural key).
 */
async function redactSlots(
  db: Collections,
  tenant: Tenant,
  slots: readonly Pick<ChangeDoc, '_id' | 'seq'>[],
  reason: 'redacted' | 'repeated',
): Promise<number> {
  if (slots.length === 0) return 0;
  const result = await db.changes.bulkWrite(
    slots.map((slot) => ({
      updateOne: {
        filter: { _id: slot._id, workspaceId: tenant.workspaceId, dataset: tenant.dataset },
        update: {
          $set: {
            redacted: true,
            changeId: `${reason}:${slot.seq}`,
            factId: null,
            episodeId: null,
            memoryId: null,
          },
        },
      },
    })),
    { ordered: false, comment: 'store:redactChanges' },
  );
  return result.modifiedCount;
}

/**
 * A feed an earlier version wrote may hold a change twice (two writers appended it at
 * once, before the database refused repeats): the first copy stays, each later one is
 * redacted in place (its number stays spent, nothing of it is served or counted), so a
 * reader gets every change once and the unique index can be made. Idempotent; returns how
 * many copies it redacted.
 */
export async function redactRepeatedChanges(db: Collections, tenant: Tenant): Promise<number> {
  const seen = new Set<string>();
  const repeats: Pick<ChangeDoc, '_id' | 'seq'>[] = [];
  const feed = db.changes.find(
    { workspaceId: tenant.workspaceId, dataset: tenant.dataset, redacted: false },
    {
      sort: { seq: 1 },
      projection: { _id: 1, seq: 1, changeId: 1 },
      comment: 'store:changesAfter',
    },
  );
  for await (const change of feed) {
    if (seen.has(change.changeId)) repeats.push(change);
    else seen.add(change.changeId);
  }
  let redacted = 0;
  for (let i = 0; i < repeats.length; i += 500) {
    redacted += await redactSlots(db, tenant, repeats.slice(i, i + 500), 'repeated');
  }
  return redacted;
}

/**
 * The latest erasure of the whole dataset after `since` (the creation of the dataset a
 * client's cursor was read from), as the audit trail recorded it: the feed went with the
 * dataset, so this is how a client that held a cursor into it learns what happened.
 */
export function datasetErasureAfter(
  db: Collections,
  tenant: Tenant,
  since: Date,
): Promise<AuditDoc | null> {
  return db.audit.findOne(
    {
      workspaceId: tenant.workspaceId,
      dataset: tenant.dataset,
      action: 'eraseDataset',
      at: { $gt: since },
    },
    { sort: { at: -1 }, comment: 'store:datasetErasureAfter' },
  );
}
