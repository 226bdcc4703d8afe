import { derivedUuid, newId, normalizeUuid } from '../domain/ids.js';
import { entityKey } from '../domain/names.js';
import { rootFactId } from '../domain/pairHistory.js';
import { isOnlyDuplicateKeys } from './bulkErrors.js';
import { announceFeedWrite, appendChanges, redactChanges } from './changes.js';
import type { Collections } from './collections.js';
import { datasetDocumentId } from './datasets.js';
import {
  type AuditDoc,
  type ErasureCounts,
  entityDocumentId,
  episodeDocumentId,
} from './documents.js';
import { distinctPairs, erasureRecord } from './factRecords.js';
import { materialisePairs, removeErasedRecords } from './materialise.js';
import { episodeRecordInput } from './recordEpisode.js';
import type { Tenant } from './tenant.js';
import { forgetTerms } from './vocabulary.js';

/**
 * Erasure for privacy requests: the one place documents are physically removed. Both
 * operations are idempotent (a repeat removes nothing more and reports zeros) and each
 * call is recorded in the audit collection: who (key id), when, what (dataset, episode)
 * and the counts, never the erased content.
 */

async function audit(db: Collections, entry: Omit<AuditDoc, '_id'>): Promise<void> {
  await db.audit.insertOne({ _id: newId(), ...entry }, { comment: 'store:audit' });
}

/** Removes every document of the dataset, in every collection. */
export async function eraseDataset(
  db: Collections,
  tenant: Tenant,
  who: { keyId: string },
  now: Date,
): Promise<ErasureCounts> {
  const filter = { workspaceId: tenant.workspaceId, dataset: tenant.dataset };
  const tag = { comment: 'store:eraseDataset' };
  const [facts, entities, episodes, memories] = await Promise.all([
    db.facts.deleteMany(filter, tag),
    db.entities.deleteMany(filter, tag),
    db.episodes.deleteMany(filter, tag),
    db.memories.deleteMany(filter, tag),
  ]);
  await Promise.all([
    // The feed goes whole: a client that follows the dataset learns of the erasure from
    // its cursor, which names the dataset it read (store/changes.ts datasetErasureAfter).
    db.changes.deleteMany(filter, tag),
    db.factRecords.deleteMany(filter, tag),
    db.episodeRecords.deleteMany(filter, tag),
    db.memoryVersions.deleteMany(filter, tag),
    db.memoryCreations.deleteMany(filter, tag),
    db.vocabulary.deleteMany(filter, tag),
  ]);
  const counts: ErasureCounts = {
    facts: facts.deletedCount,
    entities: entities.deletedCount,
    episodes: episodes.deletedCount,
    memories: memories.deletedCount,
    restoredFacts: 0,
  };
  const datasetKey = {
    _id: datasetDocumentId(tenant.workspaceId, tenant.dataset),
    workspaceId: tenant.workspaceId,
  };
  await db.datasets.deleteOne(datasetKey, tag);
  await audit(db, {
    workspaceId: tenant.workspaceId,
    keyId: who.keyId,
    action: 'eraseDataset',
    dataset: tenant.dataset,
    episodeId: null,
    at: now,
    counts: { ...counts },
  });
  // The watches of this process see the dataset gone at once, its audit record with it
  // (others at their next poll).
  announceFeedWrite(tenant);
  return counts;
}

/**
 * Removes an episode and what only it produced: its facts, and the entities no remaining
 * fact mentions among those its facts or its record named. Facts its facts had superseded
 * are restored to live first, so no fact is ever left superseded by one that is gone.
 */
export async function eraseEpisode(
  db: Collections,
  tenant: Tenant,
  episodeId: string,
  who: { keyId: string },
  now: Date,
): Promise<ErasureCounts> {
  const id = normalizeUuid(episodeId);
  const scope = { workspaceId: tenant.workspaceId, dataset: tenant.dataset };
  const tag = { comment: 'store:eraseEpisode' };
  // What it produced: its facts' documents (their versions too) and its records (what its
  // facts asserted, and what they said was wrong).
  const [produced, found] = await Promise.all([
    db.facts.find({ ...scope, episodeId: id }, tag).toArray(),
    db.factRecords.find({ ...scope, episodeId: id }, tag).toArray(),
  ]);
  const ownRecords = found.filter((r) => r.kind !== 'erased');
  const producedIds = [
    ...new Set([
      ...ownRecords.filter((r) => r.kind === 'asserted').map((r) => r.factId),
      ...produced.map(rootFactId),
    ]),
  ];
  const pairs = distinctPairs([...produced, ...found]);
  // The feed forgets its facts first (a crash after this leaves the content for the repeat
  // to erase, never a change about erased content), and once more at the end.
  const erased = {
    factIds: [...new Set([...producedIds, ...produced.map((f) => f.factId)])],
    episodeId: id,
  };
  await redactChanges(db, tenant, erased);

  // 1. Its records count for nothing from here on: an `erased` record on each of its pairs
  // (inserted, so it exists once and races nothing) leaves out its facts' assertions,
  // their deletes and restores, and what its facts said was wrong. A retry, or the
  // start-up repair (the record is unseen until its pair is materialised), finds the
  // pairs by it until step 2 removes them all.
  const marks = pairs.map((pair) => erasureRecord(tenant, pair, id, now));
  if (marks.length > 0) {
    try {
      await db.factRecords.insertMany(marks, { ordered: false, ...tag });
    } catch (error) {
      // Marked already, by an attempt a fault cut short.
      if (!isOnlyDuplicateKeys(error)) throw error;
    }
  }

  // 2. The pairs as if it had never been recorded: its facts' documents go, what they
  // superseded is believed again, and the feed keeps no change that history no longer
  // tells; then its records go.
  const { before, after } = await materialisePairs(db, tenant, pairs, {
    feed: true,
    redact: true,
  });
  await removeErasedRecords(db, tenant, pairs);

  // Restored: the facts its facts had superseded (or ended), believed again.
  const erasedIds = new Set(producedIds);
  const touched = new Set(
    before
      .filter(
        (d) =>
          !erasedIds.has(rootFactId(d)) &&
          [d.supersededBy, d.correctedBy].some((id) => id !== null && erasedIds.has(id!)),
      )
      .map(rootFactId),
  );
  const restoredFacts = new Set(
    after.filter((d) => d.invalidAt === null && touched.has(rootFactId(d))).map(rootFactId),
  ).size;
  const record = await db.episodeRecords.findOne(
    { _id: episodeDocumentId(tenant, id), ...scope },
    tag,
  );
  // The terms only its facts held.
  await forgetTerms(
    db,
    tenant,
    produced.flatMap((f) => [...f.recallTerms, ...(f.quoteTerms ?? [])]),
  );

  // 3. Entities only it mentioned.
  const named = new Set(produced.flatMap((f) => [f.subjectKey, f.objectKey]));
  if (record) {
    for (const e of episodeRecordInput(record).entities) named.add(entityKey(e.name));
  }
  let entities = 0;
  const candidates = [...named];
  if (candidates.length > 0) {
    const stillMentioned = await db.facts
      .find(
        {
          ...scope,
          $or: [{ subjectKey: { $in: candidates } }, { objectKey: { $in: candidates } }],
        },
        { projection: { subjectKey: 1, objectKey: 1 }, ...tag },
      )
      .toArray();
    const keep = new Set(stillMentioned.flatMap((f) => [f.subjectKey, f.objectKey]));
    const orphans = candidates.filter((n) => !keep.has(n));
    if (orphans.length > 0) {
      entities = (
        await db.entities.deleteMany(
          { ...scope, _id: { $in: orphans.map((n) => entityDocumentId(tenant, n)) } },
          tag,
        )
      ).deletedCount;
    }
  }

  // 4. The episode, then the feed, then its record.
  const episodes = await db.episodes.deleteOne(
    { _id: episodeDocumentId(tenant, id), ...scope },
    tag,
  );
  const counts: ErasureCounts = {
    facts: produced.length,
    entities,
    episodes: episodes.deletedCount,
    memories: 0,
    restoredFacts,
  };
  // The feed forgets the episode and its facts and says that they went, before the record
  // goes: its claim keys the change, so a repeat after a crash appends it once.
  await redactChanges(db, tenant, erased);
  if (record || Object.values(counts).some((n) => n > 0)) {
    // Keyed by the record's claim (a repeat after a crash appends it once), hashed: the
    // change names nothing of what went.
    const claimedAt = (record?.recordedAt ?? now).toISOString();
    await appendChanges(db, tenant, [
      {
        changeId: `episode-erased:${derivedUuid('episode-erased', id, claimedAt)}`,
        kind: 'EPISODE_ERASED',
        at: now,
        counts: { ...counts },
      },
    ]);
  }
  await db.episodeRecords.deleteOne({ _id: episodeDocumentId(tenant, id), ...scope }, tag);
  await audit(db, {
    workspaceId: tenant.workspaceId,
    keyId: who.keyId,
    action: 'eraseEpisode',
    dataset: tenant.dataset,
    episodeId: id,
    at: now,
    counts: { ...counts },
  });
  return counts;
}
