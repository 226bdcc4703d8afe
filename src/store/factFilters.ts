import type { Filter } from 'mongodb';
import type { FactState, TemporalSelection } from '../domain/factState.js';
import { recallTerms } from '../domain/recallTerms.js';
import type { FactDoc } from './documents.js';

/**
 * The temporal rules (docs/TEMPORAL_MODEL.md) as MongoDB filters. They mirror domain/factState.ts clause by
 * clause; the property test compares the two on random histories. Only plain equality,
 * range, `$in`, `$all`, `$or` and `$and` are used, which both MongoDB and FerretDB 1.x
 * evaluate the same way. Values arrive already validated and typed (Date, string), so no
 * client text can become an operator.
 */

const invalidAtAfter = (t: Date): Filter<FactDoc> => ({
  $or: [{ invalidAt: null }, { invalidAt: { $gt: t } }],
});
const validUntilAfter = (t: Date): Filter<FactDoc> => ({
  $or: [{ validUntil: null }, { validUntil: { $gt: t } }],
});

/** recordedAt <= K, invalidAt null or > K, validAt <= T, validUntil null or > T. */
export function bitemporalFilter(validAt: Date, knownAt: Date): Filter<FactDoc>[] {
  return [
    { recordedAt: { $lte: knownAt } },
    invalidAtAfter(knownAt),
    { validAt: { $lte: validAt } },
    validUntilAfter(validAt),
  ];
}

/**
 * recordedAt <= K, invalidAt null or > K, and true at some point of the valid-time window
 * [from, until): validAt < until, validUntil null or > from (null: unbounded on that side).
 */
export function validWindowFilter(
  window: { from: Date | null; until: Date | null },
  knownAt: Date,
): Filter<FactDoc>[] {
  return [
    { recordedAt: { $lte: knownAt } },
    invalidAtAfter(knownAt),
    ...(window.until ? [{ validAt: { $lt: window.until } }] : []),
    ...(window.from ? [validUntilAfter(window.from)] : []),
  ];
}

export function selectionFilter(selection: TemporalSelection): Filter<FactDoc>[] {
  return selection.kind === 'all' ? [] : bitemporalFilter(selection.validAt, selection.knownAt);
}

/** Facts in `state` at instant `t`, each condition excluding the ones checked before it. */
function stateFilter(state: FactState, t: Date): Filter<FactDoc> {
  const superseded: Filter<FactDoc> = { invalidAt: { $ne: null, $lte: t } };
  const notSuperseded = invalidAtAfter(t);
  switch (state) {
    case 'superseded':
      return superseded;
    case 'future':
      return { $and: [notSuperseded, { validAt: { $gt: t } }] };
    case 'expired':
      return {
        $and: [notSuperseded, { validAt: { $lte: t } }, { validUntil: { $ne: null, $lte: t } }],
      };
    case 'live':
      return { $and: [notSuperseded, { validAt: { $lte: t } }, validUntilAfter(t)] };
  }
}

export function statesFilter(states: readonly FactState[], t: Date): Filter<FactDoc> {
  const distinct = [...new Set(states)];
  if (distinct.length === 1) return stateFilter(distinct[0]!, t);
  return { $or: distinct.map((s) => stateFilter(s, t)) };
}

/**
 * Windows on transaction time: when the store learned a fact (`recordedAt`) and when it
 * stopped believing it (`invalidAt`). Each bound is optional; "after" is exclusive and
 * "by" inclusive, so consecutive windows (A, B] and (B, C] never share a fact.
 */
export interface TransactionWindows {
  recordedAfter?: Date | null;
  recordedBy?: Date | null;
  invalidatedAfter?: Date | null;
  invalidatedBy?: Date | null;
}

/** recordedAt > recordedAfter, recordedAt <= recordedBy; invalidAt set and in (invalidatedAfter, invalidatedBy]. */
export function windowsFilter(w: TransactionWindows): Filter<FactDoc>[] {
  const clauses: Filter<FactDoc>[] = [];
  if (w.recordedAfter || w.recordedBy) {
    clauses.push({
      recordedAt: {
        ...(w.recordedAfter ? { $gt: w.recordedAfter } : {}),
        ...(w.recordedBy ? { $lte: w.recordedBy } : {}),
      },
    });
  }
  if (w.invalidatedAfter || w.invalidatedBy) {
    clauses.push({
      invalidAt: {
        $ne: null,
        ...(w.invalidatedAfter ? { $gt: w.invalidatedAfter } : {}),
        ...(w.invalidatedBy ? { $lte: w.invalidatedBy } : {}),
      },
    });
  }
  return clauses;
}

/**
 * `q`, full text: every analyzed term of `q` (recall's analysis, domain/recallTerms.ts:
 * words minus English stop words, stemmed, so `cars` finds "car" and `interest` finds "is
 * interested in") must be among the fact's; a `q` with no terms filters nothing.
 */
export function queryFilter(q: string): Filter<FactDoc>[] {
  const terms = recallTerms(q);
  return terms.length === 0 ? [] : [{ recallTerms: { $all: terms } }];
}

/** Keyset position: strictly after (validAt, factId) in validAt-desc, factId-desc order. */
export interface FactCursor {
  validAt: Date;
  factId: string;
}

/** Combines clauses into one filter (a bare object when there is one clause). */
export function allOf<T>(clauses: Filter<T>[]): Filter<T> {
  if (clauses.length === 0) return {};
  if (clauses.length === 1) return clauses[0]!;
  return { $and: clauses } as Filter<T>;
}
