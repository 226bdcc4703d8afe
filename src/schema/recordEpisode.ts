import { z } from 'zod';
import { tenantOf } from '../context.js';
import { normalizeUuid } from '../domain/ids.js';
import { ENTITY_TYPES, entityKey, predicateKey } from '../domain/names.js';
import { factText } from '../domain/recallTerms.js';
import { embedWritten, vectorsToStore } from '../recall/meaning.js';
import { eraseEpisode } from '../store/erasure.js';
import {
  contentEpisodeId,
  type RecordedEpisode,
  type RecordOutcome,
  recordEpisode,
  type EpisodeInput as StoreEpisodeInput,
} from '../store/recordEpisode.js';
import { datasetArg, EPISODE_ID, uuidSchema } from './args.js';
import { builder } from './builder.js';
import { listCost, OWN_QUERY_OBJECT_COST } from './cost.js';
import { EntityTypeEnum } from './entity.js';
import { EpisodeRef } from './episode.js';
import { ErasureCountsRef } from './erasure.js';
import { FactRef } from './fact.js';
import { mutationById } from './mutationById.js';
import { runStoreWrite } from './storeErrors.js';

/**
 * The extraction pipeline's write path: `recordEpisode` (write scope) and `eraseEpisode`
 * (admin). The invariants (idempotent by episodeId, safe without transactions) live in
 * store/recordEpisode.ts; this file validates the input with zod before anything is
 * written and shapes the answer.
 */

/**
 * At most this many facts, entities, and `supersedes` per fact in one episode: a maximal
 * episode (every fact replacing one) stays inside the default DB_TIMEOUT_MS on the
 * embedded store (docs/PERFORMANCE.md, "A maximal episode"); a larger batch is several
 * episodes, or the JSONL import.
 */
export const MAX_ITEMS = 250;
const text = (max: number) =>
  z.string().trim().min(1, 'must not be empty').max(max, `must be at most ${max} characters`);
const uuid = uuidSchema.transform(normalizeUuid);

/**
 * The whole input's rules in one zod schema, so every problem is reported at once with
 * its path (input.facts.2.confidence: ...), and the resolver gets the normalised input.
 */
const recordEpisodeSchema = z
  .object({
    episode: z.object({
      episodeId: uuid.nullish(),
      occurredAt: z.date(),
      source: z.string().max(200, 'must be at most 200 characters'),
      content: z.string().max(100_000, 'must be at most 100000 characters'),
    }),
    entities: z
      .array(z.object({ name: text(500), type: z.enum(ENTITY_TYPES) }))
      .max(MAX_ITEMS, `must list at most ${MAX_ITEMS} entities`)
      .nullish(),
    facts: z
      .array(
        z.object({
          subject: text(1000),
          predicate: text(1000),
          object: text(1000),
          objectIsEntity: z.boolean().nullish(),
          confidence: z
            .number()
            .min(0, 'must be between 0 and 1')
            .max(1, 'must be between 0 and 1'),
          sourceQuote: z.string().max(10_000, 'must be at most 10000 characters').nullish(),
          validAt: z.date().nullish(),
          validUntil: z.date().nullish(),
          supersedes: z
            .array(uuid)
            .max(MAX_ITEMS, `must list at most ${MAX_ITEMS} facts`)
            .nullish(),
          replaceExisting: z.boolean().nullish(),
        }),
      )
      .max(MAX_ITEMS, `must list at most ${MAX_ITEMS} facts`)
      .nullish(),
  })
  .superRefine((input, ctx) => {
    // A fact is valid from validAt (default: when the episode occurred) until validUntil.
    const firstAt = new Map<string, number>();
    for (const [i, f] of (input.facts ?? []).entries()) {
      const from = f.validAt ?? input.episode.occurredAt;
      if (f.validUntil && f.validUntil <= from) {
        ctx.addIssue({
          code: 'custom',
          path: ['facts', i, 'validUntil'],
          message: `must be after validAt (${from.toISOString()})`,
        });
      }
      // A replaceExisting fact is the one value of its subject and predicate: another fact
      // of the episode with them, from the same instant, contradicts it.
      const key = JSON.stringify([entityKey(f.subject), predicateKey(f.predicate), from.getTime()]);
      const first = firstAt.get(key);
      if (first === undefined) firstAt.set(key, i);
      else if (f.replaceExisting || input.facts![first]!.replaceExisting) {
        ctx.addIssue({
          code: 'custom',
          path: ['facts', i, 'replaceExisting'],
          message: `facts.${first} has the same subject, predicate and validAt, and replaceExisting makes it the one value there: send one of them, or give them different validAt`,
        });
      }
    }
  })
  .transform((input): Omit<StoreEpisodeInput, 'episodeId'> & { episodeId: string | null } => ({
    episodeId: input.episode.episodeId ?? null,
    occurredAt: input.episode.occurredAt,
    source: input.episode.source,
    content: input.episode.content,
    entities: input.entities ?? [],
    facts: (input.facts ?? []).map((f) => ({
      subject: f.subject,
      predicate: f.predicate,
      object: f.object,
      objectIsEntity: f.objectIsEntity ?? false,
      confidence: f.confidence,
      sourceQuote: f.sourceQuote ?? null,
      validAt: f.validAt ?? input.episode.occurredAt,
      validUntil: f.validUntil ?? null,
      supersedes: f.supersedes ?? [],
      replaceExisting: f.replaceExisting ?? false,
    })),
  }));

const EpisodeInputRef = builder.inputType('EpisodeInput', {
  fields: (t) => ({
    episodeId: t.id({
      description:
        'A UUID. Without one the id is derived from the dataset, source, occurredAt and content, so the same episode sent twice is recorded once either way (the same text at the same instant with other facts is then a CONFLICT: give each its own id).',
    }),
    occurredAt: t.field({ type: 'DateTime', required: true }),
    source: t.string({
      required: true,
      description: 'Where the episode came from (e.g. chat); at most 200 characters.',
    }),
    content: t.string({ required: true, description: 'The text; at most 100000 characters.' }),
  }),
});

const EntityInputRef = builder.inputType('EntityInput', {
  fields: (t) => ({
    name: t.string({ required: true, description: 'Stored lower-cased; 1-500 characters.' }),
    type: t.field({ type: EntityTypeEnum, required: true }),
  }),
});

const FactInputRef = builder.inputType('FactInput', {
  fields: (t) => ({
    subject: t.string({ required: true }),
    predicate: t.string({ required: true }),
    object: t.string({ required: true }),
    objectIsEntity: t.boolean({ defaultValue: false }),
    confidence: t.float({ required: true, description: 'Between 0 and 1.' }),
    sourceQuote: t.string(),
    validAt: t.field({ type: 'DateTime', description: "Defaults to the episode's occurredAt." }),
    validUntil: t.field({ type: 'DateTime', description: 'After validAt; null: open-ended.' }),
    supersedes: t.idList({
      defaultValue: [],
      description: 'Facts (factIds of this dataset) this fact replaces.',
    }),
    replaceExisting: t.boolean({
      defaultValue: false,
      description:
        'This fact is the one value of its subject and predicate at a time: it supersedes the believed facts of the pair that begin before it and reach past its validAt, and ends (validUntil) where a later one begins. Valid time decides, whatever order the writes arrive in (docs/TEMPORAL_MODEL.md).',
    }),
  }),
});

const RecordEpisodeInputRef = builder.inputType('RecordEpisodeInput', {
  description: `At most ${MAX_ITEMS} entities and ${MAX_ITEMS} facts.`,
  fields: (t) => ({
    episode: t.field({ type: EpisodeInputRef, required: true }),
    entities: t.field({ type: [EntityInputRef], defaultValue: [] }),
    facts: t.field({ type: [FactInputRef], defaultValue: [] }),
  }),
});

const RecordOutcomeEnum = builder.enumType('RecordOutcome', {
  description: 'What a recordEpisode call did.',
  values: {
    RECORDED: { value: 'recorded', description: 'This call recorded the episode.' },
    COMPLETED: {
      value: 'completed',
      description:
        'An earlier call (or one running at the same time) had begun recording this episode and not finished; this call finished it. What it stored carries the time it became visible.',
    },
    ALREADY_RECORDED: {
      value: 'alreadyRecorded',
      description: 'An earlier call recorded the whole episode; nothing changed.',
    },
  } as const satisfies Record<string, { value: RecordOutcome; description: string }>,
});

const RecordEpisodePayload = builder.objectRef<RecordedEpisode>('RecordEpisodePayload').implement({
  authScopes: { authenticated: true },
  fields: (t) => ({
    episode: t.field({ type: EpisodeRef, resolve: (p) => p.episode }),
    facts: t.field({
      type: [FactRef],
      description: 'The stored facts, in input order.',
      // Already in memory: charged as the objects an episode can hold.
      complexity: listCost(MAX_ITEMS, false),
      resolve: (p) => p.facts,
    }),
    superseded: t.field({
      type: [FactRef],
      description: "The facts this episode's facts superseded.",
      complexity: listCost(MAX_ITEMS, false),
      resolve: (p) => p.superseded,
    }),
    supersededIds: t.idList({ resolve: (p) => p.superseded.map((f) => f.factId) }),
    alreadyRecorded: t.boolean({
      description:
        'True only when an earlier call had recorded the whole episode (a retry of a completed call): nothing changed. A call that finished an interrupted one answers false (outcome COMPLETED).',
      resolve: (p) => p.outcome === 'alreadyRecorded',
    }),
    outcome: t.field({ type: RecordOutcomeEnum, resolve: (p) => p.outcome }),
  }),
});

builder.mutationField('recordEpisode', (t) =>
  t.withAuth({ write: true }).field({
    type: RecordEpisodePayload,
    description:
      'Records an episode with the entities it mentions and the facts extracted from it, superseding the facts they replace. Idempotent by episode.episodeId (given, or derived from the episode): a retry returns the same result and changes nothing, and one after WRITE_OUTCOME_UNKNOWN completes what the first attempt left (outcome says which). Needs the write scope.',
    args: {
      dataset: t.arg.string(datasetArg),
      input: t.arg({ type: RecordEpisodeInputRef, required: true }).validate(recordEpisodeSchema),
    },
    complexity: OWN_QUERY_OBJECT_COST,
    resolve: async (_root, { dataset, input }, ctx) => {
      const tenant = tenantOf(ctx, dataset);
      // The facts' vectors first, so their documents are stored with them.
      const vectors = await vectorsToStore(ctx, input.facts.map(factText));
      const recorded = await runStoreWrite(ctx.store, (store) =>
        recordEpisode(
          store,
          tenant,
          { ...input, episodeId: input.episodeId ?? contentEpisodeId(tenant, input) },
          // The request's instant, so the payload's states (at ctx.now) reflect this write.
          ctx.now,
          vectors ? { vectors } : {},
        ),
      );
      await embedWritten(ctx, tenant);
      return recorded;
    },
  }),
);

mutationById('eraseEpisode', {
  scope: 'admin',
  type: ErasureCountsRef,
  description:
    'Physically removes an episode and what only it produced (its facts, entities nothing else mentions), restoring facts it superseded to live. Idempotent; audited. Needs the admin scope.',
  id: EPISODE_ID,
  idDescription: 'The episode to erase.',
  write: (store, tenant, episodeId, ctx) =>
    eraseEpisode(store, tenant, episodeId, ctx.auth, ctx.now),
});
