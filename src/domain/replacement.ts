/**
 * `replaceExisting`: a subject and predicate with one value at a time, decided by valid
 * time (docs/TEMPORAL_MODEL.md, "One value per subject and predicate"). Pure: the store
 * reads the facts of a subject and predicate and applies what these functions decide
 * (store/supersession.ts).
 *
 * Facts of one subject and predicate are ordered by `validAt`, then `recordedAt`, then
 * `factId`: the later a fact is in that order, the more it says about the present. A
 * fact's **successors** are the later facts in that order that end it: `replaceExisting`
 * facts of other episodes, and, for a `replaceExisting` fact, the later facts of its own
 * episode. Every fact ever recorded for the pair counts as a successor, believed or not:
 * a fact said wrong later (a delete, an explicit `supersedes`) still marks where what came
 * before it ended, so the answer does not depend on whether the earlier fact arrived
 * before or after it was said wrong. The rule, applied by every writer to what it reads,
 * so that racing writers converge:
 *
 * - **Bounded on arrival.** A new fact with a successor among the facts already there is
 *   past truth: it is stored with `validUntil` at the earliest successor's `validAt` (or
 *   its own `validUntil`, if earlier), as Graphiti does with late-arriving edges.
 * - **Superseded, and kept true until its successor began.** A believed fact that
 *   overlaps a `replaceExisting` successor of another episode is superseded by the first
 *   such fact; if it began before that fact, a **corrected version** of it is recorded at
 *   the same instant: the same statement, ending where the successor begins, so the
 *   history as known from then on says it was true until it changed, exactly as if it had
 *   arrived late (`correctedUntil`).
 *
 * Once the writes finish, every (validAt, knownAt) view with knownAt after them answers
 * the same whatever the order in which they arrived: each fact not said wrong is true from
 * its `validAt` until its own `validUntil` or its earliest successor's `validAt`,
 * whichever is earlier, through itself or one corrected version.
 */

/** What the rule reads of a fact. */
export interface TimelineFact {
  factId: string;
  episodeId: string | null;
  validAt: Date;
  validUntil: Date | null;
  recordedAt: Date;
  replaceExisting: boolean;
  /** Not invalidated: only believed facts are superseded; every fact is a successor. */
  believed: boolean;
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

type Ender = Pick<TimelineFact, 'episodeId' | 'replaceExisting'>;

const sameEpisode = (a: Ender, b: Ender) => a.episodeId !== null && a.episodeId === b.episodeId;

/**
 * Whether `later` (after `fact` in the order) ends `fact`: a `replaceExisting` fact of
 * another episode, or any fact of `fact`'s own episode when `fact` is `replaceExisting`
 * (an episode's facts never supersede each other; they bound each other).
 */
const endsFact = (fact: Ender, later: Ender): boolean =>
  sameEpisode(fact, later) ? fact.replaceExisting : later.replaceExisting;

/**
 * The `validUntil` a new fact is stored with: its own, or the earliest `validAt` after its
 * own among the successors in `others` (the facts of its subject and predicate already
 * recorded, believed or not, and the other facts of its episode with them), whichever is
 * earlier. Never at or before its `validAt`: only a strictly later fact bounds it.
 */
export function boundedValidUntil(
  fact: Pick<TimelineFact, 'validAt' | 'validUntil' | 'episodeId' | 'replaceExisting'>,
  others: readonly Pick<TimelineFact, 'validAt' | 'episodeId' | 'replaceExisting'>[],
): Date | null {
  let until = fact.validUntil;
  for (const other of others) {
    if (other.validAt.getTime() <= fact.validAt.getTime()) continue;
    if (!endsFact(fact, other)) continue;
    if (until === null || other.validAt.getTime() < until.getTime()) until = other.validAt;
  }
  return until;
}

/** Whether `earlier`'s valid time reaches past the start of `later`'s. */
const overlaps = (earlier: TimelineFact, later: TimelineFact) =>
  earlier.validUntil === null || earlier.validUntil.getTime() > later.validAt.getTime();

/** A believed fact the rule supersedes: by which fact, and the end of its corrected version. */
export interface Replacement {
  by: string;
  /**
   * The successor's `validAt` when the fact began before it: the fact was true until then,
   * and a corrected version ending there is recorded with the supersession. Null when
   * both begin together (the fact was never the value alone).
   */
  correctedUntil: Date | null;
}

/**
 * Which believed facts of one subject and predicate are superseded, and by which fact:
 * each believed fact that comes before a `replaceExisting` fact of another episode and
 * overlaps it, by the first such fact in the order (believed or not). `facts` are every
 * fact of the pair the writer read, its own among them; the answer maps a fact id to its
 * replacement.
 */
export function replacedFacts(facts: readonly TimelineFact[]): Map<string, Replacement> {
  const ordered = [...facts].sort(compareTimeline);
  const replaced = new Map<string, Replacement>();
  for (let i = 0; i < ordered.length; i++) {
    const fact = ordered[i]!;
    if (!fact.believed) continue;
    for (let j = i + 1; j < ordered.length; j++) {
      const later = ordered[j]!;
      if (!later.replaceExisting || sameEpisode(fact, later)) continue;
      if (!overlaps(fact, later)) continue;
      replaced.set(fact.factId, {
        by: later.factId,
        correctedUntil: fact.validAt.getTime() < later.validAt.getTime() ? later.validAt : null,
      });
      break;
    }
  }
  return replaced;
}
