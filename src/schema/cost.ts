import { type GraphQLField, getNamedType, isLeafType, isListType, isNonNullType } from 'graphql';
import {
  DEFAULT_NESTED_LIST_SIZE,
  DEFAULT_PAGE_SIZE,
  MAX_NESTED_LIST_SIZE,
  MAX_PAGE_SIZE,
} from './args.js';

/**
 * The query cost model, declared next to each field (@pothos/plugin-complexity) and
 * checked before anything runs (src/http/queryLimits.ts). A cost is an upper bound on
 * what the operation can make the gateway do, in two units:
 *
 * - every object the answer can hold costs 1 (a fact, an entity, an episode, a memory,
 *   a dataset; the connection's edge and pageInfo wrappers are free), whether it is read
 *   by its own query or batched by a DataLoader;
 * - every database query a field runs on its own (not batched across parents: a page
 *   with its count, a fact's history) costs 10 more.
 *
 * Scalars and enums are free: they are read with the object that holds them. A list
 * multiplies what is selected under it by its real bound: `first` however it is given
 * (literal, variable or default; clamped to its maximum, which the argument's own rule
 * then refuses), and for lists without `first` the hard cap its description states.
 */
const OBJECT_COST = 1;
export const QUERY_COST = 10;

/**
 * An object read through a loader, batched across its parents (a fact's entity, a
 * dataset's fact by id): the object alone. Declared on each such field all the same, so
 * the schema walk can tell a field that does I/O and forgot its cost from one that did not.
 */
export const LOADED_OBJECT_COST = OBJECT_COST;

/** An object read, or written, by a query of its own (a mutation and its answer). */
export const OWN_QUERY_OBJECT_COST = OBJECT_COST + QUERY_COST;

/** Hard caps of the lists without a `first` argument (each stated in the field's description). */
export const WHOLE_LIST_CAP = 10_000;

/** Cost of a field that reads `bound` objects, with its own query or through a loader. */
export function listCost(bound: number, ownQuery: boolean) {
  return { field: bound * OBJECT_COST + (ownQuery ? QUERY_COST : 0), multiplier: bound };
}

/** A list bounded by a `first` argument: the value asked for, within [0, max]. */
export function boundOf(first: unknown, fallback: number, max: number): number {
  if (typeof first !== 'number' || !Number.isFinite(first)) return fallback;
  return Math.min(Math.max(Math.trunc(first), 0), max);
}

/**
 * A connection field: its page and count queries; the nodes (1 each) are paid by the
 * edges' `node` field, `first` times.
 */
export const pageComplexity = (args: { first?: number | null }) => ({
  field: QUERY_COST,
  multiplier: boundOf(args.first, DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE),
});

/**
 * A list under each of many parents, bounded by `first` and read by a loader batched
 * across the parents: `first` objects, no query of its own.
 */
export const nestedListComplexity = (args: { first?: number | null }) =>
  listCost(boundOf(args.first, DEFAULT_NESTED_LIST_SIZE, MAX_NESTED_LIST_SIZE), false);

/** Fields whose cost is not declared: leaves free, objects 1. Lists must declare theirs. */
export function defaultFieldCost(
  _args: unknown,
  _ctx: unknown,
  // biome-ignore lint/suspicious/noExplicitAny: the plugin passes the field with any context and arguments
  field: GraphQLField<unknown, any, any>,
) {
  const type = isNonNullType(field.type) ? field.type.ofType : field.type;
  if (isLeafType(getNamedType(field.type))) return 0;
  // A list of objects whose bound nobody declared: charged as the largest list there is,
  // and the schema walk (test/graphql/queryCost.test.ts) refuses such a field anyway.
  if (isListType(type)) return listCost(WHOLE_LIST_CAP, true);
  return OBJECT_COST;
}
