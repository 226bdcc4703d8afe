import type { RequestContext } from '../context.js';
import {
  type Candidate,
  factFactor,
  memoryFactor,
  type Ranked,
  rank,
  recallContext,
} from '../domain/recall.js';
import { factText } from '../domain/recallTerms.js';
import type { FactView, MemoryDoc } from '../store/documents.js';
import { factCandidates, markMemoriesUsed, memoryCandidates } from '../store/recall.js';
import type { Tenant } from '../store/tenant.js';
import { tenantOfDataset } from '../store/tenant.js';
import {
  DEFAULT_RECALL_SIZE,
  MAX_RECALL_SIZE,
  recallFirstSchema,
  recallQuerySchema,
} from './args.js';
import { builder } from './builder.js';
import { listCost, QUERY_COST } from './cost.js';
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

function recallOf(
  ctx: Pick<RequestContext, 'store' | 'now' | 'observed'>,
  tenant: Tenant,
  args: { query: string; first: number; asOf: Date | null },
): RecallShape {
  const at = args.asOf ?? ctx.now;
  return {
    facts: once(async () => {
      const { candidates, inView } = await factCandidates(ctx.store, tenant, args.query, at);
      const scored: Candidate<FactView>[] = candidates.map((f) => ({
        item: f,
        text: factText(f),
        factor: factFactor(f, at),
        time: f.validAt,
        id: f.factId,
      }));
      return rank(args.query, scored, inView, args.first);
    }),
    memories: once(async () => {
      const view = { asOf: args.asOf, now: ctx.now };
      const { candidates, inView } = await memoryCandidates(ctx.store, tenant, args.query, view);
      const scored: Candidate<MemoryDoc>[] = candidates.map((m) => ({
        item: m,
        text: m.text,
        factor: memoryFactor(m),
        time: m.createdAt,
        id: m.memoryId,
      }));
      const ranked = rank(args.query, scored, inView, args.first);
      if (args.asOf === null) {
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
  }),
});

const RecallRef = builder.objectRef<RecallShape>('Recall').implement({
  description: 'What a dataset holds about a query, best first.',
  authScopes: { read: true },
  fields: (t) => ({
    facts: t.field({
      type: [RecalledFactRef],
      description: `Facts live at the instant recalled, sharing a term with the query, best first: at most \`first\` (at most ${MAX_RECALL_SIZE}).`,
      complexity: listCost(MAX_RECALL_SIZE, true),
      resolve: (r) => r.facts(),
    }),
    memories: t.field({
      type: [RecalledMemoryRef],
      description: `Memories of the live view at the instant recalled (archived left out), sharing a term with the query, best first: at most \`first\` (at most ${MAX_RECALL_SIZE}). Recalled now (no asOf), they get lastUsedAt.`,
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
    description:
      'Ranked recall: the facts and memories that best match a free-text query (BM25 over stemmed words, English stop words dropped; README, "Ranked recall"). Facts: live at asOf (default now) on both axes. A query of stop words only recalls nothing.',
    args: {
      query: t.arg.string({ required: true, validate: recallQuerySchema }),
      first: t.arg.int({ defaultValue: DEFAULT_RECALL_SIZE, validate: recallFirstSchema }),
      asOf: t.arg({ type: 'DateTime' }),
    },
    complexity: { field: QUERY_COST },
    resolve: (ds, args, ctx) =>
      recallOf(ctx, tenantOfDataset(ds), {
        query: args.query,
        first: args.first ?? DEFAULT_RECALL_SIZE,
        asOf: args.asOf ?? null,
      }),
  }),
}));
