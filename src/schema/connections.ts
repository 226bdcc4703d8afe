/*
 * Forward keyset pagination (`first`, `after`): one page of a connection field, the way
 * every connection answers, and the connection types, each with its `totalCount`.
 */

import type { ObjectRef } from '@pothos/core';
import type { GraphQLResolveInfo } from 'graphql';
import { afterArg, DEFAULT_PAGE_SIZE, pageFirstArg } from './args.js';
import { builder } from './builder.js';
import { type CursorKey, decodeCursor, encodeCursor } from './cursors.js';
import { selects } from './selection.js';

/** A connection field's page arguments: `first` and `after` (src/schema/args.ts says their rules). */
export const pageArgs = builder.args((t) => ({
  first: t.int(pageFirstArg),
  after: t.string(afterArg),
}));

/**
 * One page of a connection field, the way every connection answers: `after` is decoded
 * first (a bad cursor fails before any read), the count starts beside the page when
 * `totalCount` is selected (see totalCountFor), then `first` nodes (default
 * DEFAULT_PAGE_SIZE) are listed after that position. `nodes` picks them out of the
 * store's page.
 */
export async function resolvePage<T, A, P extends { hasNextPage: boolean }>(spec: {
  cursor: CursorKey<T, A>;
  args: { first?: number | null; after?: string | null };
  info: GraphQLResolveInfo;
  count: () => Promise<number>;
  list: (page: { first: number; after: A | null }) => Promise<P>;
  nodes: (page: P) => T[];
}) {
  const { cursor, args } = spec;
  const after = args.after
    ? cursor.position(decodeCursor(cursor.kind, args.after, cursor.shape))
    : null;
  const totalCount = totalCountFor(spec.info, spec.count);
  const page = await spec.list({ first: args.first ?? DEFAULT_PAGE_SIZE, after });
  return connection(
    spec.nodes(page),
    page.hasNextPage,
    (node) => encodeCursor(cursor.kind, cursor.of(node)),
    totalCount,
  );
}

/**
 * A connection result: the nodes, a lazy total, and cursors encoded only when a client
 * reads them (the REST adapters never do, and a page of 100 would encode 100).
 */
function connection<T>(
  nodes: T[],
  hasNextPage: boolean,
  cursorOf: (node: T) => string,
  totalCount: () => Promise<number>,
) {
  const edges = nodes.map((node) => ({
    node,
    get cursor() {
      return cursorOf(node);
    },
  }));
  return {
    edges,
    pageInfo: {
      hasNextPage,
      hasPreviousPage: false,
      get startCursor() {
        return edges[0]?.cursor ?? null;
      },
      get endCursor() {
        return edges.at(-1)?.cursor ?? null;
      },
    },
    totalCount,
  };
}

/**
 * The connection's `totalCount`: when the query selects it, the count starts now, beside
 * the page's own query rather than after it; otherwise it runs only if asked for.
 */
function totalCountFor(
  info: GraphQLResolveInfo,
  count: () => Promise<number>,
): () => Promise<number> {
  if (!selects(info, 'totalCount')) return count;
  const started = count();
  // Awaited by the totalCount field; if the page fails first, nobody awaits it.
  started.catch(() => {});
  return () => started;
}

/**
 * Every connection's `totalCount`: the builder's `Connection` shape makes each connection
 * resolver return it (as `resolvePage` does), so the count runs only when a client asks.
 */
builder.globalConnectionField('totalCount', (t) =>
  t.int({
    description: 'Every match of the filter, ignoring pagination.',
    resolve: (connection) => connection.totalCount(),
  }),
);

type Types = typeof builder extends PothosSchemaTypes.SchemaBuilder<infer S> ? S : never;

/** A Relay connection type for `ref`: `<Name>Connection` and `<Name>Edge`. */
export function connectionType<T>(ref: ObjectRef<Types, T>, name: string) {
  // Shapes only: what they hold is guarded by the node type's own rule.
  return builder.connectionObject(
    { type: ref, name: `${name}Connection`, authScopes: { authenticated: true } },
    { name: `${name}Edge`, authScopes: { authenticated: true } },
  );
}
