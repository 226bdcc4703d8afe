import { z } from 'zod';
import { type AuthenticatedContext, tenantOf } from '../context.js';
import { embedWritten } from '../recall/meaning.js';
import type { MemoryDoc } from '../store/documents.js';
import { findMemory } from '../store/memories.js';
import {
  changeMemory,
  createMemory,
  type MemoryChange,
  type NewMemory,
  supersedeMemory,
} from '../store/memoryWrites.js';
import { datasetArg, uuidArg, uuidSchema } from './args.js';
import { builder } from './builder.js';
import { OWN_QUERY_OBJECT_COST } from './cost.js';
import { MemoryRef } from './memory.js';
import { runStoreWrite } from './storeErrors.js';

/**
 * Memory curation on SupaCloud's model (write scope). Every change to a memory bumps its
 * `version`; pass `expectedVersion` for optimistic concurrency: a memory at another
 * version is a CONFLICT and nothing changes. The store's version claims make each version
 * happen at most once (store/memoryWrites.ts).
 */

const text = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .max(100_000, 'must be at most 100000 characters');
const label = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .max(200, 'must be at most 200 characters');
const score = z.number().min(0, 'must be between 0 and 1').max(1, 'must be between 0 and 1');

/** A memory's importance and salience when not given. */
export const DEFAULT_SCORE = 0.5;

/** `null` for an absent value (GraphQL may pass an explicit null). */
const orNull = <T>(schema: z.ZodType<T>) => schema.nullish().transform((v) => v ?? null);

/**
 * The inputs' rules as whole-object schemas, so every problem is reported at once. The
 * memory input's output is the store's NewMemory, defaults applied, so it is passed on as
 * it is.
 */
const memoryInputSchema = z.object({
  memoryId: orNull(uuidSchema),
  text,
  memoryKind: label,
  scope: label,
  sourceType: label,
  sourceId: orNull(uuidSchema),
  projectId: orNull(uuidSchema),
  userId: orNull(uuidSchema),
  importance: score.nullish().transform((v) => v ?? DEFAULT_SCORE),
  salience: score.nullish().transform((v) => v ?? DEFAULT_SCORE),
  pinned: z
    .boolean()
    .nullish()
    .transform((v) => v ?? false),
  validFrom: orNull(z.date()),
}) satisfies z.ZodType<NewMemory>;

const memoryPatchSchema = z.object({
  text: text.nullish(),
  memoryKind: label.nullish(),
  scope: label.nullish(),
  sourceType: label.nullish(),
  importance: score.nullish(),
  salience: score.nullish(),
});

const MemoryInputRef = builder.inputType('MemoryInput', {
  description:
    'text up to 100000 characters; memoryKind, scope, sourceType 1-200; importance and salience 0-1.',
  fields: (t) => ({
    memoryId: t.id({
      description:
        'Give one (a UUID) so a retried create is idempotent; ignored by supersedeMemory.',
    }),
    text: t.string({ required: true }),
    memoryKind: t.string({ required: true }),
    scope: t.string({ required: true }),
    sourceType: t.string({ required: true }),
    sourceId: t.id(),
    projectId: t.id(),
    userId: t.id(),
    importance: t.float({ defaultValue: DEFAULT_SCORE }),
    salience: t.float({ defaultValue: DEFAULT_SCORE }),
    pinned: t.boolean({ defaultValue: false }),
    validFrom: t.field({ type: 'DateTime', description: 'Default: now.' }),
  }),
});

const MemoryPatchRef = builder.inputType('MemoryPatch', {
  description: 'Fields to change; the ones left out keep their value.',
  fields: (t) => ({
    text: t.string(),
    memoryKind: t.string(),
    scope: t.string(),
    sourceType: t.string(),
    importance: t.float(),
    salience: t.float(),
  }),
});

/** A memory write's optimistic check: the version the caller last read. */
const expectedVersionArg = { validate: z.number().int().min(1, 'must be at least 1') } as const;

builder.mutationField('createMemory', (t) =>
  t.withAuth({ write: true }).field({
    type: MemoryRef,
    description:
      'Creates a memory (version 1, valid from validFrom or now). Needs the write scope.',
    args: {
      dataset: t.arg.string(datasetArg),
      input: t.arg({ type: MemoryInputRef, required: true }).validate(memoryInputSchema),
    },
    complexity: OWN_QUERY_OBJECT_COST,
    resolve: async (_root, args, ctx) => {
      const tenant = tenantOf(ctx, args.dataset);
      const { memory } = await runStoreWrite(ctx.store, (store) =>
        createMemory(store, tenant, args.input, ctx.now),
      );
      await embedWritten(ctx, tenant);
      return memory;
    },
  }),
);

/** The arguments that name a memory and the version its writer last read. */
interface VersionedArgs {
  dataset: string;
  memoryId: string;
  expectedVersion?: number | null;
}

/** Changes the memory `args` name as its next version (store/memoryWrites.ts changeMemory). */
async function changeNamedMemory(
  ctx: AuthenticatedContext,
  args: VersionedArgs,
  change: MemoryChange,
) {
  const tenant = tenantOf(ctx, args.dataset);
  const changed = await runStoreWrite(ctx.store, (store) =>
    changeMemory(store, tenant, args.memoryId, args.expectedVersion ?? null, change, ctx.now),
  );
  await embedWritten(ctx, tenant);
  return changed;
}

/** A mutation that changes one memory as its next version. */
function versionedMutation(name: string, description: string, change: (now: Date) => MemoryChange) {
  builder.mutationField(name, (t) =>
    t.withAuth({ write: true }).field({
      type: MemoryRef,
      description: `${description} Bumps version; with expectedVersion, a memory at another version is a CONFLICT and nothing changes. Needs the write scope.`,
      args: {
        dataset: t.arg.string(datasetArg),
        memoryId: t.arg.id(uuidArg),
        expectedVersion: t.arg.int(expectedVersionArg),
      },
      complexity: OWN_QUERY_OBJECT_COST,
      resolve: (_root, args, ctx) => changeNamedMemory(ctx, args, change(ctx.now)),
    }),
  );
}

const setIf =
  (test: (m: MemoryDoc) => boolean, set: Partial<MemoryDoc>): MemoryChange =>
  (m) =>
    test(m) ? { set } : 'unchanged';

versionedMutation(
  'archiveMemory',
  'Archives a memory (sets archivedAt); archived memories leave the live view.',
  (now) => setIf((m) => m.archivedAt === null, { archivedAt: now }),
);
versionedMutation('unarchiveMemory', 'Clears archivedAt.', () =>
  setIf((m) => m.archivedAt !== null, { archivedAt: null }),
);
versionedMutation('pinMemory', 'Pins a memory.', () => setIf((m) => !m.pinned, { pinned: true }));
versionedMutation('unpinMemory', 'Unpins a memory.', () =>
  setIf((m) => m.pinned, { pinned: false }),
);

builder.mutationField('updateMemory', (t) =>
  t.withAuth({ write: true }).field({
    type: MemoryRef,
    description:
      "Changes a memory's fields as its next version. With expectedVersion, a memory at another version is a CONFLICT and nothing changes. Needs the write scope.",
    args: {
      dataset: t.arg.string(datasetArg),
      memoryId: t.arg.id(uuidArg),
      expectedVersion: t.arg.int(expectedVersionArg),
      patch: t.arg({ type: MemoryPatchRef, required: true }).validate(memoryPatchSchema),
    },
    complexity: OWN_QUERY_OBJECT_COST,
    resolve: (_root, args, ctx) => {
      const set = Object.fromEntries(
        Object.entries(args.patch).filter(([, v]) => v !== null && v !== undefined),
      ) as Partial<MemoryDoc>;
      // A patch that changes nothing (empty, or every value as it is) is no new version:
      // bumping it would fail other clients' expectedVersion for nothing.
      return changeNamedMemory(ctx, args, (m) =>
        Object.entries(set).every(([k, v]) => m[k as keyof MemoryDoc] === v)
          ? 'unchanged'
          : { set },
      );
    },
  }),
);

const SupersedeMemoryPayload = builder
  .objectRef<{ previous: MemoryDoc; memory: MemoryDoc }>('SupersedeMemoryPayload')
  .implement({
    authScopes: { authenticated: true },
    fields: (t) => ({
      previous: t.field({
        type: MemoryRef,
        description: 'The superseded memory, validUntil and supersededBy stamped.',
        resolve: (p) => p.previous,
      }),
      memory: t.field({ type: MemoryRef, description: 'Its successor.', resolve: (p) => p.memory }),
    }),
  });

builder.mutationField('supersedeMemory', (t) =>
  t.withAuth({ write: true }).field({
    type: SupersedeMemoryPayload,
    description:
      'Replaces a memory: stamps validUntil and supersededBy on it (it stays readable with asOf) and creates its successor, valid from now. A memory is superseded at most once (a second attempt is a CONFLICT). Needs the write scope.',
    args: {
      dataset: t.arg.string(datasetArg),
      memoryId: t.arg.id(uuidArg),
      expectedVersion: t.arg.int(expectedVersionArg),
      input: t.arg({ type: MemoryInputRef, required: true }).validate(memoryInputSchema),
    },
    complexity: OWN_QUERY_OBJECT_COST,
    resolve: async (_root, args, ctx) => {
      const tenant = tenantOf(ctx, args.dataset);
      const { now } = ctx;
      const previous = await runStoreWrite(ctx.store, (store) =>
        supersedeMemory(
          store,
          tenant,
          args.memoryId,
          args.expectedVersion ?? null,
          args.input,
          now,
        ),
      );
      const memory = await findMemory(ctx.store, tenant, previous.supersededBy!);
      return { previous, memory: memory! };
    },
  }),
);
