import type { Filter } from 'mongodb';
import { documentsByIds } from './byIds.js';
import type { Collections } from './collections.js';
import { type MemoryDoc, memoryDocumentId } from './documents.js';
import { MEMORY_ORDER } from './orders.js';
import { afterCursor, keysetPage } from './pages.js';
import type { Tenant } from './tenant.js';

export interface MemoryQuery {
  workspaceId: string;
  /** One dataset, or every dataset of the workspace (SupaCloud's `/api/memories`). */
  dataset?: string | null;
  includeArchived?: boolean | null;
  /**
   * Also memories whose validity has ended (superseded or expired): without `asOf`, those
   * with validUntil <= now; with `asOf`, every memory with validFrom <= asOf whatever its
   * validUntil.
   */
  includeSuperseded?: boolean | null;
  /** Validity membership at this instant, with today's metadata; absent: the live view. */
  asOf?: Date | null;
  now: Date;
}

export interface MemoryCursor {
  createdAt: Date;
  memoryId: string;
}

/**
 * SupaCloud's semantics: the live view is `valid_until` null or in the future and not
 * archived; `as_of=T` is `valid_from <= T < valid_until`; archived memories are left out
 * unless `includeArchived` (judged by today's `archived_at`, as "today's metadata" says).
 * `includeSuperseded` drops the end of validity (`valid_until`) from the test: with `as_of`
 * it keeps every memory that had begun by then.
 */
export function memoryFilter(query: MemoryQuery): Filter<MemoryDoc> {
  const clauses: Filter<MemoryDoc>[] = [{ workspaceId: query.workspaceId }];
  if (query.dataset != null) clauses.push({ dataset: query.dataset });
  const at = query.asOf ?? query.now;
  if (query.asOf) clauses.push({ validFrom: { $lte: query.asOf } });
  if (!query.includeSuperseded) {
    clauses.push({ $or: [{ validUntil: null }, { validUntil: { $gt: at } }] });
  }
  if (!query.includeArchived) clauses.push({ archivedAt: null });
  return { $and: clauses };
}

/**
 * The live view (no `asOf`, archived and superseded left out) on a memory's values: the
 * rule `memoryFilter` states for the database, in code.
 */
export function inLiveView(memory: MemoryDoc, now: Date): boolean {
  return (memory.validUntil === null || memory.validUntil > now) && memory.archivedAt === null;
}

/** Memories, newest first (`created_at` desc, id desc); `first` omitted returns all. */
export async function listMemories(
  db: Collections,
  query: MemoryQuery,
  page: { first?: number; after?: MemoryCursor | null } = {},
): Promise<{ memories: MemoryDoc[]; hasNextPage: boolean }> {
  const base = memoryFilter(query);
  const filter: Filter<MemoryDoc> = page.after
    ? { $and: [base, afterCursor('createdAt', 'memoryId', page.after)] }
    : base;
  const { nodes, hasNextPage } = await keysetPage(
    db.memories.find(filter, { comment: 'store:listMemories' }).sort(MEMORY_ORDER),
    page.first,
  );
  return { memories: nodes, hasNextPage };
}

export function countMemories(db: Collections, query: MemoryQuery): Promise<number> {
  return db.memories.countDocuments(memoryFilter(query), { comment: 'store:countMemories' });
}

/** Memories by id (any state), in one `$in` read: the memory loader's batch. */
export function memoriesByIds(
  db: Collections,
  tenant: Tenant,
  memoryIds: readonly string[],
): Promise<Map<string, MemoryDoc>> {
  const ids = memoryIds.map((id) => memoryDocumentId(tenant, id));
  return documentsByIds(db.memories, tenant, ids, (d) => d.memoryId, 'store:memoriesByIds');
}

/** One memory by id, whatever its state (live, archived, superseded). */
export async function findMemory(
  db: Collections,
  tenant: Tenant,
  memoryId: string,
): Promise<MemoryDoc | null> {
  return db.memories.findOne(
    {
      _id: memoryDocumentId(tenant, memoryId),
      workspaceId: tenant.workspaceId,
      dataset: tenant.dataset,
    },
    { comment: 'store:findMemory' },
  );
}
