import type { Filter } from 'mongodb';
import type { EntityType } from '../domain/names.js';
import { documentsByIds } from './byIds.js';
import type { Collections } from './collections.js';
import { type DocumentReads, projectionFor } from './documentReads.js';
import { type EntityDoc, entityDocumentId } from './documents.js';
import { ENTITY_ORDER } from './orders.js';
import { afterCursor, keysetPage } from './pages.js';
import type { Tenant } from './tenant.js';

/** What a page of entities reads whatever is asked: its order, and the name they are known by. */
const ENTITY_PAGE_NEEDS = ['updatedAt', 'entityId', 'name'] as const;

/** Keyset position in updatedAt-desc, entityId-desc order. */
export interface EntityCursor {
  updatedAt: Date;
  entityId: string;
}

function entityFilter(
  tenant: Tenant,
  options: { type?: EntityType | null; after?: EntityCursor | null },
): Filter<EntityDoc> {
  const filter: Filter<EntityDoc> = { workspaceId: tenant.workspaceId, dataset: tenant.dataset };
  if (options.type) filter.type = options.type;
  if (options.after) Object.assign(filter, afterCursor('updatedAt', 'entityId', options.after));
  return filter;
}

/** Entities, most recently mentioned first; `first` omitted returns every one. */
export async function listEntities(
  db: Collections,
  tenant: Tenant,
  options: {
    type?: EntityType | null;
    first?: number;
    after?: EntityCursor | null;
    reads?: DocumentReads | null;
  } = {},
): Promise<{ entities: EntityDoc[]; hasNextPage: boolean }> {
  const { nodes, hasNextPage } = await keysetPage(
    db.entities
      .find(entityFilter(tenant, options), {
        comment: 'store:listEntities',
        projection: projectionFor(options.reads ?? null, undefined, ENTITY_PAGE_NEEDS),
      })
      .sort(ENTITY_ORDER),
    options.first,
  );
  return { entities: nodes, hasNextPage };
}

export function countEntities(
  db: Collections,
  tenant: Tenant,
  options: { type?: EntityType | null } = {},
): Promise<number> {
  return db.entities.countDocuments(entityFilter(tenant, { type: options.type ?? null }), {
    comment: 'store:countEntities',
  });
}

/** Entities by name (case-insensitive, otherwise exact), in one query keyed by `_id`. */
export function entitiesByNames(
  db: Collections,
  tenant: Tenant,
  names: readonly string[],
  reads: DocumentReads | null = null,
): Promise<Map<string, EntityDoc>> {
  const ids = names.map((n) => entityDocumentId(tenant, n));
  return documentsByIds(db.entities, tenant, ids, (d) => d.name, 'store:entitiesByNames', {
    projection: projectionFor(reads, undefined, ['name']),
  });
}
