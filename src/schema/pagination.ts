/*
 * Forward keyset pagination (`first`, `after`). Cursors are opaque base64url strings of a
 * connection's sort key; a cursor that does not decode, or came from another connection,
 * is a BAD_USER_INPUT error rather than a silent first page.
 */

import type { ObjectRef } from '@pothos/core';
import {
  GraphQLIncludeDirective,
  type GraphQLResolveInfo,
  GraphQLSkipDirective,
  getDirectiveValues,
  Kind,
  type SelectionNode,
  type SelectionSetNode,
} from 'graphql';
import { z } from 'zod';
import { badInput } from '../errors.js';
import { builder } from './builder.js';
import { nestedListCost, pageCost } from './cost.js';

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 100;

export const firstSchema = z
  .number()
  .int('must be a whole number')
  .min(1, `must be between 1 and ${MAX_PAGE_SIZE}`)
  .max(MAX_PAGE_SIZE, `must be between 1 and ${MAX_PAGE_SIZE}`);

/** A connection field's cost: its page and count queries, then `first` nodes. */
export const pageComplexity = pageCost(MAX_PAGE_SIZE, DEFAULT_PAGE_SIZE);

/**
 * Lists under an object without pages of their own (an entity's facts, an episode's
 * facts): `first` up to this many, the most recent (validAt) first.
 */
export const DEFAULT_NESTED_LIST_SIZE = 100;
export const MAX_NESTED_LIST_SIZE = 1000;

export const nestedFirstSchema = z
  .number()
  .int('must be a whole number')
  .min(1, `must be between 1 and ${MAX_NESTED_LIST_SIZE}`)
  .max(MAX_NESTED_LIST_SIZE, `must be between 1 and ${MAX_NESTED_LIST_SIZE}`);

export const afterSchema = z.string().max(1000, 'is not a cursor of this connection');

/** The arguments of a connection: `first` (default 50, at most 100) and `after`. */
export const pageFirstArg = { defaultValue: DEFAULT_PAGE_SIZE, validate: firstSchema } as const;
export const afterArg = { validate: afterSchema } as const;

/** The `first` argument of a nested list, and the list's cost. */
export const nestedFirstArg = {
  defaultValue: DEFAULT_NESTED_LIST_SIZE,
  validate: nestedFirstSchema,
} as const;
export const nestedListComplexity = nestedListCost(MAX_NESTED_LIST_SIZE, DEFAULT_NESTED_LIST_SIZE);

function encodeCursor(kind: string, parts: (string | number)[]): string {
  return Buffer.from(JSON.stringify([kind, ...parts])).toString('base64url');
}

/** What each part of a connection's sort key is: an instant (epoch ms) or a string. */
type CursorShape = readonly ('time' | 'string')[];

const fitsShape = (part: unknown, type: 'time' | 'string') =>
  type === 'string'
    ? typeof part === 'string'
    : typeof part === 'number' &&
      Number.isSafeInteger(part) &&
      !Number.isNaN(new Date(part).getTime());

function decodeCursor(kind: string, cursor: string, shape: CursorShape): (string | number)[] {
  try {
    const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    // A part of the wrong type would become an Invalid Date in the page's filter, which
    // reads as an empty page: a malformed cursor is the client's mistake, said as such.
    if (
      Array.isArray(parsed) &&
      parsed[0] === kind &&
      parsed.length === shape.length + 1 &&
      shape.every((type, i) => fitsShape(parsed[i + 1], type))
    ) {
      return parsed.slice(1) as (string | number)[];
    }
  } catch {
    // fall through
  }
  throw badInput(`after: "${cursor.slice(0, 60)}" is not a cursor of this connection`);
}

/**
 * What a connection's cursors hold and mean: `kind` names the connection (a cursor of
 * another is refused), `shape` types the sort key's parts, `of` reads them from a node
 * and `position` turns decoded ones into the store's keyset position.
 */
export interface CursorKey<T, A> {
  kind: string;
  shape: CursorShape;
  of: (node: T) => (string | number)[];
  position: (parts: (string | number)[]) => A;
}

/** A node's (and the store's keyset position's) instant `S` and id `I`. */
type TimeAndId<S extends string, I extends string> = Record<S, Date> & Record<I, string>;

/** The usual sort key: an instant (epoch ms in the cursor), then an id as the tie-break. */
export function timeThenId<S extends string, I extends string>(
  kind: string,
  time: S,
  id: I,
): CursorKey<TimeAndId<S, I>, TimeAndId<S, I>> {
  return {
    kind,
    shape: ['time', 'string'],
    of: (node) => [node[time].getTime(), node[id]],
    position: (parts) =>
      ({ [time]: new Date(parts[0] as number), [id]: String(parts[1]) }) as TimeAndId<S, I>,
  };
}

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
 * Whether the field being resolved selects `name` directly (or through fragments), as
 * this request's variables decide `@include` / `@skip`: a client asking for the count
 * only on its first page (`totalCount @include(if: $first)`) gets no count after it.
 */
function selects(info: GraphQLResolveInfo, name: string): boolean {
  const included = (node: SelectionNode) =>
    getDirectiveValues(GraphQLSkipDirective, node, info.variableValues)?.if !== true &&
    getDirectiveValues(GraphQLIncludeDirective, node, info.variableValues)?.if !== false;
  const within = (set: SelectionSetNode | undefined): boolean =>
    set?.selections.some(
      (s) =>
        included(s) &&
        (s.kind === Kind.FIELD
          ? s.name.value === name
          : s.kind === Kind.INLINE_FRAGMENT
            ? within(s.selectionSet)
            : within(info.fragments[s.name.value]?.selectionSet)),
    ) ?? false;
  return info.fieldNodes.some((node) => within(node.selectionSet));
}

/**
 * A Relay connection type for `ref` (`<Name>Connection`, `<Name>Edge`) with a
 * `totalCount` that runs the count only when a client asks for it.
 */
type Types = typeof builder extends PothosSchemaTypes.SchemaBuilder<infer S> ? S : never;

export function countedConnection<T>(ref: ObjectRef<Types, T>, name: string) {
  // Shapes only: what they hold is guarded by the node type's own rule.
  const type = builder.connectionObject(
    { type: ref, name: `${name}Connection`, authScopes: { authenticated: true } },
    { name: `${name}Edge`, authScopes: { authenticated: true } },
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
