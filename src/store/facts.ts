import type { Filter } from 'mongodb';
import type { FactState, TemporalSelection } from '../domain/factState.js';
import { normalizeUuid } from '../domain/ids.js';
import { entityKey, predicateKey } from '../domain/names.js';
import { documentsByIds } from './byIds.js';
import type { Collections } from './collections.js';
import { UNPAGED_BATCH_SIZE } from './database.js';
import { type DocumentReads, projectionFor } from './documentReads.js';
import { type FactDoc, type FactView, factDocumentId } from './documents.js';
import {
  allOf,
  type FactCursor,
  queryFilter,
  selectionFilter,
  statesFilter,
  type TransactionWindows,
  windowsFilter,
} from './factFilters.js';
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

/** What a page of facts reads whatever is asked: its order (the cursor, the tie-break). */
const FACT_PAGE_NEEDS = ['validAt', 'factId'] as const;

/** Leaves out what FactView leaves out. */
export const FACT_VIEW = {
  _id: 0,
  predicateKey: 0,
  recallTerms: 0,
  quoteTerms: 0,
  restorations: 0,
  embedded: 0,
  embedding: 0,
  embeddedAt: 0,
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
  reads: DocumentReads | null = null,
): Promise<FactPage> {
  const base = factFilter(tenant, query);
  const filter = page.after
    ? allOf<FactDoc>([base, afterCursor('validAt', 'factId', page.after)])
    : base;
  const { nodes, hasNextPage } = await keysetPage(
    db.facts
      .find<FactView>(filter, {
        comment: 'store:listFacts',
        projection: projectionFor(reads, FACT_VIEW, FACT_PAGE_NEEDS),
      })
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
  reads: DocumentReads | null = null,
): Promise<Map<string, FactDoc>> {
  const ids = factIds.map((id) => factDocumentId(tenant, id));
  return documentsByIds(db.facts, tenant, ids, (d) => d.factId, 'store:factsByIds', {
    projection: projectionFor(reads, undefined, ['factId']),
  });
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
  reads: DocumentReads | null = null,
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
          {
            comment: 'store:factsOfEntities',
            projection: projectionFor(reads, FACT_VIEW, [
              ...FACT_PAGE_NEEDS,
              'subjectKey',
              'objectKey',
            ]),
          },
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

/** The first `first` facts (standard order) each of several episodes produced, whatever their state. */
export async function factsOfEpisodes(
  db: Collections,
  tenant: Tenant,
  episodeIds: readonly string[],
  first: number,
  reads: DocumentReads | null = null,
): Promise<Map<string, FactView[]>> {
  return firstFactsOfEach(
    [...new Set(episodeIds.map(normalizeUuid))],
    first,
    (ids, limit) =>
      db.facts
        .find<FactView>(
          { workspaceId: tenant.workspaceId, dataset: tenant.dataset, episodeId: { $in: ids } },
          {
            comment: 'store:factsOfEpisodes',
            projection: projectionFor(reads, FACT_VIEW, [...FACT_PAGE_NEEDS, 'episodeId']),
          },
        )
        .sort(FACT_ORDER)
        .limit(limit)
        .batchSize(Math.min(limit, UNPAGED_BATCH_SIZE))
        .toArray(),
    (fact) => (fact.episodeId ? [fact.episodeId] : []),
  );
}
