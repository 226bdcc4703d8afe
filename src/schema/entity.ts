import { ENTITY_TYPES } from '../domain/names.js';
import type { EntityDoc } from '../store/documents.js';
import { countEntities, listEntities } from '../store/entities.js';
import { tenantOfDataset } from '../store/tenant.js';
import { nameSchema } from './args.js';
import { builder } from './builder.js';
import { connectionType, pageArgs, resolvePage } from './connections.js';
import { LOADED_OBJECT_COST, listCost, pageComplexity, WHOLE_LIST_CAP } from './cost.js';
import { timeThenId } from './cursors.js';
import { DatasetRef } from './dataset.js';
import { nodeKey, parseNodeKey } from './nodeIds.js';
import { documentFields, selectedReads } from './selectedReads.js';

export const EntityTypeEnum = builder.enumType('EntityType', {
  values: ENTITY_TYPES,
});

export const EntityRef = builder.objectRef<EntityDoc>('Entity');

/** What an entity's fields read of its document (src/schema/selectedReads.ts). */
export const entityFields = documentFields<EntityDoc>();

builder.node(EntityRef, {
  description: 'Something facts mention. Names are stored lower-cased and unique per dataset.',
  id: { resolve: (e) => nodeKey(e.dataset, e.name), ...entityFields.reads('dataset', 'name') },
  isTypeOf: (value) => typeof value === 'object' && value !== null && 'entityId' in value,
  // Every field but the storage ones: an entity is a few short strings, and one read of it
  // then answers every selection of it (a page of entities answers its facts' lookups of
  // them, src/loaders.ts). A field added to the document is read only when selected.
  ...entityFields.always('entityId', 'dataset', 'name', 'type', 'updatedAt'),
  authScopes: { read: true },
  loadOne: (key, ctx) => {
    const parsed = parseNodeKey(key);
    return parsed
      ? ctx.loaders.entityByName.load({ dataset: parsed.dataset, name: parsed.id })
      : null;
  },
  fields: (t) => ({
    entityId: t.exposeID('entityId'),
    dataset: t.exposeString('dataset'),
    name: t.exposeString('name'),
    type: t.expose('type', { type: EntityTypeEnum }),
    updatedAt: t.expose('updatedAt', {
      type: 'DateTime',
      description: 'Moves whenever a new fact mentions the entity.',
    }),
  }),
});

const EntityConnection = connectionType(EntityRef, 'Entity');

const ENTITY_CURSOR = timeThenId('entity', 'updatedAt', 'entityId');

builder.objectFields(DatasetRef, (t) => ({
  entities: t.field({
    type: EntityConnection,
    description: 'Entities, most recently mentioned (updatedAt) first.',
    complexity: pageComplexity,
    args: {
      type: t.arg({ type: EntityTypeEnum }),
      ...pageArgs,
    },
    resolve: (ds, args, ctx, info) => {
      const tenant = tenantOfDataset(ds);
      const type = args.type ?? null;
      const reads = selectedReads(info, 'Entity');
      return resolvePage({
        cursor: ENTITY_CURSOR,
        args,
        info,
        count: () => countEntities(ctx.store, tenant, { type }),
        list: (page) => listEntities(ctx.store, tenant, { type, ...page, reads }),
        nodes: (page) => {
          ctx.loaders.knownEntities(page.entities, reads);
          return page.entities;
        },
      });
    },
  }),
  allEntities: t.field({
    type: [EntityRef],
    description: `Every entity of the dataset, most recently mentioned first, unpaginated (what Memory Soda's GET entities returns), at most ${WHOLE_LIST_CAP}. Prefer \`entities\` for large datasets.`,
    complexity: listCost(WHOLE_LIST_CAP, true),
    resolve: async (ds, _args, ctx, info) => {
      const reads = selectedReads(info, 'Entity');
      const { entities } = await listEntities(ctx.store, tenantOfDataset(ds), {
        first: WHOLE_LIST_CAP,
        reads,
      });
      ctx.loaders.knownEntities(entities, reads);
      return entities;
    },
  }),
  entity: t.field({
    type: EntityRef,
    nullable: true,
    description: 'One entity by name: lower-cased, otherwise exact (a lookup, not a search).',
    args: { name: t.arg.string({ required: true, validate: nameSchema }) },
    complexity: LOADED_OBJECT_COST,
    resolve: (ds, args, ctx, info) =>
      ctx.loaders.entityByName.load({
        dataset: ds.name,
        name: args.name,
        reads: selectedReads(info, 'Entity'),
      }),
  }),
}));
