import type { RequestContext } from '../context.js';
import { resolveTemporalSelection } from '../domain/factState.js';
import {
  type Candidate,
  factFactors,
  memoryFactors,
  type Ranked,
  type RecallExplanation,
  type RecallFactor,
  rank,
  recallContext,
  type TermWeight,
} from '../domain/recall.js';
import { factText } from '../domain/recallTerms.js';
import type { FactView, MemoryDoc } from '../store/documents.js';
import {
  factCandidates,
  markMemoriesUsed,
  memoryCandidates,
  type RecallInstants,
} from '../store/recall.js';
import type { Tenant } from '../store/tenant.js';
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

/**
 * Ranked recall (domain/recall.ts ranks, store/recall.ts reads): `Dataset.recall` returns
 * a Recall whose facts and memories are each read only when selected, so a client (or the
 * REST route) asking for facts alone neither reads nor stamps memories.
 */

interface RecallShape {
  facts(): Promise<Ranked<FactView>[]>;
  memories(): Promise<Ranked<MemoryDoc>[]>;
}

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
  // Any instant asked for makes this a look at the store from then, not an agent's recall
  // now: it reads memories as they were at K and stamps nothing.
  const replay = args.asOf !== null || args.validAt !== null || args.knownAt !== null;
  return {
    facts: once(async () => {
      const { candidates, inView } = await factCandidates(ctx.store, tenant, args.query, at);
      const scored: Candidate<FactView>[] = candidates.map((f) => ({
        item: f,
        text: factText(f),
        factors: factFactors(f, at.validAt),
        time: f.validAt,
        id: f.factId,
      }));
      return rank(args.query, scored, inView, args.first);
    }),
    memories: once(async () => {
      const { candidates, inView } = await memoryCandidates(
        ctx.store,
        tenant,
        args.query,
        replay ? { kind: 'replay', ...at } : { kind: 'live', now: ctx.now },
      );
      const scored: Candidate<MemoryDoc>[] = candidates.map((m) => ({
        item: m,
        text: m.text,
        factors: memoryFactors(m),
        time: m.createdAt,
        id: m.memoryId,
      }));
      const ranked = rank(args.query, scored, inView, args.first);
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

const RecallTermWeightRef = builder.objectRef<TermWeight>('RecallTermWeight').implement({
  description: "A query term found in a recalled item, and what it adds to the item's BM25 score.",
  authScopes: { read: true },
  fields: (t) => ({
    term: t.exposeString('term', {
      description: 'The analyzed term (lower-cased, stemmed: `interest` for "interested").',
    }),
    weight: t.exposeFloat('weight', { description: "The term's share of `bm25`." }),
    termFrequency: t.exposeInt('termFrequency', {
      description: "How often the term occurs in the item's analyzed words.",
    }),
    documentFrequency: t.exposeInt('documentFrequency', {
      description: 'How many candidates of the same kind hold the term.',
    }),
    idf: t.exposeFloat('idf', {
      description: 'ln(1 + (N − documentFrequency + 0.5) / (documentFrequency + 0.5)).',
    }),
  }),
});

const RecallFactorRef = builder.objectRef<RecallFactor>('RecallFactor').implement({
  description:
    'A factor the BM25 score is multiplied by: a fact\'s `confidence` and `recency`, a memory\'s `importance`, `salience` and `pinned` (README, "Ranked recall").',
  authScopes: { read: true },
  fields: (t) => ({
    name: t.exposeString('name'),
    value: t.exposeFloat('value'),
  }),
});

const RecallExplanationRef = builder.objectRef<RecallExplanation>('RecallExplanation').implement({
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
      description: 'At most three: a fact has two, a memory two or three.',
      complexity: listCost(MAX_RECALL_FACTORS, false),
      resolve: (e) => [...e.factors],
    }),
    score: t.exposeFloat('score'),
  }),
});

const RecalledFactRef = builder.objectRef<Ranked<FactView>>('RecalledFact').implement({
  description: 'A fact recall found, with how well it matches the query.',
  authScopes: { read: true },
  fields: (t) => ({
    relevanceScore: t.float({
      description:
        "In (0, 1]: this fact's score over the best candidate's (README, Ranked recall).",
      resolve: (r) => r.relevanceScore,
    }),
    fact: t.field({ type: FactRef, resolve: (r) => r.item }),
    explanation: t.field({ type: RecallExplanationRef, resolve: (r) => r.explanation }),
  }),
});

const RecalledMemoryRef = builder.objectRef<Ranked<MemoryDoc>>('RecalledMemory').implement({
  description: 'A memory recall found, with how well it matches the query.',
  authScopes: { read: true },
  fields: (t) => ({
    relevanceScore: t.float({
      description:
        "In (0, 1]: this memory's score over the best candidate's, importance, salience and pinned included (README, Ranked recall).",
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
      'Ranked recall: the facts and memories that best match a free-text query (BM25 over stemmed words, English stop words dropped; README, "Ranked recall"). A query of stop words only recalls nothing.',
      'The instants mean what they mean on `facts`: facts recorded by `knownAt` (K), not invalidated by then, and valid at `validAt` (T), each defaulting to now; `asOf` sets both. With any of them, recall is replayed: "what would recall have answered when only what was known at K was known?": the BM25 statistics count that view, memories are taken as they were at K (their later versions undone), created by K, valid at T and not archived by K, and nothing is stamped. Without them, memories come from the live view now and get `lastUsedAt`.',
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
