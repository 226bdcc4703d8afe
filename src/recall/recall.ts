import { resolveTemporalSelection } from '../domain/factState.js';
import { type TimeInQuestion, timeInQuestion } from '../domain/questionTime.js';
import {
  type Candidate,
  type Correction,
  candidateTerms,
  factFactors,
  fuse,
  HOP_SOURCES,
  hopsScored,
  MEANING_MARGIN,
  memoryFactors,
  NAMED_ENTITY,
  nameIsCommon,
  namesIn,
  ordered,
  QUOTE_WEIGHT,
  questionTerms,
  type Ranked,
  type RecallExplanation,
  type Scored,
  scoreCandidates,
  type TermStatistics,
  topicsAmong,
} from '../domain/recall.js';
import { factText, recallTerms } from '../domain/recallTerms.js';
import { nearestTerms, typoDistanceFor } from '../domain/typos.js';
import type { Collections } from '../store/collections.js';
import type { FactView, MemoryDoc } from '../store/documents.js';
import {
  entitiesNamed,
  factCandidates,
  factsInView,
  factsMentioning,
  factTermFrequencies,
  factTermStatistics,
  type MemoryRecallView,
  markMemoriesUsed,
  memoryCandidates,
  RECALL_POSTINGS_BUDGET,
  type RecallInstants,
} from '../store/recall.js';
import type { Tenant } from '../store/tenant.js';
import { termsNear } from '../store/vocabulary.js';
import { factsByMeaning, type Meaning, memoriesByMeaning } from './meaning.js';

/**
 * Recall, the service (docs/RECALL.md): what a dataset holds about a question, for GraphQL's
 * `Dataset.recall` and through it the REST route and the MCP tool. It reads the store
 * (store/recall.ts), ranks with the pure rules (domain/recall.ts) and explains each item.
 * The facts and the memories are each read only when asked for, so a client (or the REST
 * route) asking for facts alone neither reads nor stamps memories.
 */

/** The time the question named, and whether it was applied (explicit instants win over it). */
export type RecallTime = TimeInQuestion & { applied: boolean };

/** Why an item ranked where it did, and the time of the question it was recalled for. */
export type ExplainedRecall = RecallExplanation & { time: RecallTime | null };

export interface RecallShape {
  time: RecallTime | null;
  facts(): Promise<Explained<FactView>[]>;
  memories(): Promise<Explained<MemoryDoc>[]>;
}

export type Explained<T> = Omit<Ranked<T>, 'explanation'> & { explanation: ExplainedRecall };

/** Runs `read` once, on first use. */
function once<T>(read: () => Promise<T>): () => Promise<T> {
  let result: Promise<T> | null = null;
  return () => {
    result ??= read();
    return result;
  };
}

/** A recall's arguments: the query, how many of each kind, and the instants asked for. */
export interface RecallArgs {
  query: string;
  first: number;
  asOf: Date | null;
  validAt: Date | null;
  knownAt: Date | null;
}

/** What a recall runs with: the request's store, its instant, and where it notes a problem. */
export interface RecallDeps {
  store: Collections;
  now: Date;
  /** Problems that do not fail the answer (a failed stamp), for the edge to log. */
  problems: string[];
  /** Recall by meaning (the model and the process's vector index); null: by words alone. */
  meaning: Meaning | null;
  /**
   * Which legs rank (with `meaning`): both, fused (what every surface answers), or one
   * alone, which only `npm run bench:recall` asks for, to measure each leg against the
   * hybrid.
   */
  legs?: 'both' | 'words' | 'meaning';
}

export function recall(ctx: RecallDeps, tenant: Tenant, args: RecallArgs): RecallShape {
  // The instants as `facts` resolves them: asOf both, else each axis defaulting to now.
  const selection = resolveTemporalSelection({ ...args, includeInvalidated: false }, ctx.now);
  const at: RecallInstants =
    selection.kind === 'point'
      ? { validAt: selection.validAt, knownAt: selection.knownAt }
      : { validAt: ctx.now, knownAt: ctx.now };
  // The time the question names, read from the instant the recall is made at (a replay's
  // K): a window on valid time, unless an explicit instant on valid time wins over it. Its
  // phrase is not among the words either way.
  const explicitValidTime = args.asOf !== null || args.validAt !== null;
  const { time, words } = timeInQuestion(args.query, args.asOf ?? args.knownAt ?? ctx.now);
  const recalledTime = time ? { ...time, applied: !explicitValidTime } : null;
  if (time && !explicitValidTime) {
    at.window = { from: time.from, until: time.until };
    // Recency counts to the window's end, when it is over.
    if (time.until && time.until < at.validAt) at.validAt = time.until;
  }
  // Any instant asked for (or named by the question) makes this a look at the store from
  // then, not an agent's recall now: it reads memories as they were at K and stamps nothing.
  const replay =
    args.asOf !== null || args.validAt !== null || args.knownAt !== null || at.window !== undefined;
  const explained = <T>(ranked: Ranked<T>[]): Explained<T>[] =>
    ranked.map((r) => ({ ...r, explanation: { ...r.explanation, time: recalledTime } }));
  return {
    time: recalledTime,
    facts: once(async () => {
      const terms = questionTerms(words);
      // The dense leg reads beside the words leg; a question of stop words only has neither.
      const byMeaning =
        ctx.meaning && ctx.legs !== 'words' && terms.length > 0
          ? factsByMeaning(ctx.store, ctx.meaning, tenant, words, at, MEANING_MARGIN)
          : null;
      const [statistics, inView, named] = await Promise.all([
        factTermStatistics(ctx.store, tenant, terms, at.knownAt),
        factsInView(ctx.store, tenant, at),
        entitiesNamed(ctx.store, tenant, namesIn(words)),
      ]);
      const corrections = await typosRead(ctx, tenant, terms, statistics, at.knownAt);
      // A name whose terms are all common is what the dataset is about: not read as a topic.
      const aboutNames = named.filter((name) => !nameIsCommon(statistics, name));
      // The candidates, by the question's rarer terms; the entities the question names:
      // their facts rank up, and lead one hop further.
      const [candidates, mentioning] = await Promise.all([
        factCandidates(ctx.store, tenant, candidateTerms(statistics, RECALL_POSTINGS_BUDGET), at),
        factsMentioning(ctx.store, tenant, aboutNames, at),
      ]);
      const topics = topicsAmong(aboutNames, mentioning, inView);
      const about = (f: FactView, names: Set<string>) =>
        names.has(f.subjectKey) || names.has(f.objectKey);
      const linked = mentioning.filter((f) => about(f, topics));
      const pool = new Map([...candidates, ...linked].map((f) => [f.factId, f]));
      const scored = scoreCandidates(
        words,
        [...pool.values()].map(
          (f): Candidate<FactView> => ({
            item: f,
            fields: [
              { name: 'statement', text: factText(f), weight: 1 },
              ...(f.sourceQuote
                ? [{ name: 'quote', text: f.sourceQuote, weight: QUOTE_WEIGHT }]
                : []),
            ],
            factors: [...factFactors(f, at.validAt), ...(about(f, topics) ? [NAMED_ENTITY] : [])],
            time: f.validAt,
            id: f.factId,
          }),
        ),
        statistics,
        corrections,
      );
      // One hop further from the best-scored facts that link a topic (HOP_SOURCES of them).
      const scoreOf = new Map(scored.map((s) => [s.id, s.score]));
      const leading = [...linked]
        .sort((a, b) => (scoreOf.get(b.factId) ?? 0) - (scoreOf.get(a.factId) ?? 0))
        .slice(0, HOP_SOURCES);
      const others = new Set(
        leading.flatMap((f) => [f.subjectKey, f.objectKey]).filter((k) => !topics.has(k)),
      );
      const hopNames = await entitiesNamed(ctx.store, tenant, [...others]);
      const hopFacts = await factsMentioning(ctx.store, tenant, hopNames, at);
      const hopTopics = topicsAmong(hopNames, hopFacts, inView);
      const hops = hopFacts
        .filter((f) => !pool.has(f.factId) && about(f, hopTopics))
        .map((f) => ({
          item: f,
          time: f.validAt,
          id: f.factId,
          links: linked
            .filter((l) =>
              [l.subjectKey, l.objectKey].some((k) => hopTopics.has(k) && about(f, new Set([k]))),
            )
            .map((l) => l.factId),
        }));
      const byWords = [...scored, ...hopsScored(hops, scored)];
      if (!byMeaning) return explained(ordered(byWords, args.first));
      const found = await byMeaning;
      const hits = found.hits.map((h) => ({
        ...h,
        factors: [
          ...factFactors(h.item, at.validAt),
          ...(about(h.item, topics) ? [NAMED_ENTITY] : []),
        ],
      }));
      const similarities = found.similarities(byWords.map((s) => s.id));
      return explained(fuse(legsOf(ctx, byWords), hits, args.first, similarities));
    }),
    memories: once(async () => {
      const view: MemoryRecallView = replay
        ? { kind: 'replay', ...at }
        : { kind: 'live', now: ctx.now };
      const { candidates, inView, corrections } = await memoriesWithTypos(
        ctx,
        tenant,
        recallTerms(words),
        view,
      );
      const scored: Candidate<MemoryDoc>[] = candidates.map((m) => ({
        item: m,
        fields: [{ name: 'text', text: m.text, weight: 1 }],
        factors: memoryFactors(m),
        time: m.createdAt,
        id: m.memoryId,
      }));
      const byWords = scoreCandidates(words, scored, inView, corrections);
      let ranked: Explained<MemoryDoc>[];
      if (ctx.meaning && ctx.legs !== 'words' && recallTerms(words).length > 0) {
        const found = await memoriesByMeaning(
          ctx.store,
          ctx.meaning,
          tenant,
          words,
          view,
          MEANING_MARGIN,
        );
        const hits = found.hits.map((h) => ({ ...h, factors: memoryFactors(h.item) }));
        const similarities = found.similarities(byWords.map((s) => s.id));
        ranked = explained(fuse(legsOf(ctx, byWords), hits, args.first, similarities));
      } else {
        ranked = explained(ordered(byWords, args.first));
      }
      if (!replay) {
        const used = ranked.map((r) => r.item);
        // Metadata of the read: a failed stamp must not fail the answer it belongs to; the
        // edge logs it as a warning.
        await markMemoriesUsed(ctx.store, tenant, used, ctx.now).catch((error: unknown) => {
          ctx.problems.push(
            `lastUsedAt not stamped: ${error instanceof Error ? error.message : String(error)}`,
          );
        });
        for (const m of used) m.lastUsedAt = ctx.now;
      }
      return ranked;
    }),
  };
}

/** The words leg's items, unless the meaning leg ranks alone. */
const legsOf = <T>(ctx: RecallDeps, byWords: Scored<T>[]): Scored<T>[] =>
  ctx.legs === 'meaning' ? [] : byWords;

/** How many terms near a typo are counted before one is taken (the nearest first). */
const TYPO_CHOICES = 3;

/**
 * The question's typos: each of its terms that no fact recorded by K holds (and that may be
 * corrected: domain/typos.ts) is read as the nearest term of the dataset's vocabulary that
 * one does, among the TYPO_CHOICES nearest; their counts join `statistics`. One lookup when
 * a term is missing, two counts per term considered.
 */
async function typosRead(
  ctx: Pick<RecallDeps, 'store'>,
  tenant: Tenant,
  terms: readonly string[],
  statistics: TermStatistics,
  knownAt: Date,
): Promise<Map<string, Correction>> {
  const corrections = new Map<string, Correction>();
  const absent = terms.filter(
    (t) => statistics.documentFrequency.get(t) === 0 && typoDistanceFor(t) > 0,
  );
  if (absent.length === 0) return corrections;
  const near = await termsNear(ctx.store, tenant, absent);
  const choices = new Map(
    absent.map((asked) => [asked, nearestTerms(asked, near).slice(0, TYPO_CHOICES)] as const),
  );
  const considered = [...new Set([...choices.values()].flat().map((c) => c.term))].filter(
    (t) => !statistics.documentFrequency.has(t),
  );
  const counted = await factTermFrequencies(ctx.store, tenant, considered, knownAt);
  for (const [asked, nearest] of choices) {
    const chosen = nearest.find(
      (c) => (counted.get(c.term) ?? statistics.documentFrequency.get(c.term) ?? 0) > 0,
    );
    if (!chosen || statistics.documentFrequency.has(chosen.term) || corrections.has(chosen.term)) {
      continue;
    }
    corrections.set(chosen.term, { asked, distance: chosen.distance });
    statistics.documentFrequency.set(chosen.term, counted.get(chosen.term)!);
  }
  return corrections;
}

/**
 * A memory recall's candidates, and its typos: a term no candidate holds (and that may be
 * corrected) is read as the nearest term of the dataset's vocabulary that memories of the
 * view hold, among the TYPO_CHOICES nearest; their memories join the candidates. One lookup
 * and one more read when a term is missing.
 */
async function memoriesWithTypos(
  ctx: Pick<RecallDeps, 'store'>,
  tenant: Tenant,
  terms: readonly string[],
  view: MemoryRecallView,
): Promise<{ candidates: MemoryDoc[]; inView: number; corrections: Map<string, Correction> }> {
  const first = await memoryCandidates(ctx.store, tenant, terms, view);
  const corrections = new Map<string, Correction>();
  const held = new Set(first.candidates.flatMap((m) => m.recallTerms));
  const absent = terms.filter((t) => !held.has(t) && typoDistanceFor(t) > 0);
  if (absent.length === 0) return { ...first, corrections };
  const near = await termsNear(ctx.store, tenant, absent);
  const choices = absent.map(
    (asked) => [asked, nearestTerms(asked, near).slice(0, TYPO_CHOICES)] as const,
  );
  const considered = [...new Set(choices.flatMap(([, n]) => n.map((c) => c.term)))].filter(
    (t) => !terms.includes(t),
  );
  if (considered.length === 0) return { ...first, corrections };
  const more = await memoryCandidates(ctx.store, tenant, considered, view);
  const moreHeld = new Set(more.candidates.flatMap((m) => m.recallTerms));
  for (const [asked, nearest] of choices) {
    const chosen = nearest.find((c) => moreHeld.has(c.term) && !terms.includes(c.term));
    if (chosen && !corrections.has(chosen.term)) {
      corrections.set(chosen.term, { asked, distance: chosen.distance });
    }
  }
  const byId = new Map(first.candidates.map((m) => [m.memoryId, m]));
  for (const m of more.candidates) {
    if (m.recallTerms.some((t) => corrections.has(t))) byId.set(m.memoryId, m);
  }
  return { candidates: [...byId.values()], inView: first.inView, corrections };
}
