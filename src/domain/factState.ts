/**
 * The bi-temporal rules for facts, as pure functions. The store turns the same rules into
 * MongoDB filters (store/factFilters.ts); the tests check one against the other.
 */

export const FACT_STATES = ['live', 'superseded', 'expired', 'future'] as const;
export type FactState = (typeof FACT_STATES)[number];

/** The temporal fields of a fact: valid time and transaction (system) time. */
export interface FactTimes {
  validAt: Date;
  validUntil: Date | null;
  recordedAt: Date;
  invalidAt: Date | null;
}

/**
 * State at the bi-temporal point (validAt T, knownAt K), checked in docs/TEMPORAL_MODEL.md's
 * order: SUPERSEDED if invalidated by K (invalidAt <= K), else FUTURE if not yet valid at T
 * (validAt > T), else EXPIRED if no longer valid at T (validUntil <= T), else LIVE.
 * Transaction time decides only SUPERSEDED; valid time decides the other three.
 */
export function factStateAtPoint(fact: FactTimes, validAt: Date, knownAt: Date): FactState {
  const t = validAt.getTime();
  if (fact.invalidAt !== null && fact.invalidAt.getTime() <= knownAt.getTime()) return 'superseded';
  if (fact.validAt.getTime() > t) return 'future';
  if (fact.validUntil !== null && fact.validUntil.getTime() <= t) return 'expired';
  return 'live';
}

/**
 * State at instant `t` on both axes: factStateAtPoint with T = K = t.
 * @internal the one-instant form of the state table, which its tests pin; the schema
 * (Fact.state) calls factStateAtPoint.
 */
export function factStateAt(fact: FactTimes, t: Date): FactState {
  return factStateAtPoint(fact, t, t);
}

/**
 * Does the fact match the bi-temporal point (validAt T, knownAt K)? It was recorded by K
 * and not invalidated by K, and its validity interval [validAt, validUntil) contains T.
 * T = K = now is "live"; T = K = asOf is Memory Soda's `asOf`.
 * @internal the rule in reference form: the store runs it as a filter
 * (store/factFilters.ts, bitemporalFilter); its tests pin the boundaries.
 */
export function matchesBitemporal(fact: FactTimes, validAt: Date, knownAt: Date): boolean {
  const t = validAt.getTime();
  const k = knownAt.getTime();
  return (
    fact.recordedAt.getTime() <= k &&
    (fact.invalidAt === null || fact.invalidAt.getTime() > k) &&
    fact.validAt.getTime() <= t &&
    (fact.validUntil === null || fact.validUntil.getTime() > t)
  );
}

/** How a read chooses facts on the two time axes. */
export type TemporalSelection =
  /** Every fact, whatever its state (full history, or "everything one episode produced"). */
  | { kind: 'all' }
  /** The bi-temporal point (validAt, knownAt). */
  | { kind: 'point'; validAt: Date; knownAt: Date };

export interface TemporalArgs {
  includeInvalidated?: boolean | null;
  asOf?: Date | null;
  validAt?: Date | null;
  knownAt?: Date | null;
  episodeId?: string | null;
}

/**
 * Resolves the read arguments to one selection, following docs/TEMPORAL_MODEL.md:
 * `asOf` sets both axes and overrides `includeInvalidated`; `validAt` / `knownAt` set one
 * axis each (the other defaults to now); otherwise `includeInvalidated` or an `episodeId`
 * alone selects every fact, and the default is live now.
 */
export function resolveTemporalSelection(args: TemporalArgs, now: Date): TemporalSelection {
  if (args.asOf) return { kind: 'point', validAt: args.asOf, knownAt: args.asOf };
  if (args.validAt || args.knownAt) {
    return { kind: 'point', validAt: args.validAt ?? now, knownAt: args.knownAt ?? now };
  }
  if (args.includeInvalidated || args.episodeId) return { kind: 'all' };
  return { kind: 'point', validAt: now, knownAt: now };
}
