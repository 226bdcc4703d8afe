/*
 * A list tool's pages: its page arguments, what it answers about the next page, and how
 * both map to the GraphQL connection it reads (`first` / `after`, src/schema/cursors.ts).
 */

import { z } from 'zod';
import { DEFAULT_PAGE_SIZE, firstSchema } from '../../schema/args.js';

export const cursor = (of: string) =>
  z
    .string()
    .max(1000, 'is not a cursor of this list')
    .describe(`The cursor a previous ${of} call answered, to continue after it.`);

export const pageSize = (what: string) =>
  firstSchema.default(DEFAULT_PAGE_SIZE).describe(`How many ${what} at most (1-100).`);

/** A cursor argument as the operation's `after`: absent when not given. */
export const afterCursor = (after: string | undefined) => (after === undefined ? {} : { after });

/** What a list tool answers beside its items: how many in all, and where the next page starts. */
export const pageOutput = { total: z.number(), nextCursor: z.string().nullable() };

/** A page of a connection: its items, and the cursor of the next page (null: it was the last). */
export function pageOf<Node>(
  connection:
    | { edges: { node: Node }[]; pageInfo: { endCursor: string | null; hasNextPage: boolean } }
    | undefined,
) {
  return {
    nodes: connection?.edges.map((e) => e.node) ?? [],
    nextCursor: connection?.pageInfo.hasNextPage ? connection.pageInfo.endCursor : null,
  };
}
