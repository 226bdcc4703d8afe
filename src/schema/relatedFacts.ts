import {
  asOfArg,
  DEFAULT_NESTED_LIST_SIZE,
  knownAtArg,
  MAX_NESTED_LIST_SIZE,
  nestedFirstArg,
  validAtArg,
} from './args.js';
import { builder } from './builder.js';
import { nestedListComplexity } from './cost.js';
import { EntityRef, entityFields } from './entity.js';
import { EpisodeRef, episodeFields } from './episode.js';
import { FactRef } from './fact.js';
import { selectedReads } from './selectedReads.js';

/**
 * The fields that list an entity's and an episode's facts. They are added here, above the
 * three types, so entity.ts and episode.ts need nothing of fact.ts (which names both).
 */

builder.objectFields(EntityRef, (t) => ({
  facts: t.field({
    type: [FactRef],
    description: [
      `Facts whose subject or object is this entity, validAt descending (ties: factId descending): the first \`first\` (at most ${MAX_NESTED_LIST_SIZE}). The time arguments mean what they mean on \`Dataset.facts\`.`,
      'Default: facts live now. `includeInvalidated`: every fact whatever its state (only without a time argument).',
      '`validAt` / `knownAt`: one axis each (the other defaults to now): `facts(validAt: T)` is corrected history (what we now know was true at T), `facts(knownAt: K)` is audit (what the store believed at K), both together what was believed true at T as known at K.',
      '`asOf`: what was believed true at that instant on both axes (overrides validAt, knownAt and includeInvalidated).',
    ].join('\n'),
    args: {
      asOf: t.arg(asOfArg),
      validAt: t.arg(validAtArg),
      knownAt: t.arg(knownAtArg),
      includeInvalidated: t.arg.boolean({ defaultValue: false }),
      first: t.arg.int(nestedFirstArg),
    },
    // Batched by a loader across parents: no query of its own per entity.
    complexity: nestedListComplexity,
    ...entityFields.reads('dataset', 'name'),
    resolve: (e, args, ctx, info) =>
      ctx.loaders.factsOfEntity.load({
        dataset: e.dataset,
        name: e.name,
        reads: selectedReads(info, 'Fact'),
        asOf: args.asOf?.toISOString() ?? null,
        validAt: args.validAt?.toISOString() ?? null,
        knownAt: args.knownAt?.toISOString() ?? null,
        includeInvalidated: args.includeInvalidated ?? false,
        first: args.first ?? DEFAULT_NESTED_LIST_SIZE,
      }),
  }),
}));

builder.objectFields(EpisodeRef, (t) => ({
  facts: t.field({
    type: [FactRef],
    description: `Every fact this episode produced, whatever its state, validAt descending: the first \`first\` (an episode holds at most ${MAX_NESTED_LIST_SIZE}).`,
    args: {
      first: t.arg.int(nestedFirstArg),
    },
    // Batched by a loader across parents: no query of its own per episode.
    complexity: nestedListComplexity,
    ...episodeFields.reads('dataset', 'episodeId'),
    resolve: (e, args, ctx, info) =>
      ctx.loaders.factsOfEpisode.load({
        dataset: e.dataset,
        episodeId: e.episodeId,
        reads: selectedReads(info, 'Fact'),
        first: args.first ?? DEFAULT_NESTED_LIST_SIZE,
      }),
  }),
}));
