import type { ObjectRef } from '@pothos/core';
import { z } from 'zod';
import { badInput } from '../errors.js';
import { builder } from './builder.js';

/**
 * Forward keyset pagination (`first`, `after`). Cursors are opaque base64url strings of a
 * connection's sort key; a cursor that does not decode, or came from another connection,
 * is a BAD_USER_INPUT error rather than a silent first page.
 */
export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 100;

export const firstSchema = z
  .number()
  .int('must be a whole number')
  .min(1, `must be between 1 and ${MAX_PAGE_SIZE}`)
  .max(MAX_PAGE_SIZE, `must be between 1 and ${MAX_PAGE_SIZE}`);

export const afterSchema = z.string().max(1000, 'is not a cursor of this connection');

export function encodeCursor(kind: string, parts: (string | number)[]): string {
  return Buffer.from(JSON.stringify([kind, ...parts])).toString('base64url');
}

export function decodeCursor(kind: string, cursor: string, arity: number): (string | number)[] {
  try {
    const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (
      Array.isArray(parsed) &&
      parsed[0] === kind &&
      parsed.length === arity + 1 &&
      parsed.slice(1).every((p) => typeof p === 'string' || typeof p === 'number')
    ) {
      return parsed.slice(1) as (string | number)[];
    }
  } catch {
    // fall through
  }
  throw badInput(`after: "${cursor.slice(0, 60)}" is not a cursor of this connection`);
}

/** A connection result: the nodes with their cursors, and a lazy total. */
export function connection<T>(
  nodes: T[],
  hasNextPage: boolean,
  cursorOf: (node: T) => string,
  totalCount: () => Promise<number>,
) {
  const edges = nodes.map((node) => ({ node, cursor: cursorOf(node) }));
  return {
    edges,
    pageInfo: {
      hasNextPage,
      hasPreviousPage: false,
      startCursor: edges[0]?.cursor ?? null,
      endCursor: edges.at(-1)?.cursor ?? null,
    },
    totalCount,
  };
}

/**
 * A Relay connection type for `ref` (`<Name>Connection`, `<Name>Edge`) with a
 * `totalCount` that runs the count only when a client asks for it.
 */
type Types = typeof builder extends PothosSchemaTypes.SchemaBuilder<infer S> ? S : never;

export function countedConnection<T>(ref: ObjectRef<Types, T>, name: string) {
  const type = builder.connectionObject(
    { type: ref, name: `${name}Connection` },
    { name: `${name}Edge` },
  );
  builder.objectField(type, 'totalCount', (t) =>
    t.int({
      description: 'Every match of the filter, ignoring pagination.',
      resolve: (parent) =>
        (parent as unknown as { totalCount: () => Promise<number> }).totalCount(),
    }),
  );
  return type;
}
