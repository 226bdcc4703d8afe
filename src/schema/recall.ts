import {
  COMMON_TERM_SHARE,
  FUSION_K,
  HOP_DISCOUNT,
  MEANING_MARGIN,
  MIN_VIEW_FOR_COMMON,
  QUOTE_WEIGHT,
  type RecallFactor,
  type RecallLeg,
  recallContext,
  type TermWeight,
} from '../domain/recall.js';
import { TYPO_DISCOUNT } from '../domain/typos.js';
import {
  type Explained,
  type ExplainedRecall,
  type RecallShape,
  type RecallTime,
  recall,
} from '../recall/recall.js';
import type { FactView, MemoryDoc } from '../store/documents.js';
import { tenantOfDataset } from '../store/tenant.js';
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

/** Recall's types and its root field; the pipeline is the recall service (src/recall/). */

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

const RecallLegRef = builder.enumType('RecallLeg', {
  description: 'A leg of recall that found an item (docs/RECALL.md).',
  values: {
    WORDS: {
      value: 'words',
      description: 'Its terms: BM25F over the statement and quote, or the text.',
    },
    ENTITY: {
      value: 'entity',
      description:
        'One hop from an entity the question names (`via` names the fact that links it).',
    },
    MEANING: {
      value: 'meaning',
      description: `Its vector (recall by meaning): the cosine of its text's and the question's is at least ${MEANING_MARGIN} above the question's mean cosine to the dataset.`,
    },
  } as const,
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
    score: t.exposeFloat('score', {
      description:
        "The words leg's score: `bm25` × every factor (0 for an item only its meaning found).",
    }),
    foundBy: t.field({
      type: [RecallLegRef],
      description: 'The legs that found the item.',
      complexity: listCost(2, false),
      resolve: (e): RecallLeg[] => e.meaning?.legs ?? [e.via ? 'entity' : 'words'],
    }),
    similarity: t.float({
      nullable: true,
      description:
        "The cosine of the item's text's vector and the question's, in [-1, 1]; null when recall by meaning is off (EMBEDDINGS=off) or the item has no vector yet.",
      resolve: (e) => e.meaning?.similarity ?? null,
    }),
    fusedScore: t.float({
      nullable: true,
      description: `With recall by meaning: what the item ranked by, the sum over the legs that found it of 1 / (${FUSION_K} + its rank in that leg); \`relevanceScore\` is it over the best item's. Null when recall by meaning is off: the item ranked by \`score\`.`,
      resolve: (e) => e.meaning?.fused ?? null,
    }),
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
      recall(
        { store: ctx.store, now: ctx.now, problems: ctx.observed.problems, meaning: ctx.meaning },
        tenantOfDataset(ds),
        {
          query: args.query,
          first: args.first ?? DEFAULT_RECALL_SIZE,
          asOf: args.asOf ?? null,
          validAt: args.validAt ?? null,
          knownAt: args.knownAt ?? null,
        },
      ),
  }),
}));
