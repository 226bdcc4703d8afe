import { createHash } from 'node:crypto';
import type { AnyBulkWriteOperation } from 'mongodb';
import { derivedUuid, normalizeUuid } from '../domain/ids.js';
import { type EntityType, entityKey } from '../domain/names.js';
import { rootFactId } from '../domain/pairHistory.js';
import { factRecallTerms, quoteRecallTerms } from '../domain/recallTerms.js';
import { bulkWriteFailure, duplicateKeyIndexes, isOnlyDuplicateKeys } from './bulkErrors.js';
import { claimOnce, insertOnce } from './claims.js';
import type { Collections } from './collections.js';
import { UNPAGED_BATCH_SIZE, UPSERTS_PER_COMMAND } from './database.js';
import { ensureDatasets } from './datasets.js';
import {
  type EntityDoc,
  type EpisodeDoc,
  type EpisodeRecordDoc,
  entityDocument,
  entityDocumentId,
  episodeDocument,
  episodeDocumentId,
  type FactDoc,
  type FactRecordDoc,
  type FactStatement,
  STATEMENT_FIELDS,
} from './documents.js';
import type { StatementVectors } from './embeddings.js';
import { assertedRecord, distinctPairs, saidWrongRecord } from './factRecords.js';
import { factsByIds } from './facts.js';
import { materialisePairs } from './materialise.js';
import { FACT_ORDER } from './orders.js';
import { StoreRefusal } from './refusals.js';
import type { Tenant } from './tenant.js';
import { addToVocabulary } from './vocabulary.js';

/**
 * Recording an episode: the write path of the extraction pipeline.
 *
 * Safe without transactions and idempotent by `episodeId`, following the rules of
 * docs/TEMPORAL_MODEL.md, "Writes without transactions". The steps, in this order:
 *
 *   0. (before any write) check that every fact listed in `supersedes` exists in this
 *      dataset; the input itself was validated at the edge.
 *   1. CLAIM: insert the episode record (`_id` = the episode's document id) holding the
 *      canonical input. Only one insert can win; a duplicate with the same input is a
 *      retry (or a concurrent duplicate): done already if the record is complete, else
 *      this call completes it; with other input it is a CONFLICT.
 *   2. record that the dataset exists (so `dataset(name)` and the dataset list see it),
 *      then insert the episode document;
 *   3. upsert the listed entities (lower-cased names), moving `updatedAt` forward, and move
 *      `updatedAt` of existing entities the facts mention;
 *   4. insert the records of the facts as asserted (ids derived from (episode,
 *      position)) and of the facts they say were wrong (store/factRecords.ts);
 *   5. materialise the pairs those records belong to: their fact documents made what
 *      domain/pairHistory.ts derives from all their records, seen through against racing
 *      writers, then the feed (store/materialise.ts); a few commands for any number of
 *      facts;
 *   6. mark the record complete.
 *
 * Transaction time is the attempt's: a record carries the instant of the call that stored
 * it (`now`), also when a retry (or the start-up repair) completes an attempt that a
 * failure cut short; what the earlier attempt already stored keeps its own, and the
 * history derived from it begins there. Every step after the claim ignores "already there", so
 * re-running the whole call (a retry after a timeout, the loser of a race, or
 * `repairEpisodeRecords` at start-up) completes the work and changes nothing twice. A
 * crash between steps leaves nothing a reader sees as broken: facts exist before anything
 * names them in `supersededBy`, and the episode exists before its facts.
 */

const statementOf = (f: FactStatement): FactStatement =>
  Object.fromEntries(STATEMENT_FIELDS.map((k) => [k, f[k]])) as FactStatement;

export interface FactInput extends FactStatement {
  validAt: Date;
  validUntil: Date | null;
  supersedes: string[];
  replaceExisting: boolean;
}

export interface EpisodeInput {
  episodeId: string;
  occurredAt: Date;
  source: string;
  content: string;
  entities: { name: string; type: EntityType }[];
  facts: FactInput[];
}

/**
 * What a call did: `recorded` the episode (it claimed it and completed it), `completed`
 * one an earlier call had claimed and not finished (a retry after a failure, a concurrent
 * duplicate, the start-up repair), or found it `alreadyRecorded` by an earlier call that
 * completed it (nothing changed).
 */
export type RecordOutcome = 'recorded' | 'completed' | 'alreadyRecorded';

export interface RecordedEpisode {
  episode: EpisodeDoc;
  facts: FactDoc[];
  /** Facts superseded by this episode's facts. */
  superseded: FactDoc[];
  outcome: RecordOutcome;
}

class EpisodeConflictError extends StoreRefusal {
  override name = 'EpisodeConflictError';
  readonly code = 'CONFLICT';
}

/** Facts listed in `supersedes` that the dataset does not hold, each named by its path. */
class UnknownFactsError extends StoreRefusal {
  override name = 'UnknownFactsError';
  readonly code = 'BAD_USER_INPUT';
  override readonly details: Record<string, unknown>;
  constructor(readonly unknown: { fact: number; position: number; factId: string }[]) {
    super(
      unknown
        .map(
          (u) =>
            `input.facts.${u.fact}.supersedes.${u.position}: no fact ${u.factId} in this dataset`,
        )
        .join('; '),
    );
    this.details = {
      issues: unknown.map((u) => ({
        path: ['input', 'facts', u.fact, 'supersedes', u.position],
        message: `no fact ${u.factId} in this dataset`,
      })),
    };
  }
}

/**
 * The canonical JSON of an input: dates as ISO strings, ids lower-cased. Its hash decides
 * whether a retry is the same episode, so it must not change for inputs recorded before a
 * release: a new fact field must stay out of it while it holds its default
 * (test/store/episodeInputHash.test.ts pins the hashes).
 */
export function canonicalInput(input: EpisodeInput): string {
  return JSON.stringify({
    episodeId: normalizeUuid(input.episodeId),
    occurredAt: input.occurredAt.toISOString(),
    source: input.source,
    content: input.content,
    entities: input.entities.map((e) => ({ name: e.name, type: e.type })),
    facts: input.facts.map((f) => ({
      ...statementOf(f),
      validAt: f.validAt.toISOString(),
      validUntil: f.validUntil?.toISOString() ?? null,
      supersedes: f.supersedes.map(normalizeUuid),
      replaceExisting: f.replaceExisting,
    })),
  });
}

/** SHA-256 of an input's canonical JSON: the same episode id with another hash is a CONFLICT. */
export const inputHashOf = (canonical: string): string =>
  createHash('sha256').update(canonical).digest('hex');

/** The input an episode record holds (its canonical JSON, read back). */
export function episodeRecordInput(record: EpisodeRecordDoc): EpisodeInput {
  const raw = JSON.parse(record.input) as Omit<EpisodeInput, 'occurredAt' | 'facts'> & {
    occurredAt: string;
    facts: (Omit<FactInput, 'validAt' | 'validUntil'> & {
      validAt: string;
      validUntil: string | null;
    })[];
  };
  return {
    ...raw,
    occurredAt: new Date(raw.occurredAt),
    facts: raw.facts.map((f) => ({
      ...f,
      validAt: new Date(f.validAt),
      validUntil: f.validUntil ? new Date(f.validUntil) : null,
    })),
  };
}

/** The id of the n-th fact of an episode: the same on every retry. */
export function episodeFactId(tenant: Tenant, episodeId: string, position: number): string {
  return derivedUuid(
    'episode-fact',
    tenant.workspaceId,
    tenant.dataset,
    normalizeUuid(episodeId),
    String(position),
  );
}

/**
 * The id of an episode sent without one: derived from what it is (its dataset, source,
 * occurredAt and content), so the same episode sent twice is one episode and a retry after
 * an unknown outcome is safe. Two different extractions of the same text at the same
 * instant are then one episode too: the second is a CONFLICT unless it gives an id of its
 * own.
 */
export function contentEpisodeId(
  tenant: Tenant,
  episode: Pick<EpisodeInput, 'source' | 'occurredAt' | 'content'>,
): string {
  return derivedUuid(
    'episode-content',
    tenant.workspaceId,
    tenant.dataset,
    episode.source,
    episode.occurredAt.toISOString(),
    episode.content,
  );
}

export async function recordEpisode(
  db: Collections,
  tenant: Tenant,
  input: EpisodeInput,
  now: Date,
  /** The vectors of its facts' statements, when the caller has them (store/embeddings.ts). */
  { vectors }: { vectors?: StatementVectors } = {},
): Promise<RecordedEpisode> {
  const episodeId = normalizeUuid(input.episodeId);
  const canonical = canonicalInput(input);

  // 0. Every listed fact must exist in this dataset (own facts of a retry included).
  const listed = input.facts.flatMap((f, fact) =>
    f.supersedes.map((id, position) => ({ fact, position, factId: normalizeUuid(id) })),
  );
  if (listed.length > 0) {
    const found = await factsByIds(
      db,
      tenant,
      listed.map((l) => l.factId),
    );
    const unknown = listed.filter((l) => !found.has(l.factId));
    if (unknown.length > 0) throw new UnknownFactsError(unknown);
  }

  // 1. Claim.
  const record: EpisodeRecordDoc = {
    _id: episodeDocumentId(tenant, episodeId),
    workspaceId: tenant.workspaceId,
    dataset: tenant.dataset,
    episodeId,
    recordedAt: now,
    inputHash: inputHashOf(canonical),
    input: canonical,
    completedAt: null,
  };
  let outcome: RecordOutcome = 'recorded';
  let claimed = record;
  const claim = await claimOnce(db.episodeRecords, record, 'store:recordEpisode');
  if (!claim.won) {
    const existing = claim.winner;
    if (!existing) {
      throw new EpisodeConflictError(
        `Episode ${episodeId} was erased while it was recorded; record it again`,
      );
    }
    if (existing.inputHash !== record.inputHash) {
      throw new EpisodeConflictError(
        `Episode ${episodeId} was already recorded with different content; record a new episode instead`,
      );
    }
    claimed = existing;
    outcome = existing.completedAt === null ? 'completed' : 'alreadyRecorded';
  }

  if (claimed.completedAt === null) await completeEpisodeRecord(db, claimed, now, vectors);
  return { ...(await readRecordedEpisode(db, tenant, claimed)), outcome };
}

/**
 * Steps 2-6 for a claimed record, at the attempt's instant `now`; every write is
 * idempotent. A failed step stops it (the record stays incomplete for a retry or the
 * start-up repair), throwing the database's own error: a lost connection that the driver
 * wrapped in a bulk write error is unwrapped, so the gateway sees the lost database
 * (store/writeOutcome.ts: once a write went out, the outcome is unknown).
 */
async function completeEpisodeRecord(
  db: Collections,
  record: EpisodeRecordDoc,
  now: Date,
  vectors?: StatementVectors,
): Promise<void> {
  try {
    await completeEpisodeSteps(db, record, now, vectors);
  } catch (error) {
    throw bulkWriteFailure(error);
  }
}

async function completeEpisodeSteps(
  db: Collections,
  record: EpisodeRecordDoc,
  now: Date,
  vectors?: StatementVectors,
): Promise<void> {
  const tenant: Tenant = { workspaceId: record.workspaceId, dataset: record.dataset };
  const input = episodeRecordInput(record);
  const { episodeId } = record;
  // The attempt's instant: what this attempt stores became visible now.
  const recordedAt = now;
  const tag = { comment: 'store:completeEpisodeRecord' };

  // 2. The dataset (a first write to it creates it; two first writes can race) and the episode.
  await retryOnDuplicate(() =>
    ensureDatasets(db, tenant.workspaceId, [tenant.dataset], recordedAt),
  );
  await insertOnce(
    db.episodes,
    episodeDocument(tenant, {
      episodeId,
      occurredAt: input.occurredAt,
      source: input.source,
      content: input.content,
      recordedAt,
    }),
    tag.comment,
  );

  // 3. Entities: listed ones upserted, mentioned existing ones touched. An upsert's filter
  // holds the shard key (a sharded cluster requires it); an insert takes it from there.
  const listedNames = new Map(input.entities.map((e) => [entityKey(e.name), e.type]));
  const entityOps: AnyBulkWriteOperation<EntityDoc>[] = [...listedNames].map(([name, type]) => {
    const { _id, workspaceId, dataset, entityId, updatedAt } = entityDocument(tenant, {
      name,
      type,
      updatedAt: recordedAt,
    });
    return {
      updateOne: {
        filter: { _id, workspaceId, dataset },
        update: { $setOnInsert: { entityId, name }, $set: { type }, $max: { updatedAt } },
        upsert: true,
      },
    };
  });
  const mentioned = [
    ...new Set(
      input.facts.flatMap((f) =>
        (f.objectIsEntity ? [f.subject, f.object] : [f.subject]).map(entityKey),
      ),
    ),
  ].filter((name) => !listedNames.has(name));
  if (mentioned.length > 0) {
    entityOps.push({
      updateMany: {
        filter: {
          _id: { $in: mentioned.map((n) => entityDocumentId(tenant, n)) },
          workspaceId: tenant.workspaceId,
          dataset: tenant.dataset,
        },
        update: { $max: { updatedAt: recordedAt } },
      },
    });
  }
  // A few upserts to a command (see UPSERTS_PER_COMMAND), in order; each is idempotent.
  for (let i = 0; i < entityOps.length; i += UPSERTS_PER_COMMAND) {
    const ops = entityOps.slice(i, i + UPSERTS_PER_COMMAND);
    // Two first upserts of one entity can race to insert it; the loser's retry updates.
    await retryOnDuplicate(() => db.entities.bulkWrite(ops, { ordered: true, ...tag }));
  }

  // 4. The records of the facts as asserted, and of the facts they say were wrong (each
  // listed fact, as first recorded, to the first fact of the episode that names it). A
  // record an earlier attempt stored keeps the instant it was stored with.
  const factIds = input.facts.map((_, i) => episodeFactId(tenant, episodeId, i));
  const own = new Set(factIds);
  const asserted = input.facts.map((f, i) =>
    assertedRecord(tenant, {
      ...statementOf(f),
      factId: factIds[i]!,
      episodeId,
      validAt: f.validAt,
      validUntil: f.validUntil,
      replaceExisting: f.replaceExisting,
      at: recordedAt,
    }),
  );
  const listed = await factsByIds(db, tenant, [
    ...new Set(input.facts.flatMap((f) => f.supersedes.map(normalizeUuid))),
  ]);
  const saidWrong = new Map<string, FactRecordDoc>();
  input.facts.forEach((f, i) => {
    for (const id of f.supersedes) {
      const target = listed.get(normalizeUuid(id));
      // Erased since the input was checked: nothing left to say wrong.
      if (!target) continue;
      const root = rootFactId(target);
      if (own.has(root) || saidWrong.has(root)) continue;
      saidWrong.set(
        root,
        saidWrongRecord(tenant, target, {
          factId: root,
          by: factIds[i]!,
          episodeId,
          at: recordedAt,
        }),
      );
    }
  });
  const records = [...asserted, ...saidWrong.values()];
  const recordedAtOf = new Map(asserted.map((r) => [r.factId, r.at]));
  if (records.length > 0) {
    try {
      await db.factRecords.insertMany(records, { ordered: false, ...tag });
    } catch (error) {
      // Only records already stored (by an earlier attempt, or a concurrent duplicate) may
      // fail; see isOnlyDuplicateKeys. Those keep the instant that attempt gave them.
      const already = duplicateKeyIndexes(error).map((i) => records[i]!._id);
      const stored = await db.factRecords
        .find(
          { _id: { $in: already }, workspaceId: tenant.workspaceId, dataset: tenant.dataset },
          { projection: { factId: 1, kind: 1, at: 1 }, ...tag },
        )
        .toArray();
      for (const r of stored) if (r.kind === 'asserted') recordedAtOf.set(r.factId, r.at);
    }
    // Their terms, for a question's typos (store/vocabulary.ts).
    await addToVocabulary(
      db,
      input.facts.map((f) => ({
        workspaceId: tenant.workspaceId,
        dataset: tenant.dataset,
        recallTerms: factRecallTerms(f),
        quoteTerms: quoteRecallTerms(f),
      })),
    );
  }

  // 5. The pairs' histories derived from their records (store/materialise.ts), then the
  // feed: the episode and its facts, each fact at the instant it was recorded, keyed by
  // the record's claim (a retry or the repair appends nothing twice), before what the
  // history tells.
  const claimedAt = record.recordedAt.toISOString();
  await materialisePairs(db, tenant, distinctPairs(records), {
    feed: true,
    redact: true,
    ...(vectors ? { vectors } : {}),
    preface: [
      {
        changeId: `episode-recorded:${episodeId}@${claimedAt}`,
        kind: 'EPISODE_RECORDED',
        at: recordedAt,
        episodeId,
      },
      ...factIds.map((factId) => ({
        changeId: `fact-recorded:${factId}@${claimedAt}`,
        kind: 'FACT_RECORDED' as const,
        at: recordedAtOf.get(factId)!,
        factId,
        episodeId,
      })),
    ],
  });

  // 6. Done.
  await db.episodeRecords.updateOne(
    { _id: record._id, workspaceId: tenant.workspaceId, dataset: tenant.dataset },
    { $set: { completedAt: now } },
    tag,
  );
}

async function readRecordedEpisode(
  db: Collections,
  tenant: Tenant,
  record: EpisodeRecordDoc,
): Promise<Omit<RecordedEpisode, 'outcome'>> {
  const input = episodeRecordInput(record);
  const ids = input.facts.map((_, i) => episodeFactId(tenant, record.episodeId, i));
  const tag = { comment: 'store:readRecordedEpisode' };
  const [episode, found, superseded] = await Promise.all([
    db.episodes.findOne(
      { _id: record._id, workspaceId: tenant.workspaceId, dataset: tenant.dataset },
      tag,
    ),
    factsByIds(db, tenant, ids),
    ids.length > 0
      ? db.facts
          .find(
            {
              workspaceId: tenant.workspaceId,
              dataset: tenant.dataset,
              supersededBy: { $in: ids },
            },
            tag,
          )
          .sort(FACT_ORDER)
          .batchSize(UNPAGED_BATCH_SIZE)
          .toArray()
      : Promise.resolve([]),
  ]);
  if (!episode) throw new Error(`episode ${record.episodeId} is claimed but not stored`);
  return { episode, facts: ids.map((id) => found.get(id)!).filter(Boolean), superseded };
}

/** A bulk write run again when it failed only on duplicate keys (see isOnlyDuplicateKeys). */
async function retryOnDuplicate<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (!isOnlyDuplicateKeys(error)) throw error;
    return write();
  }
}

/** Completes episode records a crash left unfinished (run at start-up). */
export async function repairEpisodeRecords(db: Collections, now: Date): Promise<number> {
  const pending = await db.episodeRecords
    .find({ completedAt: null }, { comment: 'store:repairEpisodeRecords' })
    .toArray();
  for (const record of pending) await completeEpisodeRecord(db, record, now);
  return pending.length;
}
