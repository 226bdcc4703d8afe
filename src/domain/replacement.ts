/**
 * `replaceExisting`: a subject and predicate with one value at a time, decided by valid
 * time (docs/TEMPORAL_MODEL.md, "One value per subject and predicate"). Pure: the store
 * reads the believed facts of a subject and predicate and applies what these functions
 * decide (store/supersession.ts).
 *
 * Facts of one subject and predicate are ordered by `validAt`, then `recordedAt`, then
 * `factId`: the later a fact is in that order, the more it says about the present. The
 * rule, applied by every writer to what it reads, so that racing writers converge:
 *
 * - **Bounded on arrival.** A `replaceExisting` fact that arrives while a believed fact of
 *   its subject and predicate has a later `validAt` does not replace it: it is past truth,
 *   kept with `validUntil` set to the earliest such `validAt` (or its own `validUntil`, if
 *   earlier), as Graphiti does with late-arriving edges.
 * - **Supersedes what it overlaps.** A believed fact that comes before a `replaceExisting`
 *   fact of another episode in the order, and whose valid time reaches past that fact's
 *   `validAt`, is superseded by it (by the first such fact in the order).
 * - Facts of one episode never supersede each other (they bound each other, as above).
 *
 * Once the writes finish, no two believed facts of a subject and predicate overlap in
 * valid time where the later is a `replaceExisting` fact of another episode: with
 * `replaceExisting` facts only, exactly one is open at the end of the order, the latest,
 * and the others are superseded or end where the next begins.
 */

/** What the rule reads of a fact. */
export interface TimelineFact {
  factId: string;
  episodeId: string | null;
  validAt: Date;
  validUntil: Date | null;
  recordedAt: Date;
  replaceExisting: boolean;
}

/** The order of a subject and predicate's facts: validAt, then recordedAt, then factId. */
export function compareTimeline(
  a: Pick<TimelineFact, 'validAt' | 'recordedAt' | 'factId'>,
  b: Pick<TimelineFact, 'validAt' | 'recordedAt' | 'factId'>,
): number {
  return (
    a.validAt.getTime() - b.validAt.getTime() ||
    a.recordedAt.getTime() - b.recordedAt.getTime() ||
    (a.factId < b.factId ? -1 : a.factId > b.factId ? 1 : 0)
  );
}

/**
 * The `validUntil` a `replaceExisting` fact is stored with: its own, or the earliest
 * `validAt` after its own among `others` (the believed facts of its subject and predicate
 * and the other facts of its episode with them), whichever is earlier. Never at or
 * before its `validAt`: only a strictly later fact bounds it.
 */
export function boundedValidUntil(
  fact: Pick<TimelineFact, 'validAt' | 'validUntil'>,
  others: readonly Pick<TimelineFact, 'validAt'>[],
): Date | null {
  let until = fact.validUntil;
  for (const other of others) {
    if (other.validAt.getTime() <= fact.validAt.getTime()) continue;
    if (until === null || other.validAt.getTime() < until.getTime()) until = other.validAt;
  }
  return until;
}

/** Whether `earlier`'s valid time reaches past the start of `later`'s. */
const overlaps = (earlier: TimelineFact, later: TimelineFact) =>
  earlier.validUntil === null || earlier.validUntil.getTime() > later.validAt.getTime();

/**
 * Which believed facts of one subject and predicate are superseded, and by which fact:
 * each fact that comes before a `replaceExisting` fact of another episode and overlaps
 * it, by the first such fact in the order. `facts` are the believed facts the writer
 * read (its own among them); the answer maps a fact id to its successor's.
 */
export function replacedFacts(facts: readonly TimelineFact[]): Map<string, string> {
  const ordered = [...facts].sort(compareTimeline);
  const replaced = new Map<string, string>();
  for (let i = 0; i < ordered.length; i++) {
    const fact = ordered[i]!;
    for (let j = i + 1; j < ordered.length; j++) {
      const later = ordered[j]!;
      if (!later.replaceExisting) continue;
      if (later.episodeId !== null && later.episodeId === fact.episodeId) continue;
      if (!overlaps(fact, later)) continue;
      replaced.set(fact.factId, later.factId);
      break;
    }
  }
  return replaced;
}
