import type { GraphQLResolveInfo } from 'graphql';
import type { RequestContext } from '../context.js';
import type { MemoryDoc } from '../store/documents.js';
import { countMemories, listMemories, type MemoryQuery } from '../store/memories.js';
import { READABLE_WITHOUT_READ } from './authScopes.js';
import { builder } from './builder.js';
import { connectionType, pageArgs, resolvePage } from './connections.js';
import { listCost, pageComplexity, WHOLE_LIST_CAP } from './cost.js';
import { timeThenId } from './cursors.js';
import { DatasetRef } from './dataset.js';
import { nodeKey, parseNodeKey } from './nodeIds.js';

export const MemoryRef = builder.objectRef<MemoryDoc>('Memory');

builder.node(MemoryRef, {
  description:
    "A free-text memory, SupaCloud's model: validFrom..validUntil is its validity; archivedAt, pinned, importance, salience, version and supersededBy are metadata.",
  id: { resolve: (m) => nodeKey(m.dataset, m.memoryId) },
  isTypeOf: (value) => typeof value === 'object' && value !== null && 'memoryId' in value,
  authScopes: { read: true },
  loadOne: async (key, ctx) => {
    const parsed = parseNodeKey(key);
    if (!parsed) return null;
    return ctx.loaders.memoryById.load({ dataset: parsed.dataset, memoryId: parsed.id });
  },
  fields: (t) => ({
    memoryId: t.exposeID('memoryId', { description: "SupaCloud's id.", ...READABLE_WITHOUT_READ }),
    workspaceId: t.exposeID('workspaceId'),
    dataset: t.exposeString('dataset'),
    text: t.exposeString('text'),
    memoryKind: t.exposeString('memoryKind'),
    scope: t.exposeString('scope'),
    sourceType: t.exposeString('sourceType'),
    sourceId: t.exposeID('sourceId', { nullable: true }),
    projectId: t.exposeID('projectId', { nullable: true }),
    userId: t.exposeID('userId', { nullable: true }),
    importance: t.exposeFloat('importance'),
    salience: t.exposeFloat('salience'),
    pinned: t.exposeBoolean('pinned'),
    version: t.exposeInt('version', READABLE_WITHOUT_READ),
    archivedAt: t.expose('archivedAt', { type: 'DateTime', nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
    lastUsedAt: t.expose('lastUsedAt', { type: 'DateTime', nullable: true }),
    validFrom: t.expose('validFrom', { type: 'DateTime' }),
    validUntil: t.expose('validUntil', { type: 'DateTime', nullable: true }),
    supersededBy: t.exposeID('supersededBy', { nullable: true }),
  }),
});

const MemoryConnection = connectionType(MemoryRef, 'Memory');

const MEMORY_CURSOR = timeThenId('memory', 'createdAt', 'memoryId');

const MEMORIES_DESCRIPTION =
  "Memories, newest (createdAt) first. Default: the live view (validUntil null or in the future, not archived). `includeArchived` adds archived ones; `asOf` reconstructs validity membership at that instant (validFrom <= asOf < validUntil) with today's metadata.";

/** What the pages say beyond allMemories: includeSuperseded. */
const PAGE_DESCRIPTION = `${MEMORIES_DESCRIPTION} \`includeSuperseded\` adds those whose validity has ended (superseded or expired) by now, or by asOf.`;

/** The arguments Dataset.memories and Query.memories share. */
const memoryPageArgs = builder.args((t) => ({
  includeArchived: t.boolean({ defaultValue: false }),
  includeSuperseded: t.boolean({
    defaultValue: false,
    description:
      'Also memories whose validity has ended (superseded, or past their validUntil): without asOf, those with validUntil <= now; with asOf, every memory with validFrom <= asOf whatever its validUntil. With includeArchived: live, archived and superseded memories together.',
  }),
  asOf: t.field({ type: 'DateTime' }),
  ...pageArgs,
}));

/** A page of the memories of `workspaceId` (of one dataset, or of all of them). */
function resolveMemories(
  ctx: RequestContext,
  info: GraphQLResolveInfo,
  workspaceId: string,
  dataset: string | null,
  args: {
    includeArchived?: boolean | null;
    includeSuperseded?: boolean | null;
    asOf?: Date | null;
    first?: number | null;
    after?: string | null;
  },
) {
  const query: MemoryQuery = {
    workspaceId,
    dataset,
    includeArchived: args.includeArchived ?? false,
    includeSuperseded: args.includeSuperseded ?? false,
    asOf: args.asOf ?? null,
    now: ctx.now,
  };
  return resolvePage({
    cursor: MEMORY_CURSOR,
    args,
    info,
    count: () => countMemories(ctx.store, query),
    list: (page) => listMemories(ctx.store, query, page),
    nodes: (page) => page.memories,
  });
}

builder.objectField(DatasetRef, 'memories', (t) =>
  t.field({
    type: MemoryConnection,
    description: PAGE_DESCRIPTION,
    complexity: pageComplexity,
    args: memoryPageArgs,
    resolve: (ds, args, ctx, info) => resolveMemories(ctx, info, ds.workspaceId, ds.name, args),
  }),
);

builder.queryField('memories', (t) =>
  t.withAuth({ read: true }).field({
    type: MemoryConnection,
    description: `Memories of every dataset of the workspace (what SupaCloud's GET /api/memories lists). ${PAGE_DESCRIPTION}`,
    complexity: pageComplexity,
    args: memoryPageArgs,
    resolve: (_root, args, ctx, info) =>
      resolveMemories(ctx, info, ctx.auth.workspaceId, null, args),
  }),
);

builder.queryField('allMemories', (t) =>
  t.withAuth({ read: true }).field({
    type: [MemoryRef],
    description: `Every memory of the workspace, unpaginated (what SupaCloud's GET /api/memories returns), at most ${WHOLE_LIST_CAP}. ${MEMORIES_DESCRIPTION}`,
    complexity: listCost(WHOLE_LIST_CAP, true),
    args: {
      includeArchived: t.arg.boolean({ defaultValue: false }),
      asOf: t.arg({ type: 'DateTime' }),
    },
    resolve: async (_root, args, ctx) => {
      const { auth } = ctx;
      const { memories } = await listMemories(
        ctx.store,
        {
          workspaceId: auth.workspaceId,
          includeArchived: args.includeArchived ?? false,
          asOf: args.asOf ?? null,
          now: ctx.now,
        },
        { first: WHOLE_LIST_CAP },
      );
      return memories;
    },
  }),
);
