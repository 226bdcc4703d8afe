import { FACT_STATES, factStateAtPoint, resolveTemporalSelection } from '../domain/factState.js';
import { normalizeUuid } from '../domain/ids.js';
import { embedWritten } from '../recall/meaning.js';
import type { FactView } from '../store/documents.js';
import { deleteFact, restoreFact } from '../store/factLifecycle.js';
import { countFacts, type FactQuery, listFacts } from '../store/facts.js';
import { tenantOfDataset, tenantOfDocument } from '../store/tenant.js';
import {
  asOfArg,
  DEFAULT_PAGE_SIZE,
  deprecatedIdArg,
  FACT_ID,
  knownAtArg,
  MAX_PAGE_SIZE,
  orderedWindowsSchema,
  pageFirstArg,
  querySchema,
  renamedIdArg,
  renamedIdSchema,
  renamedIdValue,
  uuidSchema,
  validAtArg,
} from './args.js';
import { READABLE_WITHOUT_READ } from './authScopes.js';
import { builder } from './builder.js';
import { connectionType, pageArgs, resolvePage } from './connections.js';
import { boundOf, LOADED_OBJECT_COST, listCost, pageComplexity } from './cost.js';
import { timeThenId } from './cursors.js';
import { DatasetRef } from './dataset.js';
import { EntityRef } from './entity.js';
import { EpisodeRef } from './episode.js';
import { mutationById } from './mutationById.js';
import { nodeKey, parseNodeKey } from './nodeIds.js';
import { loadedReference } from './references.js';
import { documentFields, selectedReads } from './selectedReads.js';

const FactStateEnum = builder.enumType('FactState', {
  description:
    "A fact's state at an instant, checked in this order: SUPERSEDED (invalidAt <= t), FUTURE (validAt > t), EXPIRED (validUntil <= t), LIVE.",
  values: Object.fromEntries(FACT_STATES.map((s) => [s.toUpperCase(), { value: s }])) as {
    LIVE: { value: 'live' };
    SUPERSEDED: { value: 'superseded' };
    EXPIRED: { value: 'expired' };
    FUTURE: { value: 'future' };
  },
});

const InvalidReasonEnum = builder.enumType('InvalidReason', {
  values: { SUPERSEDED: { value: 'superseded' }, DELETED: { value: 'deleted' } } as const,
});

export const FactRef = builder.objectRef<FactView>('Fact');

/** What a fact's fields read of its document (src/schema/selectedReads.ts). */
const factFields = documentFields<FactView>();

/** A field naming another fact of the fact's dataset by id (null: none), read from `idField`. */
const otherFact = (description: string, idField: 'supersededBy' | 'correctionOf' | 'correctedBy') =>
  loadedReference(
    FactRef,
    description,
    (l) => l.factById,
    (f: FactView) => {
      const factId = f[idField] ?? null;
      return factId ? { dataset: f.dataset, factId } : null;
    },
    factFields.reads('dataset', idField),
  );

builder.node(FactRef, {
  description:
    'A subject / predicate / object statement on two time axes: valid time (validAt..validUntil, when it is true in the world) and transaction time (recordedAt..invalidAt, when the store believed it).',
  id: { resolve: (f) => nodeKey(f.dataset, f.factId), ...factFields.reads('dataset', 'factId') },
  isTypeOf: (value) => typeof value === 'object' && value !== null && 'factId' in value,
  ...factFields.always('factId', 'dataset'),
  authScopes: { read: true },
  loadOne: (key, ctx) => {
    const parsed = parseNodeKey(key);
    return parsed
      ? ctx.loaders.factById.load({ dataset: parsed.dataset, factId: parsed.id })
      : null;
  },
  fields: (t) => ({
    factId: t.exposeID('factId', READABLE_WITHOUT_READ),
    dataset: t.exposeString('dataset'),
    subject: t.exposeString('subject'),
    predicate: t.exposeString('predicate'),
    object: t.exposeString('object'),
    objectIsEntity: t.exposeBoolean('objectIsEntity'),
    confidence: t.exposeFloat('confidence'),
    sourceQuote: t.exposeString('sourceQuote', { nullable: true }),
    validAt: t.expose('validAt', { type: 'DateTime' }),
    validUntil: t.expose('validUntil', { type: 'DateTime', nullable: true }),
    recordedAt: t.expose('recordedAt', { type: 'DateTime' }),
    invalidAt: t.expose('invalidAt', { type: 'DateTime', nullable: true }),
    invalidReason: t.expose('invalidReason', { type: InvalidReasonEnum, nullable: true }),
    episodeId: t.exposeID('episodeId', { nullable: true }),
    state: t.field({
      type: FactStateEnum,
      description: [
        "The state at the point (validAt T, knownAt K), checked in this order: SUPERSEDED if invalidAt <= K, FUTURE if the fact's validAt > T, EXPIRED if validUntil <= T, else LIVE.",
        '`at` sets both axes (default: now); `validAt` and `knownAt` each override one axis of it: `state(knownAt: X)` is the state now as the store believed at X, `state(validAt: X)` the state at X as known now.',
      ].join('\n'),
      args: {
        at: t.arg({ type: 'DateTime', description: 'T and K both (default: now).' }),
        validAt: t.arg({
          type: 'DateTime',
          description:
            'T, the instant on valid time (default: `at`): decides FUTURE, EXPIRED and LIVE.',
        }),
        knownAt: t.arg({
          type: 'DateTime',
          description: 'K, the instant on transaction time (default: `at`): decides SUPERSEDED.',
        }),
      },
      ...factFields.reads('validAt', 'validUntil', 'invalidAt'),
      resolve: (f, args, ctx) => {
        const at = args.at ?? ctx.now;
        return factStateAtPoint(f, args.validAt ?? at, args.knownAt ?? at);
      },
    }),
    subjectEntity: t.field(
      loadedReference(
        EntityRef,
        'The entity named by the subject, if there is one.',
        (l) => l.entityByName,
        (f: FactView) => ({ dataset: f.dataset, name: f.subject }),
        factFields.reads('dataset', 'subject'),
      ),
    ),
    objectEntity: t.field(
      loadedReference(
        EntityRef,
        'The entity named by the object, if the object is an entity and it exists.',
        (l) => l.entityByName,
        (f: FactView) => (f.objectIsEntity ? { dataset: f.dataset, name: f.object } : null),
        factFields.reads('dataset', 'objectIsEntity', 'object'),
      ),
    ),
    episode: t.field(
      loadedReference(
        EpisodeRef,
        'The episode the fact was extracted from.',
        (l) => l.episodeById,
        (f: FactView) => (f.episodeId ? { dataset: f.dataset, episodeId: f.episodeId } : null),
        factFields.reads('dataset', 'episodeId'),
      ),
    ),
    supersededBy: t.field(otherFact('The fact that superseded this one.', 'supersededBy')),
    correctionOf: t.field(
      otherFact(
        'On a corrected version: the fact it is a version of, as first recorded. When a replacing fact supersedes a fact that began before it, the store records a corrected version of the old fact with the supersession: the same statement, from the same episode, true from its validAt until the replacing fact began (validUntil), believed from that instant on. So `facts(validAt:)` shows the old value until it changed, however the writes arrived (docs/TEMPORAL_MODEL.md). Null on a fact as recorded.',
        'correctionOf',
      ),
    ),
    correctedBy: t.field(
      otherFact(
        'On a corrected version: the replacing fact whose validAt ends it. Null on a fact as recorded.',
        'correctedBy',
      ),
    ),
    history: t.field({
      type: [FactRef],
      description:
        'Every fact with the same subject and predicate (case-insensitive), whatever its state, validAt descending: how this statement changed over time.',
      args: { first: t.arg.int(pageFirstArg) },
      // One query per fact asking (not batched).
      complexity: (args) => listCost(boundOf(args.first, DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE), true),
      ...factFields.reads('workspaceId', 'dataset', 'subject', 'predicate'),
      resolve: async (f, args, ctx, info) => {
        const page = await listFacts(
          ctx.store,
          tenantOfDocument(f),
          {
            selection: { kind: 'all' },
            subjectPredicate: { subject: f.subject, predicate: f.predicate },
          },
          { first: args.first ?? DEFAULT_PAGE_SIZE },
          selectedReads(info, 'Fact'),
        );
        return page.facts;
      },
    }),
  }),
});

const FactConnection = connectionType(FactRef, 'Fact');

const FACT_CURSOR = timeThenId('fact', 'validAt', 'factId');

builder.objectField(DatasetRef, 'facts', (t) =>
  t.field({
    type: FactConnection,
    description: [
      'Facts of the dataset, validAt descending (ties: factId descending). Default: facts live now.',
      '`includeInvalidated`: every fact whatever its state. `asOf`: what was believed true at that instant on both axes (overrides includeInvalidated).',
      '`validAt` / `knownAt`: one axis each (the other defaults to now): corrected history and audit.',
      '`episodeId`: every fact the episode produced, whatever its state, unless a time argument is given.',
      '`states`: keep facts whose state at `asOf` (default now) is one of these; without a time argument it searches the full history.',
      '`q`: full text over subject + predicate + object: every term of q must occur, analysed as recall analyses text (case-insensitive, English stop words left out, stemmed: "cars" finds "car").',
      '`recordedAfter` / `recordedBy` / `invalidatedAfter` / `invalidatedBy`: windows on transaction time, ANDed with everything else; without asOf / validAt / knownAt they search the full history, like `states`. `facts(recordedAfter: A, recordedBy: B)` is what the store learned in (A, B]; `facts(invalidatedAfter: A, invalidatedBy: B)` what it stopped believing then (superseded and deleted, told apart by invalidReason); `facts(recordedBy: K)` every fact the store knew at K, whatever its state. An "after" must be earlier than its "by" (else BAD_USER_INPUT).',
    ].join('\n'),
    complexity: pageComplexity,
    validate: orderedWindowsSchema([
      ['recordedAfter', 'recordedBy'],
      ['invalidatedAfter', 'invalidatedBy'],
    ]),
    args: {
      q: t.arg.string({ validate: querySchema }),
      ...pageArgs,
      includeInvalidated: t.arg.boolean({ defaultValue: false }),
      asOf: t.arg(asOfArg),
      validAt: t.arg(validAtArg),
      knownAt: t.arg(knownAtArg),
      episodeId: t.arg.id({ validate: uuidSchema }),
      states: t.arg({ type: [FactStateEnum] }),
      recordedAfter: t.arg({
        type: 'DateTime',
        description:
          'Keep facts recorded strictly after this instant (recordedAt > recordedAfter).',
      }),
      recordedBy: t.arg({
        type: 'DateTime',
        description: 'Keep facts recorded at or before this instant (recordedAt <= recordedBy).',
      }),
      invalidatedAfter: t.arg({
        type: 'DateTime',
        description:
          'Keep facts invalidated (superseded or deleted) strictly after this instant (invalidAt set and > invalidatedAfter).',
      }),
      invalidatedBy: t.arg({
        type: 'DateTime',
        description:
          'Keep facts invalidated (superseded or deleted) at or before this instant (invalidAt set and <= invalidatedBy).',
      }),
    },
    resolve: (ds, args, ctx, info) => {
      const tenant = tenantOfDataset(ds);
      const hasTime = Boolean(args.asOf || args.validAt || args.knownAt);
      const windows = {
        recordedAfter: args.recordedAfter,
        recordedBy: args.recordedBy,
        invalidatedAfter: args.invalidatedAfter,
        invalidatedBy: args.invalidatedBy,
      };
      const hasWindow = Object.values(windows).some(Boolean);
      const selection = resolveTemporalSelection(
        {
          asOf: args.asOf,
          validAt: args.validAt,
          knownAt: args.knownAt,
          episodeId: args.episodeId,
          // `states` and the windows ask about the history: without a time point, all of it.
          includeInvalidated:
            args.includeInvalidated || (!hasTime && ((args.states?.length ?? 0) > 0 || hasWindow)),
        },
        ctx.now,
      );
      const query: FactQuery = {
        selection,
        q: args.q,
        episodeId: args.episodeId ? normalizeUuid(args.episodeId) : null,
        states: args.states,
        statesAt: args.asOf ?? ctx.now,
        windows: hasWindow ? windows : null,
      };
      return resolvePage({
        cursor: FACT_CURSOR,
        args,
        info,
        count: () => countFacts(ctx.store, tenant, query),
        list: (page) => listFacts(ctx.store, tenant, query, page, selectedReads(info, 'Fact')),
        nodes: (page) => page.facts,
      });
    },
  }),
);

builder.objectField(DatasetRef, 'fact', (t) =>
  t.field({
    type: FactRef,
    nullable: true,
    description: 'One fact by its factId, whatever its state.',
    args: {
      factId: t.arg.id(renamedIdArg(FACT_ID, 'The fact.')),
      id: t.arg.id(deprecatedIdArg(FACT_ID)),
    },
    validate: renamedIdSchema(FACT_ID),
    complexity: LOADED_OBJECT_COST,
    resolve: (ds, args, ctx, info) =>
      ctx.loaders.factById.load({
        dataset: ds.name,
        factId: renamedIdValue(FACT_ID, args),
        reads: selectedReads(info, 'Fact'),
      }),
  }),
);

const DeleteFactPayload = builder
  .objectRef<{ factId: string; fact: FactView }>('DeleteFactPayload')
  .implement({
    authScopes: { authenticated: true },
    fields: (t) => ({
      factId: t.exposeID('factId'),
      deleted: t.boolean({ resolve: () => true }),
      fact: t.field({ type: FactRef, resolve: (p) => p.fact }),
    }),
  });

mutationById('deleteFact', {
  scope: 'write',
  type: DeleteFactPayload,
  description:
    'Soft delete: the fact is wrong from now on, in whichever version is believed (invalidAt, reason DELETED, on that version). Succeeds once; an unknown id, a fact of another dataset, or one with nothing believed now (deleted already, or superseded whole) is NOT_FOUND. The answer is the fact the id names, as it is after the delete. Needs the write scope.',
  id: FACT_ID,
  idDescription: 'The fact to delete.',
  write: async (store, tenant, factId, ctx) => {
    const fact = await deleteFact(store, tenant, factId, ctx.now);
    await embedWritten(ctx, tenant);
    return { factId: fact.factId, fact };
  },
});

mutationById('restoreFact', {
  scope: 'admin',
  type: FactRef,
  description:
    'Undoes the last soft delete of a fact: from now on it is believed again, as a new version (correctionOf names the fact), while what the store believed in between stays as it was; it can be deleted again. Only a deleted fact can be restored; anything else is NOT_FOUND. The answer is the version now believed. Needs the admin scope.',
  id: FACT_ID,
  idDescription: 'The deleted fact to restore.',
  write: async (store, tenant, factId, ctx) => {
    const restored = await restoreFact(store, tenant, factId, ctx.now);
    // The restored version is a new document: its vector is its fact's (the same text).
    await embedWritten(ctx, tenant);
    return restored;
  },
});
