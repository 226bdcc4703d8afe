import { derivedUuid, newId, normalizeUuid } from '../domain/ids.js';
import { entityKey } from '../domain/names.js';
import { announceFeedWrite, appendChanges, redactChanges } from './changes.js';
import type { Collections } from './collections.js';
import { datasetDocumentId } from './datasets.js';
import { type AuditDoc, entityDocumentId, episodeDocumentId, type FactDoc } from './documents.js';
import { FactNotFoundError, restoreFact } from './facts.js';
import { episodeRecordInput } from './recordEpisode.js';
import { settlePairs } from './supersession.js';
import type { Tenant } from './tenant.js';
import { forgetTerms } from './vocabulary.js';

/**
 * Erasure for privacy requests: the one place documents are physically removed. Both
 * operations are idempotent (a repeat removes nothing more and reports zeros) and each
 * call is recorded in the audit collection: who (key id), when, what (dataset, episode)
 * and the counts, never the erased content.
 */

export interface ErasureCounts {
  facts: number;
  entities: number;
  episodes: number;
  memories: number;
  /** Facts the erased episode had superseded, live again. */
  restoredFacts: number;
}

async function audit(db: Collections, entry: Omit<AuditDoc, '_id'>): Promise<void> {
  await db.audit.insertOne({ _id: newId(), ...entry }, { comment: 'store:audit' });
}

/**
 * The corrected versions an episode's erasure removes: those its facts (`producedIds`)
 * ended, and, of each fact it restores (`superseded`), the versions of the same fact
 * recorded since that fact was superseded (a fact has one believed version at a time, so
 * these are the history that followed from its supersession).
 */
async function versionsToErase(
  db: Collections,
  tenant: Tenant,
  producedIds: readonly string[],
  superseded: readonly FactDoc[],
): Promise<string[]> {
  if (producedIds.length === 0) return [];
  const scope = { workspaceId: tenant.workspaceId, dataset: tenant.dataset };
  const tag = { comment: 'store:eraseEpisode' };
  const since = new Map(
    superseded.map((f) => [f.correctionOf ?? f.factId, { fact: f.factId, at: f.invalidAt! }]),
  );
  const [endedByIt, followed] = await Promise.all([
    db.facts.find({ ...scope, correctedBy: { $in: [...producedIds] } }, tag).toArray(),
    since.size > 0
      ? db.facts.find({ ...scope, correctionOf: { $in: [...since.keys()] } }, tag).toArray()
      : [],
  ]);
  const ids = new Set(endedByIt.map((v) => v.factId));
  for (const v of followed) {
    const restored = since.get(v.correctionOf!)!;
    if (v.factId !== restored.fact && v.recordedAt.getTime() >= restored.at.getTime()) {
      ids.add(v.factId);
    }
  }
  return [...ids];
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
    db.claims.deleteMany(filter, tag),
    db.episodeRecords.deleteMany(filter, tag),
    db.memoryVersions.deleteMany(filter, tag),
    db.memoryCreations.deleteMany(filter, tag),
    db.restorations.deleteMany(filter, tag),
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
  const produced = await db.facts.find({ ...scope, episodeId: id }, tag).toArray();
  const producedIds = produced.map((f) => f.factId);
  const superseded =
    producedIds.length > 0
      ? await db.facts
          .find({ ...scope, supersededBy: { $in: producedIds }, invalidReason: 'superseded' }, tag)
          .toArray()
      : [];
  // The corrected versions its facts ended (their valid time is its facts'), and those
  // recorded since of the facts about to be restored (the history that followed from a
  // supersession being undone): restored, a fact is true again until what ends it now.
  const versions = await versionsToErase(db, tenant, producedIds, superseded);
  // The feed forgets them first (a crash after this leaves the content for the repeat to
  // erase, never a change about erased content), and once more at the end.
  const erased = { factIds: [...producedIds, ...versions], episodeId: id };
  await redactChanges(db, tenant, erased);
  if (versions.length > 0) {
    await db.facts.deleteMany({ ...scope, factId: { $in: versions } }, tag);
    await db.claims.deleteMany({ ...scope, factId: { $in: versions } }, tag);
  }

  // 1. Undo what its facts superseded.
  let restoredFacts = 0;
  const restoredIds: string[] = [];
  if (producedIds.length > 0) {
    for (const fact of superseded) {
      try {
        await restoreFact(db, tenant, fact.factId, 'superseded', now);
        restoredFacts++;
        restoredIds.push(fact.factId);
      } catch (error) {
        // Restored meanwhile by a racing erasure: nothing left to do for this fact.
        if (!(error instanceof FactNotFoundError)) throw error;
      }
    }
  }

  // 2. Its facts and their claims: their invalidation and restoration claims (left
  // behind, a re-recorded episode's facts, which get the same ids, could not be
  // restored), and the spent claims of the supersessions just undone, which name them.
  const record = await db.episodeRecords.findOne(
    { _id: episodeDocumentId(tenant, id), ...scope },
    tag,
  );
  const facts = await db.facts.deleteMany({ ...scope, episodeId: id }, tag);
  // The terms only its facts held (their corrected versions hold the same).
  await forgetTerms(
    db,
    tenant,
    produced.flatMap((f) => [...f.recallTerms, ...(f.quoteTerms ?? [])]),
  );
  if (producedIds.length > 0) {
    await db.claims.deleteMany({ ...scope, factId: { $in: producedIds } }, tag);
    await db.restorations.deleteMany({ ...scope, factId: { $in: producedIds } }, tag);
  }
  if (restoredIds.length > 0) {
    await db.claims.deleteMany(
      { ...scope, factId: { $in: restoredIds }, supersededBy: { $in: producedIds } },
      tag,
    );
  }

  // 2b. The rule over the restored facts' subjects and predicates: each ends again where
  // what remains of its history says (docs/TEMPORAL_MODEL.md).
  await settlePairs(db, tenant, superseded, now);

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
    facts: facts.deletedCount,
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
