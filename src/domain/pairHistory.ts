import { derivedUuid } from './ids.js';

/**
 * A subject and predicate's whole bi-temporal history, computed from its records
 * (docs/TEMPORAL_MODEL.md, "The history is derived"). Pure: the store reads a pair's
 * records, calls `derivePairHistory` and writes what it answers (store/materialise.ts); no
 * write path stamps a fact's state by hand.
 *
 * The records are the truth: the facts as asserted (their episode, valid time, recording
 * instant and `replaceExisting`), the facts other facts said were wrong (`supersedes`),
 * deletes and restores. Erasing an episode removes its records. Then, as XTDB carves an
 * entity's valid-time ranges from its transactions, the state at a transaction-time
 * instant K is a function of the records recorded by K:
 *
 * - Facts of the pair are ordered by `validAt`, then recording instant, then `factId`:
 *   the later in that order, the more a fact says about the present.
 * - A later fact G **ends** F when G replaces (`replaceExisting`) and is of another
 *   episode, or when G is of F's own episode and F replaces (an episode's facts bound each
 *   other). Facts recorded without `replaceExisting` are multi-valued by intent: they are
 *   ended by a replacing fact but end nothing.
 * - F's **end** at K is the earliest of its own `validUntil` and the `validAt` of every
 *   fact recorded by K that ends it, believed or not (a fact said wrong still marks where
 *   what came before it ended, so nothing depends on the order of the two).
 * - F is **believed** at K when it was recorded by K, is not deleted at K (more deletes
 *   than restores by K), no fact recorded by K said it was wrong, and its end is after its
 *   `validAt` (a successor from the same instant leaves it no time of its own).
 *
 * A fact's history is the runs of instants over which it is believed with one end. Each
 * run is one stored document: believed from the run's first instant (`recordedAt`) until
 * the instant it changed (`invalidAt`), valid from `validAt` until that end. The first run
 * has the fact's own id; each later run (a **version**) has an id derived from the run it
 * corrects and the successor that ends it, or (after a restore) from the fact, the run's
 * start and its end, so every writer, retry and repair derives the same ones.
 */

/** A fact as asserted: what its record holds of time and replacement. */
export interface AssertedFact {
  factId: string;
  episodeId: string | null;
  validAt: Date;
  /** As asserted (null: open-ended); the stored one may end earlier (its successors). */
  validUntil: Date | null;
  replaceExisting: boolean;
  /** The recording instant: when the store learned it. */
  at: Date;
}

/** One record of a pair. `at` is its recording instant (transaction time). */
export type PairRecord =
  | { kind: 'asserted'; fact: AssertedFact }
  /** `factId` was said wrong by `by` (listed in its `supersedes`), at `by`'s recording. */
  | { kind: 'saidWrong'; factId: string; by: string | null; at: Date }
  | { kind: 'deleted'; factId: string; at: Date }
  | { kind: 'restored'; factId: string; at: Date };

/** A record about an asserted fact. */
type OtherRecord = Exclude<PairRecord, { kind: 'asserted' }>;

/** What one stored document of a fact says: one run of its history. */
export interface FactRun {
  /** The document's fact id: the fact's own for its first run, else a version's. */
  id: string;
  /** The fact as asserted. */
  factId: string;
  validAt: Date;
  validUntil: Date | null;
  recordedAt: Date;
  invalidAt: Date | null;
  invalidReason: 'superseded' | 'deleted' | null;
  supersededBy: string | null;
  /** A version's: the fact it is a version of (null on the first run). */
  correctionOf: string | null;
  /** A version's: the fact whose `validAt` is its end, if a successor ends it. */
  correctedBy: string | null;
  /** What began the run: the fact's recording, a successor's correction, or a restore. */
  startedBy: 'recording' | 'correction' | 'restore';
  /** What ended it (null: believed still). */
  endedBy: 'successor' | 'deleted' | 'saidWrong' | null;
}

/** The order of a pair's facts: validAt, then recording instant, then factId. */
export function compareAsserted(
  a: Pick<AssertedFact, 'validAt' | 'at' | 'factId'>,
  b: Pick<AssertedFact, 'validAt' | 'at' | 'factId'>,
): number {
  return (
    a.validAt.getTime() - b.validAt.getTime() ||
    a.at.getTime() - b.at.getTime() ||
    (a.factId < b.factId ? -1 : a.factId > b.factId ? 1 : 0)
  );
}

const sameEpisode = (a: AssertedFact, b: AssertedFact) =>
  a.episodeId !== null && a.episodeId === b.episodeId;

/** Whether `later` (after `fact` in the order) ends `fact`. */
export const endsFact = (fact: AssertedFact, later: AssertedFact): boolean =>
  sameEpisode(fact, later) ? fact.replaceExisting : later.replaceExisting;

/** A fact's state at one instant: believed until `end` (ended by `by`), or why not. */
type FactState =
  | { believed: true; end: Date | null; endedBy: string | null }
  | { believed: false; cause: 'successor' | 'deleted' | 'saidWrong'; by: string | null };

const time = (d: Date | null) => (d === null ? Number.POSITIVE_INFINITY : d.getTime());

/**
 * The id of a corrected version: the run it follows and the successor that ends it (the
 * ids stores have carried since versions were first recorded).
 */
function correctedVersionId(previousRunId: string, successorId: string): string {
  return derivedUuid('corrected-fact', previousRunId, '0', successorId);
}

/** The id of a restored version: the fact, the run's first instant and its end. */
function versionId(factId: string, recordedAt: Date, validUntil: Date | null): string {
  return derivedUuid(
    'fact-version',
    factId,
    recordedAt.toISOString(),
    validUntil?.toISOString() ?? 'open',
  );
}

/**
 * The pair's history: every run of every fact asserted in `records`, in the order of the
 * facts, then of their runs. Records of facts not asserted here (a delete of a fact whose
 * episode was erased) are ignored.
 */
export function derivePairHistory(records: readonly PairRecord[]): FactRun[] {
  const asserted = records
    .flatMap((r) => (r.kind === 'asserted' ? [r.fact] : []))
    .sort(compareAsserted);
  const others = new Map<string, OtherRecord[]>();
  for (const r of records) {
    if (r.kind === 'asserted') continue;
    const list = others.get(r.factId);
    if (list) list.push(r);
    else others.set(r.factId, [r]);
  }
  // Of two said-wrongs at one instant, the one by the lower id names the fact's end.
  for (const list of others.values()) {
    list.sort((a, b) => a.at.getTime() - b.at.getTime() || byOf(a).localeCompare(byOf(b)));
  }
  const runs: FactRun[] = [];
  asserted.forEach((fact, index) => {
    // What can change the fact's state, each at its recording instant (none before the
    // fact's own): the later facts that end it, its deletes, restores and said-wrongs.
    const events: { at: number; record: OtherRecord | AssertedFact }[] = [];
    // The enders in the facts' order (so by validAt): one can set the end only if it was
    // recorded before every ender ahead of it, which is otherwise there first with an end
    // no later. Once one was recorded by the fact's own arrival, none after it can.
    let firstAt = Number.POSITIVE_INFINITY;
    for (let j = index + 1; j < asserted.length && firstAt > fact.at.getTime(); j++) {
      const later = asserted[j]!;
      if (!endsFact(fact, later) || later.at.getTime() >= firstAt) continue;
      firstAt = later.at.getTime();
      events.push({ at: firstAt, record: later });
    }
    for (const r of others.get(fact.factId) ?? []) events.push({ at: r.at.getTime(), record: r });
    const from = fact.at.getTime();
    for (const e of events) e.at = Math.max(e.at, from);
    // Stable: enders keep the facts' order within an instant, so of two enders from one
    // validAt the earlier in the order names the end.
    events.sort((a, b) => a.at - b.at);
    pushRuns(runs, fact, from, events);
  });
  return runs;
}

const byOf = (r: OtherRecord) => (r.kind === 'saidWrong' ? (r.by ?? '') : '');

/** A fact's runs, walking the events that change its state in recording order. */
function pushRuns(
  runs: FactRun[],
  fact: AssertedFact,
  from: number,
  events: readonly { at: number; record: OtherRecord | AssertedFact }[],
): void {
  let end = fact.validUntil;
  let endedBy: string | null = null;
  let deletes = 0;
  let restores = 0;
  let wrong: { by: string | null } | null = null;
  let open: FactRun | null = null;
  let first = true;

  const state = (): FactState => {
    if (deletes > restores) return { believed: false, cause: 'deleted', by: null };
    if (wrong) return { believed: false, cause: 'saidWrong', by: wrong.by };
    if (time(end) <= fact.validAt.getTime()) {
      return { believed: false, cause: 'successor', by: endedBy };
    }
    return { believed: true, end, endedBy };
  };
  const close = (run: FactRun, at: Date, now: FactState) => {
    run.invalidAt = at;
    run.endedBy = now.believed ? 'successor' : now.cause;
    run.invalidReason = run.endedBy === 'deleted' ? 'deleted' : 'superseded';
    run.supersededBy = now.believed ? now.endedBy : now.by;
  };
  // A run that follows a closed one at the same instant corrects it; one after a gap
  // (a delete) restores the fact.
  let gap = false;
  const step = (k: number) => {
    const now = state();
    const at = new Date(k);
    if (open && now.believed && time(open.validUntil) === time(now.end)) return;
    const continues = open !== null;
    const previous = open?.id ?? null;
    if (open) {
      close(open, at, now);
      open = null;
    }
    if (now.believed) {
      open = {
        id: first
          ? fact.factId
          : continues && now.endedBy !== null
            ? correctedVersionId(previous!, now.endedBy)
            : versionId(fact.factId, at, now.end),
        factId: fact.factId,
        validAt: fact.validAt,
        validUntil: now.end,
        recordedAt: at,
        invalidAt: null,
        invalidReason: null,
        supersededBy: null,
        correctionOf: first ? null : fact.factId,
        // A bound on arrival is the fact as recorded; a later end is a correction.
        correctedBy: first ? null : now.endedBy,
        startedBy: first ? 'recording' : continues || !gap ? 'correction' : 'restore',
        endedBy: null,
      };
      runs.push(open);
      gap = false;
    } else if (first) {
      // Never believed, not even on arrival: its document still exists under the fact's
      // id, believed over no instant (recorded and invalidated at once).
      const never: FactRun = {
        id: fact.factId,
        factId: fact.factId,
        validAt: fact.validAt,
        validUntil: fact.validUntil,
        recordedAt: at,
        invalidAt: null,
        invalidReason: null,
        supersededBy: null,
        correctionOf: null,
        correctedBy: null,
        startedBy: 'recording',
        endedBy: null,
      };
      close(never, at, now);
      runs.push(never);
    }
    if (!now.believed) gap = gap || now.cause === 'deleted';
    first = false;
  };

  let i = 0;
  // The events at the fact's own instant count from its arrival.
  for (const k of [from, ...new Set(events.map((e) => e.at))]) {
    if (k === from && !first) continue;
    for (; i < events.length && events[i]!.at === k; i++) {
      const r = events[i]!.record;
      if (!('kind' in r)) {
        if (r.validAt.getTime() < time(end)) {
          end = r.validAt;
          endedBy = r.factId;
        }
      } else if (r.kind === 'deleted') deletes++;
      else if (r.kind === 'restored') restores++;
      else if (r.kind === 'saidWrong' && !wrong) wrong = { by: r.by };
    }
    step(k);
  }
}

/** The fact a stored document belongs to: its own id, or the fact a version is of. */
export const rootFactId = (doc: { factId: string; correctionOf?: string | null }): string =>
  doc.correctionOf ?? doc.factId;
