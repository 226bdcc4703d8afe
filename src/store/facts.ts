import type { Filter } from 'mongodb';
import type { FactState, TemporalSelection } from '../domain/factState.js';
import { normalizeUuid } from '../domain/ids.js';
import { entityKey, predicateKey } from '../domain/names.js';
import { documentsByIds } from './byIds.js';
import { appendChanges } from './changes.js';
import { claimOnce } from './claims.js';
import type { Collections } from './collections.js';
import { UNPAGED_BATCH_SIZE } from './database.js';
import {
  type FactDoc,
  type FactView,
  factDocumentId,
  type InvalidReason,
  invalidationClaim,
  type RestorationDoc,
} from './documents.js';
import {
  allOf,
  type FactCursor,
  queryFilter,
  selectionFilter,
  statesFilter,
  type TransactionWindows,
  windowsFilter,
} from './factFilters.js';
import { applyInvalidationClaims, inGeneration } from './invalidations.js';
import { FACT_ORDER } from './orders.js';
import { afterCursor, keysetPage } from './pages.js';
import { StoreRefusal } from './refusals.js';
import type { Tenant } from './tenant.js';

/** What a fact list asks for; every part is optional except the temporal selection. */
export interface FactQuery {
  selection: TemporalSelection;
  q?: string | null;
  episodeId?: string | null;
  /** Facts with this subject and predicate (case-insensitive): a fact's history. */
  subjectPredicate?: { subject: string; predicate: string } | null;
  /** Keep only facts in one of these states at `statesAt` (required with `states`). */
  states?: readonly FactState[] | null;
  statesAt?: Date;
  /** When the store learned or stopped believing the facts (ANDed with the rest). */
  windows?: TransactionWindows | null;
}

function factFilter(tenant: Tenant, query: FactQuery): Filter<FactDoc> {
  const clauses: Filter<FactDoc>[] = [{ workspaceId: tenant.workspaceId, dataset: tenant.dataset }];
  if (query.episodeId) clauses.push({ episodeId: normalizeUuid(query.episodeId) });
  if (query.subjectPredicate) {
    clauses.push({
      subjectKey: entityKey(query.subjectPredicate.subject),
      predicateKey: predicateKey(query.subjectPredicate.predicate),
    });
  }
  if (query.q) clauses.push(...queryFilter(query.q));
  clauses.push(...selectionFilter(query.selection));
  if (query.windows) clauses.push(...windowsFilter(query.windows));
  if (query.states && query.states.length > 0) {
    // The caller's instant (the request's clock), never one read here.
    if (!query.statesAt) throw new Error('FactQuery.states needs statesAt');
    clauses.push(statesFilter(query.states, query.statesAt));
  }
  return allOf(clauses);
}

/** Leaves out what FactView leaves out. */
export const FACT_VIEW = {
  _id: 0,
  predicateKey: 0,
  recallTerms: 0,
  quoteTerms: 0,
  restorations: 0,
} as const;

export interface FactPage {
  facts: FactView[];
  hasNextPage: boolean;
}

/**
 * One page of facts, `validAt` descending with `factId` descending as the tie-break, so
 * keyset pages are stable: walking every page returns each fact exactly once.
 */
export async function listFacts(
  db: Collections,
  tenant: Tenant,
  query: FactQuery,
  page: { first: number; after?: FactCursor | null },
): Promise<FactPage> {
  const base = factFilter(tenant, query);
  const filter = page.after
    ? allOf<FactDoc>([base, afterCursor('validAt', 'factId', page.after)])
    : base;
  const { nodes, hasNextPage } = await keysetPage(
    db.facts
      .find<FactView>(filter, { comment: 'store:listFacts', projection: FACT_VIEW })
      .sort(FACT_ORDER),
    page.first,
  );
  return { facts: nodes, hasNextPage };
}

/** Every match of the filter, ignoring pagination. */
export function countFacts(db: Collections, tenant: Tenant, query: FactQuery): Promise<number> {
  return db.facts.countDocuments(factFilter(tenant, query), { comment: 'store:countFacts' });
}

/** Facts by public id, in one query; missing or other-tenant ids are simply absent. */
export function factsByIds(
  db: Collections,
  tenant: Tenant,
  factIds: readonly string[],
): Promise<Map<string, FactDoc>> {
  const ids = factIds.map((id) => factDocumentId(tenant, id));
  return documentsByIds(db.facts, tenant, ids, (d) => d.factId, 'store:factsByIds');
}

export async function findFact(
  db: Collections,
  tenant: Tenant,
  factId: string,
): Promise<FactDoc | null> {
  return (await factsByIds(db, tenant, [factId])).get(normalizeUuid(factId)) ?? null;
}

/**
 * The first `first` facts (standard order) of each of several parents, for a DataLoader.
 * One query reads at most `first` per parent; when it comes back full, a parent with
 * fewer than `first` may have more past the others' share and is read again alone, so
 * every answer is exact and no read is unbounded.
 */
async function firstFactsOfEach(
  keys: string[],
  first: number,
  find: (keys: string[], limit: number) => Promise<FactView[]>,
  parentsOf: (fact: FactView) => string[],
): Promise<Map<string, FactView[]>> {
  const byKey = new Map<string, FactView[]>(keys.map((k) => [k, []]));
  if (keys.length === 0) return byKey;
  const limit = keys.length * first;
  const docs = await find(keys, limit);
  for (const doc of docs) {
    for (const parent of parentsOf(doc)) {
      const list = byKey.get(parent);
      if (list && list.length < first) list.push(doc);
    }
  }
  if (docs.length < limit) return byKey;
  const short = keys.filter((k) => byKey.get(k)!.length < first);
  await Promise.all(short.map(async (k) => byKey.set(k, await find([k], first))));
  return byKey;
}

/**
 * Facts of several entities at once (for DataLoader): the first `first` facts touching
 * each name (as subject or object), in the standard order.
 */
export async function factsOfEntities(
  db: Collections,
  tenant: Tenant,
  names: readonly string[],
  selection: TemporalSelection,
  first: number,
): Promise<Map<string, FactView[]>> {
  return firstFactsOfEach(
    [...new Set(names.map(entityKey))],
    first,
    (keys, limit) =>
      db.facts
        .find<FactView>(
          allOf<FactDoc>([
            { workspaceId: tenant.workspaceId, dataset: tenant.dataset },
            { $or: [{ subjectKey: { $in: keys } }, { objectKey: { $in: keys } }] },
            ...selectionFilter(selection),
          ]),
          { comment: 'store:factsOfEntities', projection: FACT_VIEW },
        )
        .sort(FACT_ORDER)
        .limit(limit)
        .batchSize(Math.min(limit, UNPAGED_BATCH_SIZE))
        .toArray(),
    (fact) =>
      fact.objectKey === fact.subjectKey ? [fact.subjectKey] : [fact.subjectKey, fact.objectKey],
  );
}

/**
 * The store's expected refusal of a fact write, thrown like the other writes' refusals
 * (schema/storeErrors.ts turns it into NOT_FOUND): the fact is absent from the tenant, or
 * not in the state the write needs. `message` is what the client is told.
 */
export class FactNotFoundError extends StoreRefusal {
  override name = 'FactNotFoundError';
  readonly code = 'NOT_FOUND';
  constructor(
    readonly reason: 'not_found' | 'already_invalidated' | 'not_invalidated' | 'wrong_reason',
    message: string,
  ) {
    super(message);
  }
}

const factNotFound = (reason: FactNotFoundError['reason']) =>
  new FactNotFoundError(reason, 'Fact not found');

/**
 * Invalidates a fact at most once (soft delete or supersede), following the
 * claim-by-insert rule of docs/TEMPORAL_MODEL.md, in this order:
 *   1. read the fact in this tenant; absent, or `invalidAt` already set: FactNotFoundError;
 *   2. insert the claim `invalidate:<fact _id>[:<generation>]` carrying the values to
 *      stamp; a duplicate key means another caller won: finish its follow-up (step 3 with
 *      *its* values) and refuse as "already invalidated";
 *   3. stamp the fact with the claim's values, then mark the claim applied.
 * Step 3 sets values fixed by the claim (and only within the claim's generation), so
 * repeating it (a retry, a racing loser, or `repairInvalidationClaims` after a crash)
 * gives the same document. Answers the invalidated fact.
 */
export async function invalidateFact(
  db: Collections,
  tenant: Tenant,
  factId: string,
  change: {
    reason: InvalidReason;
    at: Date;
    supersededBy?: string | null;
    correctedUntil?: Date | null;
  },
): Promise<FactDoc> {
  const fact = await findFact(db, tenant, factId);
  if (!fact) throw factNotFound('not_found');
  if (fact.invalidAt !== null) throw factNotFound('already_invalidated');

  const claim = invalidationClaim(
    tenant,
    fact,
    {
      reason: change.reason,
      at: change.at,
      supersededBy: change.supersededBy ?? null,
      correctedUntil: change.correctedUntil ?? null,
    },
    false,
  );
  const claimed = await claimOnce(db.claims, claim, 'store:invalidateFact');
  if (!claimed.won) {
    const { winner } = claimed;
    if (winner && !winner.applied) await applyInvalidationClaims(db, tenant, [winner]);
    throw factNotFound('already_invalidated');
  }
  await applyInvalidationClaims(db, tenant, [claim]);
  return {
    ...fact,
    invalidAt: claim.invalidAt,
    invalidReason: claim.reason,
    supersededBy: claim.supersededBy,
  };
}

/**
 * The believed corrected versions of facts, by the fact each corrects as first recorded
 * (`roots`): what a fact said wrong takes with it (docs/TEMPORAL_MODEL.md).
 */
export function believedVersionsOf<T extends Pick<FactDoc, 'factId' | 'correctionOf'>>(
  db: Collections,
  tenant: Tenant,
  roots: readonly string[],
  comment: string,
  projection: Record<string, 1>,
): Promise<T[]> {
  return db.facts
    .find<T>(
      {
        workspaceId: tenant.workspaceId,
        dataset: tenant.dataset,
        correctionOf: { $in: [...roots] },
        invalidAt: null,
      },
      { comment, projection },
    )
    .batchSize(UNPAGED_BATCH_SIZE)
    .toArray();
}

/**
 * A soft delete (`deleteFact`, Memory Soda's DELETE): the fact is wrong in every version
 * still believed. A believed fact is deleted through its claim (`invalidateFact`). A fact
 * superseded by a replacement that began after it is still true until then through its
 * corrected version (docs/TEMPORAL_MODEL.md): deleting it deletes that version (each
 * through its own claim; a racing replacement that records another version meanwhile is
 * met by the next read, after its claim was applied). Refused (FactNotFoundError) when
 * nothing of the fact is believed: an unknown id, or a fact with no believed version left.
 * Answers the fact as it is now.
 */
export async function deleteFact(
  db: Collections,
  tenant: Tenant,
  factId: string,
  at: Date,
): Promise<FactDoc> {
  try {
    return await invalidateFact(db, tenant, factId, { reason: 'deleted', at });
  } catch (error) {
    if (!(error instanceof FactNotFoundError && error.reason === 'already_invalidated')) {
      throw error;
    }
  }
  const fact = (await findFact(db, tenant, factId))!;
  const root = fact.correctionOf ?? fact.factId;
  let deleted = 0;
  for (let round = 0; round < 10; round++) {
    const versions = await believedVersionsOf(db, tenant, [root], 'store:deleteFact', {
      factId: 1,
    });
    if (versions.length === 0) break;
    for (const version of versions) {
      try {
        await invalidateFact(db, tenant, version.factId, { reason: 'deleted', at });
        deleted++;
      } catch (error) {
        // Superseded or deleted meanwhile: the next read finds what followed, if anything.
        if (!(error instanceof FactNotFoundError)) throw error;
      }
    }
  }
  if (deleted === 0) throw factNotFound('already_invalidated');
  return fact;
}

/**
 * Undoes an invalidation (a soft delete, or a supersession whose cause was erased): the
 * fact is live again and may be invalidated once more. At most once per invalidation:
 *   1. read the fact; it must be invalidated for `reason` (else FactNotFoundError);
 *   2. insert the claim `restore:<fact _id>:<generation>`; a duplicate means it is being or
 *      was restored: finish that (step 3) and refuse as "not invalidated";
 *   3. clear invalidAt / invalidReason / supersededBy and move to the next generation,
 *      only if the fact is still in the claimed generation (so a repeat changes nothing).
 * Answers the restored fact.
 */
export async function restoreFact(
  db: Collections,
  tenant: Tenant,
  factId: string,
  reason: InvalidReason,
  now: Date,
): Promise<FactDoc> {
  const refuse = (why: FactNotFoundError['reason']) =>
    new FactNotFoundError(why, `No ${reason} fact with that id`);
  const fact = await findFact(db, tenant, factId);
  if (!fact) throw refuse('not_found');
  if (fact.invalidAt === null) throw refuse('not_invalidated');
  if (fact.invalidReason !== reason) throw refuse('wrong_reason');
  const generation = fact.restorations ?? 0;
  const claim: RestorationDoc = {
    _id: `restore:${fact._id}:${generation}`,
    workspaceId: tenant.workspaceId,
    dataset: tenant.dataset,
    factId: fact.factId,
    generation,
    at: now,
    applied: false,
  };
  const claimed = await claimOnce(db.restorations, claim, 'store:restoreFact');
  if (!claimed.won) {
    const { winner } = claimed;
    if (winner && winner.applied === false) await applyRestoration(db, winner);
    throw refuse('not_invalidated');
  }
  await applyRestoration(db, claim);
  return {
    ...fact,
    invalidAt: null,
    invalidReason: null,
    supersededBy: null,
    restorations: generation + 1,
  };
}

/**
 * Step 3 of a restoration, then its change in the feed, then the claim marked applied:
 * each repeatable, so a retry, a racing loser or `repairRestorations` completes it.
 */
async function applyRestoration(db: Collections, claim: RestorationDoc): Promise<void> {
  const tenant = { workspaceId: claim.workspaceId, dataset: claim.dataset };
  const factDocId = claim._id.slice('restore:'.length, claim._id.lastIndexOf(':'));
  const generation = claim.generation ?? Number(claim._id.slice(claim._id.lastIndexOf(':') + 1));
  const tag = { comment: 'store:applyRestoration' };
  await db.facts.updateOne(
    { _id: factDocId, ...tenant, ...inGeneration(generation) },
    {
      $set: {
        invalidAt: null,
        invalidReason: null,
        supersededBy: null,
        restorations: generation + 1,
      },
    },
    tag,
  );
  await appendChanges(db, tenant, [
    {
      changeId: `${claim._id}@${claim.at.toISOString()}`,
      kind: 'FACT_RESTORED',
      at: claim.at,
      factId: claim.factId,
    },
  ]);
  await db.restorations.updateOne({ _id: claim._id, ...tenant }, { $set: { applied: true } }, tag);
}

/** Completes restorations whose follow-up did not finish (run at start-up). */
export async function repairRestorations(db: Collections): Promise<number> {
  const pending = await db.restorations
    .find({ applied: false }, { comment: 'store:repairRestorations' })
    .toArray();
  for (const claim of pending) await applyRestoration(db, claim);
  return pending.length;
}

/** The first `first` facts (standard order) each of several episodes produced, whatever their state. */
export async function factsOfEpisodes(
  db: Collections,
  tenant: Tenant,
  episodeIds: readonly string[],
  first: number,
): Promise<Map<string, FactView[]>> {
  return firstFactsOfEach(
    [...new Set(episodeIds.map(normalizeUuid))],
    first,
    (ids, limit) =>
      db.facts
        .find<FactView>(
          { workspaceId: tenant.workspaceId, dataset: tenant.dataset, episodeId: { $in: ids } },
          { comment: 'store:factsOfEpisodes', projection: FACT_VIEW },
        )
        .sort(FACT_ORDER)
        .limit(limit)
        .batchSize(Math.min(limit, UNPAGED_BATCH_SIZE))
        .toArray(),
    (fact) => (fact.episodeId ? [fact.episodeId] : []),
  );
}
