/**
 * The order of each kind's lists, newest first, an id breaking ties: the sort of every
 * page and the tail of the indexes that serve them (store/collections.ts), so a list and its
 * index cannot disagree. A keyset cursor holds the same two values (schema/cursors.ts).
 */
export const FACT_ORDER = { validAt: -1, factId: -1 } as const;
export const ENTITY_ORDER = { updatedAt: -1, entityId: -1 } as const;
export const EPISODE_ORDER = { occurredAt: -1, episodeId: -1 } as const;
export const MEMORY_ORDER = { createdAt: -1, memoryId: -1 } as const;
