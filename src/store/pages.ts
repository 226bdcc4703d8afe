import type { Filter, FindCursor } from 'mongodb';
import { UNPAGED_BATCH_SIZE } from './database.js';

/** One page of a keyset-paginated list: its documents, and whether more follow. */
export interface KeysetPage<T> {
  nodes: T[];
  hasNextPage: boolean;
}

/**
 * Reads one page of a sorted find: `first + 1` documents, so the extra one says whether
 * another page follows, in one round trip (without the batch size, a first batch of
 * exactly 101 leaves a cursor to kill). `first` undefined reads every match, also in
 * one round trip where it fits.
 */
export async function keysetPage<T>(
  cursor: FindCursor<T>,
  first: number | undefined,
): Promise<KeysetPage<T>> {
  if (first === undefined) {
    return { nodes: await cursor.batchSize(UNPAGED_BATCH_SIZE).toArray(), hasNextPage: false };
  }
  const docs = await cursor
    .limit(first + 1)
    .batchSize(first + 1)
    .toArray();
  return { nodes: docs.slice(0, first), hasNextPage: docs.length > first };
}

/**
 * Strictly after `cursor` in (`sortField` descending, `idField` descending) order: a
 * smaller sort key, or the same one and a smaller id.
 */
export function afterCursor<T, C extends object>(
  sortField: keyof C & string,
  idField: keyof C & string,
  cursor: C,
): Filter<T> {
  return {
    $or: [
      { [sortField]: { $lt: cursor[sortField] } },
      { [sortField]: cursor[sortField], [idField]: { $lt: cursor[idField] } },
    ],
  } as Filter<T>;
}
