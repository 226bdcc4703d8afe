import type { RequestContext } from '../context.js';
import { resolveTemporalSelection } from '../domain/factState.js';
import { type TimeInQuestion, timeInQuestion } from '../domain/questionTime.js';
import {
  type Candidate,
  COMMON_TERM_SHARE,
  type Correction,
  candidateTerms,
  factFactors,
  HOP_DISCOUNT,
  HOP_SOURCES,
  hopsScored,
  MIN_VIEW_FOR_COMMON,
  memoryFactors,
  NAMED_ENTITY,
  nameIsCommon,
  namesIn,
  ordered,
  QUOTE_WEIGHT,
  questionTerms,
  type Ranked,
  type RecallExplanation,
  type RecallFactor,
  rank,
  recallContext,
  scoreCandidates,
  type TermStatistics,
  type TermWeight,
  topicsAmong,
} from '../domain/recall.js';
import { factText, recallTerms } from '../domain/recallTerms.js';
import { nearestTerms, TYPO_DISCOUNT, typoDistanceFor } from '../domain/typos.js';
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
import { tenantOfDataset } from '../store/tenant.js';
import { termsNear } from '../store/vocabulary.js';
import {
  asOfArg,
  DEFAULT_EXPLAINED_TERMS,
  DEFAULT_RECALL_SIZE,
  explainedTermsSchema,
  knownAtArg,
  MAX_EXPLAINED_TERMS,
  MAX_RECALL_SIZE,
  recallFirstSchema,
  recallQuerySchema,
  validAtArg,
} from './args.js';
import { builder } from './builder.js';
import { boundOf, listCost, QUERY_COST } from './cost.js';
import { DatasetRef } from './dataset.js';
import { FactRef } from './fact.js';
import { MemoryRef } from './memory.js';

/**
 * Ranked recall (domain/recall.ts ranks, store/recall.ts reads): `Dataset.recall` returns
 * a Recall whose facts and memories are each read only when selected, so a client (or the
 * REST route) asking for facts alone neither reads nor stamps memories.
 */

/** The time the question named, and whether it was applied (explicit instants win over it). */
type RecallTime = TimeInQuestion & { applied: boolean };

/** Why an item ranked where it did, and the time of the question it was recalled for. */
type ExplainedRecall = RecallExplanation & { time: RecallTime | null };

interface RecallShape {
  time: RecallTime | null;
  facts(): Promise<Explained<FactView>[]>;
  memories(): Promise<Explained<MemoryDoc>[]>;
}

type Explained<T> = Omit<Ranked<T>, 'explanation'> & { explanation: ExplainedRecall };

/** Runs `read` once, on first use. */
function once<T>(read: () => Promise<T>): () => Promise<T> {
  let result: Promise<T> | null = null;
  return () => {
    result ??= read();
    return result;
  };
}

/** A recall's arguments: the query, how many of each kind, and the instants asked for. */
interface RecallArgs {
  query: string;
  first: number;
  asOf: Date | null;
  validAt: Date | null;
  knownAt: Date | null;
}

function recallOf(
  ctx: Pick<RequestContext, 'store' | 'now' | 'observed'>,
  tenant: Tenant,
  args: RecallArgs,
): RecallShape {
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
      return explained(ordered([...scored, ...hopsScored(hops, scored)], args.first));
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
      const ranked = explained(rank(words, scored, inView, args.first, corrections));
      if (!replay) {
        const used = ranked.map((r) => r.item);
        // Metadata of the read: a failed stamp must not fail the answer it belongs to; the
        // edge logs it as a warning.
        await markMemoriesUsed(ctx.store, tenant, used, ctx.now).catch((error: unknown) => {
          ctx.observed.problems.push(
            `lastUsedAt not stamped: ${error instanceof Error ? error.message : String(error)}`,
          );
        });
        for (const m of used) m.lastUsedAt = ctx.now;
      }
      return ranked;
    }),
  };
}

/** A recalled item's factors: a fact's confidence and recency, a memory's three boosts. */
const MAX_RECALL_FACTORS = 3;

const RecallTermFieldRef = builder
  .objectRef<TermWeight['fields'][number]>('RecallTermField')
  .implement({
    description: 'How often a query term occurs in one field of a recalled item (BM25F).',
    authScopes: { read: true },
    fields: (t) => ({
      field: t.exposeString('field', { description: '`statement`, `quote` or `text`.' }),
      termFrequency: t.exposeInt('termFrequency'),
    }),
  });

const RecallTermWeightRef = builder.objectRef<TermWeight>('RecallTermWeight').implement({
  description: "A query term found in a recalled item, and what it adds to the item's BM25 score.",
  authScopes: { read: true },
  fields: (t) => ({
    term: t.exposeString('term', {
      description: 'The analyzed term (lower-cased, stemmed: `interest` for "interested").',
    }),
    weight: t.exposeFloat('weight', { description: "The term's share of `bm25`." }),
    termFrequency: t.exposeInt('termFrequency', {
      description: "How often the term occurs in the item's analyzed words, all fields together.",
    }),
    fields: t.field({
      type: [RecallTermFieldRef],
      description: `Each field that holds the term: a fact's \`statement\` (weight 1) and \`quote\`, its source quote (weight ${QUOTE_WEIGHT}); a memory's \`text\`.`,
      // A fact has two fields, a memory one: computed with the ranking.
      complexity: listCost(2, false),
      resolve: (w) => w.fields,
    }),
    documentFrequency: t.exposeInt('documentFrequency', {
      description:
        "How many documents hold the term: for a fact, the dataset's facts recorded by K (counted from the index); for a memory, the candidates.",
    }),
    idf: t.exposeFloat('idf', {
      description: 'ln(1 + (N − documentFrequency + 0.5) / (documentFrequency + 0.5)).',
    }),
    correctedFrom: t.exposeString('correctedFrom', {
      nullable: true,
      description: `The question's word this term was matched as: a typo (no fact holds the word as written) within 1 edit of a term for a word of 5 to 7 characters, 2 for longer; never for a shorter word or one with a digit. The term then weighs ${TYPO_DISCOUNT} of what it would. Null when asked as written.`,
    }),
    common: t.exposeBoolean('common', {
      description: `Held by more than ${COMMON_TERM_SHARE * 100} % of the N documents counted (at least ${MIN_VIEW_FOR_COMMON}): it adds its weight, but an item whose only matching terms are common is not recalled.`,
    }),
  }),
});

const RecallTimeRef = builder.objectRef<RecallTime>('RecallTime').implement({
  description:
    'The time a recall question named ("in 2025", "last week", "since March"), read relative to the instant recalled at (now, or knownAt), in UTC: a window on valid time. Recall then answers what was true at any point of it, as known at knownAt (default now). Its words do not count as words of the question.',
  authScopes: { read: true },
  fields: (t) => ({
    phrase: t.exposeString('phrase', { description: 'The words read as time.' }),
    validFrom: t.expose('from', {
      type: 'DateTime',
      nullable: true,
      description: 'Where the window begins (null: unbounded, "before June").',
    }),
    validUntil: t.expose('until', {
      type: 'DateTime',
      nullable: true,
      description: 'Where it ends, exclusive (null: unbounded, "since March").',
    }),
    applied: t.exposeBoolean('applied', {
      description:
        'False when validAt or asOf was given: an explicit instant wins over the question.',
    }),
  }),
});

const RecallFactorRef = builder.objectRef<RecallFactor>('RecallFactor').implement({
  description:
    'A factor the BM25 score is multiplied by: a fact\'s `confidence` and `recency` (and `entity` when its subject or object is an entity the question names), a memory\'s `importance`, `salience` and `pinned`; a fact one hop away has `hop` alone (docs/RECALL.md, "Ranked recall").',
  authScopes: { read: true },
  fields: (t) => ({
    name: t.exposeString('name'),
    value: t.exposeFloat('value'),
  }),
});

const RecallExplanationRef = builder.objectRef<ExplainedRecall>('RecallExplanation').implement({
  description:
    "Why an item ranked where it did: `score` = `bm25` (the sum of its terms' weights) × every factor; `relevanceScore` is `score` over the best item's.",
  authScopes: { read: true },
  fields: (t) => ({
    terms: t.field({
      type: [RecallTermWeightRef],
      description: `The query's terms found in the item, the largest weight first (ties: the query's order): the first \`first\` (at most ${MAX_EXPLAINED_TERMS}).`,
      args: {
        first: t.arg.int({ defaultValue: DEFAULT_EXPLAINED_TERMS, validate: explainedTermsSchema }),
      },
      // Computed with the ranking, no read of its own: the objects it can hold.
      complexity: (args) =>
        listCost(boundOf(args.first, DEFAULT_EXPLAINED_TERMS, MAX_EXPLAINED_TERMS), false),
      resolve: (e, args) => e.terms.slice(0, args.first ?? DEFAULT_EXPLAINED_TERMS),
    }),
    bm25: t.exposeFloat('bm25'),
    factors: t.field({
      type: [RecallFactorRef],
      description:
        'At most three: a fact has two or three (one, `hop`, one hop away), a memory two or three.',
      complexity: listCost(MAX_RECALL_FACTORS, false),
      resolve: (e) => [...e.factors],
    }),
    score: t.exposeFloat('score'),
    via: t.exposeID('via', {
      nullable: true,
      description: `A fact brought in one hop from an entity the question names (it mentions another entity of that entity's facts): the factId of the fact that links it. Its score is ${HOP_DISCOUNT} × that fact's (factor \`hop\`).`,
    }),
    time: t.field({
      type: RecallTimeRef,
      nullable: true,
      description: 'The time the question named (the same on every item; null: none).',
      resolve: (e) => e.time,
    }),
  }),
});

const RecalledFactRef = builder.objectRef<Explained<FactView>>('RecalledFact').implement({
  description: 'A fact recall found, with how well it matches the query.',
  authScopes: { read: true },
  fields: (t) => ({
    relevanceScore: t.float({
      description: "In (0, 1]: this fact's score over the best candidate's (docs/RECALL.md).",
      resolve: (r) => r.relevanceScore,
    }),
    fact: t.field({ type: FactRef, resolve: (r) => r.item }),
    explanation: t.field({ type: RecallExplanationRef, resolve: (r) => r.explanation }),
  }),
});

const RecalledMemoryRef = builder.objectRef<Explained<MemoryDoc>>('RecalledMemory').implement({
  description: 'A memory recall found, with how well it matches the query.',
  authScopes: { read: true },
  fields: (t) => ({
    relevanceScore: t.float({
      description:
        "In (0, 1]: this memory's score over the best candidate's, importance, salience and pinned included (docs/RECALL.md).",
      resolve: (r) => r.relevanceScore,
    }),
    memory: t.field({ type: MemoryRef, resolve: (r) => r.item }),
    explanation: t.field({ type: RecallExplanationRef, resolve: (r) => r.explanation }),
  }),
});

const RecallRef = builder.objectRef<RecallShape>('Recall').implement({
  description: 'What a dataset holds about a query, best first.',
  authScopes: { read: true },
  fields: (t) => ({
    time: t.field({
      type: RecallTimeRef,
      nullable: true,
      description: 'The time the question named, as recall read it (null: none).',
      resolve: (r) => r.time,
    }),
    facts: t.field({
      type: [RecalledFactRef],
      description: `Facts that match the instants recalled (recorded by K, not invalidated by K, valid at T), sharing a term with the query, best first: at most \`first\` (at most ${MAX_RECALL_SIZE}).`,
      complexity: listCost(MAX_RECALL_SIZE, true),
      resolve: (r) => r.facts(),
    }),
    memories: t.field({
      type: [RecalledMemoryRef],
      description: `Memories of the view recalled (archived left out), sharing a term with the query, best first: at most \`first\` (at most ${MAX_RECALL_SIZE}). Recalled now (no instant asked), they get lastUsedAt.`,
      complexity: listCost(MAX_RECALL_SIZE, true),
      resolve: (r) => r.memories(),
    }),
    context: t.string({
      description:
        'Prompt-ready text: one line per recalled fact (what holds, since when, until when), then one per recalled memory.',
      resolve: async (r) => {
        const [facts, memories] = await Promise.all([r.facts(), r.memories()]);
        return recallContext(
          facts.map((f) => f.item),
          memories.map((m) => m.item),
        );
      },
    }),
  }),
});

builder.objectFields(DatasetRef, (t) => ({
  recall: t.field({
    type: RecallRef,
    description: [
      'Ranked recall: the facts and memories that best match a free-text query (BM25 over stemmed words, English stop words dropped; docs/RECALL.md, "Ranked recall"). A query of stop words only recalls nothing.',
      'The instants mean what they mean on `facts`: facts recorded by `knownAt` (K), not invalidated by then, and valid at `validAt` (T), each defaulting to now; `asOf` sets both. With any of them, recall is replayed: "what would recall have answered when only what was known at K was known?": the BM25 statistics count that view, memories are taken as they were at K (their later versions undone), created by K, valid at T and not archived by K, and nothing is stamped. Without them, memories come from the live view now and get `lastUsedAt`.',
      'A time the question names ("in 2025", "last week", "since March"; `time` says how it was read) is a window on valid time: what was true at any point of it, as known at K, replayed as above; `validAt` or `asOf` win over it. A term held by most of the view (`common`) cannot recall an item alone: a question that shares nothing else with the dataset recalls nothing.',
    ].join('\n'),
    args: {
      query: t.arg.string({ required: true, validate: recallQuerySchema }),
      first: t.arg.int({ defaultValue: DEFAULT_RECALL_SIZE, validate: recallFirstSchema }),
      asOf: t.arg(asOfArg),
      validAt: t.arg(validAtArg),
      knownAt: t.arg(knownAtArg),
    },
    complexity: { field: QUERY_COST },
    resolve: (ds, args, ctx) =>
      recallOf(ctx, tenantOfDataset(ds), {
        query: args.query,
        first: args.first ?? DEFAULT_RECALL_SIZE,
        asOf: args.asOf ?? null,
        validAt: args.validAt ?? null,
        knownAt: args.knownAt ?? null,
      }),
  }),
}));

/** How many terms near a typo are counted before one is taken (the nearest first). */
const TYPO_CHOICES = 3;

/**
 * The question's typos: each of its terms that no fact recorded by K holds (and that may be
 * corrected: domain/typos.ts) is read as the nearest term of the dataset's vocabulary that
 * one does, among the TYPO_CHOICES nearest; their counts join `statistics`. One lookup when
 * a term is missing, two counts per term considered.
 */
async function typosRead(
  ctx: Pick<RequestContext, 'store'>,
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
  ctx: Pick<RequestContext, 'store'>,
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
