import {
  type Collections,
  INDEXES,
  type IndexSpec,
  SHARDED_COLLECTIONS,
} from '../../src/store/collections.js';

/**
 * The declared query plan: does an index the store declares (INDEXES) or `_id` serve a
 * query the store sends, the way MongoDB's planner would use it on a cluster sharded on
 * {workspaceId, dataset}? FerretDB's SQLite backend ignores secondary indexes, so this
 * judges the plan from the query's shape instead of asking the test database. The rules
 * (docs/SCALING.md, "How the index test works"):
 *
 * 1. Each condition is classed as *equality* (a value, `$eq`, `$in`, `$all`), *null* (equal
 *    to null: "not yet stamped", e.g. `invalidAt: null`), or *range* (`$gt`, `$lte`, `$ne`,
 *    `$exists`, ...). `$in` counts as equality: MongoDB scans each value's point and
 *    merges the scans in sort order, so equality-sort-range still holds (up to 200
 *    values, more than a DataLoader batch here).
 * 2. `$or`: one whose branches hold an equality (it selects documents, e.g. subject or
 *    object, or a keyset cursor's tie-break) is expanded, and every branch, with the rest
 *    of the query, must be served. One with only null and range conditions (the temporal
 *    bounds `invalidAt` null or after T) is checked on the documents the scan reads, like
 *    a range on a field the index lacks. `$and` is flattened; `$nor` is a residual filter.
 * 3. The tenant: on a sharded collection every query binds `workspaceId` by equality (and
 *    an upsert both shard key fields), else every shard would be asked; an index may be
 *    used only with the workspace bound unless it is declared `allTenants`.
 * 4. `_id` equality (or `$in`) is always served: a point lookup.
 * 5. Otherwise an index serves the query when: its leading keys bound by equality (or
 *    null) form the prefix P, which is not empty; every equality field is in P, unless P
 *    already holds a key beyond the tenant (then the few documents that key selects are
 *    filtered); the sort keys not bound by equality come right after P, in order, all in
 *    the index's directions or all reversed; range conditions come after the sort or are
 *    not index keys at all. A range on a key between P and the sort breaks the sort
 *    (equality, sort, range).
 * 6. An `allTenants` index of an unsharded collection may be walked whole: an empty filter
 *    (a count of the registry), or an empty prefix followed by the sort.
 */

/** A condition's value with the data blanked: `null` stays, every other value is `'?'`. */
type Blank = null | '?';

/** A recorded filter: field names and operators kept, values blanked. */
type FilterShape = { [key: string]: unknown };

export interface RecordedQuery {
  filter: FilterShape;
  sort?: Record<string, number>;
  upsert?: boolean;
  /** Aggregation stages after the leading `$match` and `$sort`, for the report. */
  stages?: string[];
}

/** One store command as the recorder keeps it. */
export interface RecordedCommand {
  /** `store:<function>`, the driver `comment` every store command carries. */
  comment: string;
  command: string;
  collection: string;
  queries: RecordedQuery[];
}

const FILTERED_COMMANDS = new Set([
  'find',
  'aggregate',
  'count',
  'distinct',
  'update',
  'delete',
  'findAndModify',
]);

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function blank(value: unknown): Blank {
  return value === null || value === undefined ? null : '?';
}

function conditionShape(value: unknown): unknown {
  if (!isPlainObject(value) || !Object.keys(value).every((k) => k.startsWith('$'))) {
    return blank(value);
  }
  const out: Record<string, unknown> = {};
  for (const [op, operand] of Object.entries(value)) {
    if (Array.isArray(operand) && (op === '$in' || op === '$nin' || op === '$all')) {
      out[op] = [...new Set(operand.map(blank))].sort();
    } else if (op === '$not') {
      out[op] = conditionShape(operand);
    } else {
      out[op] = blank(operand);
    }
  }
  return out;
}

/** A filter with its values blanked, so one query shape is recorded once. */
function filterShape(filter: unknown): FilterShape {
  if (!isPlainObject(filter)) return {};
  const out: FilterShape = {};
  for (const [key, value] of Object.entries(filter)) {
    if ((key === '$and' || key === '$or' || key === '$nor') && Array.isArray(value)) {
      out[key] = value.map(filterShape);
    } else if (key.startsWith('$')) {
      out[key] = '?';
    } else {
      out[key] = conditionShape(value);
    }
  }
  return out;
}

function sortShape(sort: unknown): Record<string, number> | undefined {
  // The driver hands a find's sort over as a Map.
  const entries =
    sort instanceof Map ? [...sort.entries()] : isPlainObject(sort) ? Object.entries(sort) : [];
  if (entries.length === 0) return undefined;
  return Object.fromEntries(entries.map(([k, v]) => [String(k), v === -1 ? -1 : 1]));
}

function query(filter: unknown, sort?: unknown, upsert?: unknown): RecordedQuery {
  const q: RecordedQuery = { filter: filterShape(filter) };
  const s = sortShape(sort);
  if (s) q.sort = s;
  if (upsert === true) q.upsert = true;
  return q;
}

/**
 * What to record of a command the driver is about to send: null unless it is a store
 * command (its comment starts with `store:`) that selects documents.
 */
export function recordedCommand(
  commandName: string,
  command: Record<string, unknown>,
): RecordedCommand | null {
  const comment = command.comment;
  if (typeof comment !== 'string' || !comment.startsWith('store:')) return null;
  if (!FILTERED_COMMANDS.has(commandName)) return null;
  let queries: RecordedQuery[];
  switch (commandName) {
    case 'find':
      queries = [query(command.filter, command.sort)];
      break;
    case 'aggregate': {
      const pipeline = Array.isArray(command.pipeline) ? (command.pipeline as unknown[]) : [];
      let i = 0;
      let filter: unknown = {};
      let sort: unknown;
      const stage = (n: number) => (isPlainObject(pipeline[n]) ? pipeline[n] : {});
      if ('$match' in stage(i)) filter = stage(i++).$match;
      if ('$sort' in stage(i)) sort = stage(i++).$sort;
      const q = query(filter, sort);
      const rest = pipeline.slice(i).map((s) => Object.keys(isPlainObject(s) ? s : {})[0] ?? '?');
      if (rest.length > 0) q.stages = rest;
      queries = [q];
      break;
    }
    case 'count':
    case 'distinct':
      queries = [query(command.query)];
      break;
    case 'update':
      queries = ((command.updates as Record<string, unknown>[] | undefined) ?? []).map((u) =>
        query(u.q, undefined, u.upsert),
      );
      break;
    case 'delete':
      queries = ((command.deletes as Record<string, unknown>[] | undefined) ?? []).map((d) =>
        query(d.q),
      );
      break;
    default:
      queries = [query(command.query, command.sort, command.upsert)];
  }
  const unique = [...new Map(queries.map((q) => [JSON.stringify(q), q])).values()];
  return {
    comment,
    command: commandName,
    collection: String(command[commandName]),
    queries: unique,
  };
}

// ---- Judging ----

type Kind = 'eq' | 'null' | 'range';
/** One conjunction of field conditions, after `$and` is flattened and `$or` expanded. */
type Conjunct = Map<string, Kind>;

/** More `$or` combinations than this is not a query the store sends. */
const MAX_CONJUNCTS = 256;

const EQUALITY_OPS = new Set(['$eq', '$in', '$all']);

function kindOf(condition: unknown): Kind {
  if (!isPlainObject(condition)) return condition === null ? 'null' : 'eq';
  const ops = Object.entries(condition);
  if (ops.length === 0) return 'eq';
  const kinds = ops.map(([op, operand]): Kind => {
    if (!EQUALITY_OPS.has(op)) return 'range';
    const values = Array.isArray(operand) ? operand : [operand];
    return op !== '$all' && values.length > 0 && values.every((v) => v === null) ? 'null' : 'eq';
  });
  if (kinds.includes('range')) return 'range';
  return kinds.includes('eq') ? 'eq' : 'null';
}

function merge(a: Kind | undefined, b: Kind): Kind {
  if (a === undefined) return b;
  if (a === 'eq' || b === 'eq') return 'eq';
  return a === 'range' || b === 'range' ? 'range' : 'null';
}

function cross(left: Conjunct[], right: Conjunct[]): Conjunct[] | string {
  if (left.length * right.length > MAX_CONJUNCTS) return 'too many $or combinations to judge';
  return left.flatMap((l) =>
    right.map((r) => {
      const out = new Map(l);
      for (const [field, kind] of r) out.set(field, merge(out.get(field), kind));
      return out;
    }),
  );
}

/** The filter as alternatives (one per combination of selecting `$or` branches). */
function conjuncts(filter: FilterShape): Conjunct[] | string {
  let alternatives: Conjunct[] = [new Map()];
  for (const [key, value] of Object.entries(filter)) {
    let next: Conjunct[] | string;
    if (key === '$and') {
      next = alternatives;
      for (const sub of value as FilterShape[]) {
        const parts = conjuncts(sub);
        if (typeof parts === 'string') return parts;
        next = cross(next, parts);
        if (typeof next === 'string') return next;
      }
    } else if (key === '$or') {
      const branches: Conjunct[] = [];
      for (const sub of value as FilterShape[]) {
        const parts = conjuncts(sub);
        if (typeof parts === 'string') return parts;
        branches.push(...parts);
      }
      const selects = branches.some((b) => [...b.values()].includes('eq'));
      next = selects ? cross(alternatives, branches) : alternatives;
    } else if (key === '$nor' || key === '$comment') {
      next = alternatives;
    } else if (key.startsWith('$')) {
      return `${key} cannot be judged`;
    } else {
      const kind = kindOf(value);
      next = cross(alternatives, [new Map([[key, kind]])]);
    }
    if (typeof next === 'string') return next;
    alternatives = next;
  }
  return alternatives;
}

export type Verdict = { served: true; by: string[] } | { served: false; why: string };

export interface Declared {
  indexes: { [collection: string]: IndexSpec[] };
  sharded: readonly string[];
}

const STORE: Declared = {
  indexes: INDEXES as { [K in keyof Collections]: IndexSpec[] },
  sharded: SHARDED_COLLECTIONS,
};

const TENANT = new Set(['workspaceId', 'dataset']);

interface Attempt {
  ok: boolean;
  /**
   * How well the index fits (bound leading keys first, then keys the query names): the
   * best one is reported as serving the query, or, if none does, explains why.
   */
  score: number;
  why: string;
}

function attempt(
  index: IndexSpec,
  fields: Conjunct,
  sort: [string, number][],
  sharded: boolean,
): Attempt {
  const keys = Object.entries(index.key);
  const bound = (f: string) => fields.get(f) === 'eq' || fields.get(f) === 'null';
  const named = keys.filter(([f]) => fields.has(f) || sort.some(([s]) => s === f)).length;
  const fail = (prefix: number, why: string): Attempt => ({
    ok: false,
    score: prefix * 100 + named,
    why,
  });
  if (!index.allTenants && fields.get('workspaceId') !== 'eq') {
    return fail(0, 'the workspace is not bound by equality');
  }
  let p = 0;
  while (p < keys.length && bound(keys[p]![0])) p++;
  const prefix = keys.slice(0, p).map(([f]) => f);
  const sortKeys = sort.filter(([f]) => !bound(f));
  if (p === 0) {
    const walkable = index.allTenants && !sharded && (fields.size === 0 || sortKeys.length > 0);
    if (!walkable) return fail(0, `its first key ${keys[0]?.[0]} is not bound by equality`);
  }
  if (!prefix.some((f) => !TENANT.has(f))) {
    const missing = [...fields].filter(([f, k]) => k === 'eq' && !prefix.includes(f));
    if (missing.length > 0) {
      const names = missing.map(([f]) => f).join(', ');
      return fail(p, `equality on ${names} is not among its leading keys`);
    }
  }
  let direction = 0;
  for (const [j, [field, dir]] of sortKeys.entries()) {
    const key = keys[p + j];
    if (!key || key[0] !== field) {
      if (key && fields.get(key[0]) === 'range') {
        return fail(p, `the range on ${key[0]} comes before the sort on ${field} (ESR)`);
      }
      return fail(
        p,
        `the sort on ${field} does not follow its bound keys (${key ? `${key[0]} comes next` : 'it has no more keys'})`,
      );
    }
    const same = Math.sign(dir) === Math.sign(key[1]) ? 1 : -1;
    if (direction !== 0 && same !== direction) {
      return fail(p, `the sort directions match neither its order nor the reverse`);
    }
    direction = same;
  }
  return { ok: true, score: p * 100 + named, why: '' };
}

/** The index an ideal plan would use: tenant, other equality keys, then the sort. */
function suggestion(fields: Conjunct, sort: [string, number][]): string {
  const eq = [...fields].filter(([, k]) => k === 'eq').map(([f]) => f);
  const keys = [
    ...['workspaceId', 'dataset'].filter((f) => eq.includes(f)),
    ...eq.filter((f) => !TENANT.has(f) && f !== '_id').sort(),
  ];
  const parts = keys.map((f) => `${f}: 1`);
  for (const [f, d] of sort) if (!keys.includes(f)) parts.push(`${f}: ${d}`);
  return `{ ${parts.join(', ')} }`;
}

function judgeConjunct(
  collection: string,
  fields: Conjunct,
  query: RecordedQuery,
  declared: Declared,
): Verdict {
  const sharded = declared.sharded.includes(collection);
  const sort = Object.entries(query.sort ?? {});
  if (sharded && query.upsert) {
    if (fields.get('workspaceId') !== 'eq' || fields.get('dataset') !== 'eq') {
      return {
        served: false,
        why: 'an upsert on a sharded collection must bind workspaceId and dataset (the shard key)',
      };
    }
  }
  if (fields.get('_id') === 'eq') {
    if (!sharded || fields.get('workspaceId') === 'eq') return { served: true, by: ['_id_'] };
    return {
      served: false,
      why: 'an _id lookup without workspaceId: a sharded cluster would ask every shard',
    };
  }
  const attempts = (declared.indexes[collection] ?? []).map((index) => ({
    index,
    result: attempt(index, fields, sort, sharded),
  }));
  attempts.sort((a, b) => b.result.score - a.result.score);
  const served = attempts.find((a) => a.result.ok);
  if (served) return { served: true, by: [served.index.name] };
  const best = attempts[0];
  const closest = best ? `closest, ${best.index.name}: ${best.result.why}; ` : '';
  const tenant =
    sharded && fields.get('workspaceId') !== 'eq'
      ? 'the workspace is not bound, so a sharded cluster would ask every shard; '
      : '';
  return {
    served: false,
    why: `no declared index serves it (${tenant}${closest}an index ${suggestion(fields, sort)} would)`,
  };
}

/** Whether the declared indexes serve one recorded query (every `$or` branch of it). */
export function judgeQuery(
  collection: string,
  query: RecordedQuery,
  declared: Declared = STORE,
): Verdict {
  if (!(collection in declared.indexes)) {
    return { served: false, why: `${collection} is not a collection of the store` };
  }
  const alternatives = conjuncts(query.filter);
  if (typeof alternatives === 'string') return { served: false, why: alternatives };
  const by = new Set<string>();
  for (const fields of alternatives) {
    const verdict = judgeConjunct(collection, fields, query, declared);
    if (!verdict.served) return verdict;
    for (const name of verdict.by) by.add(name);
  }
  return { served: true, by: [...by] };
}

/** A recorded command, one line, for a failure report. */
export function describeQuery(command: RecordedCommand, query: RecordedQuery): string {
  const sort = query.sort ? ` sort ${JSON.stringify(query.sort)}` : '';
  const upsert = query.upsert ? ' (upsert)' : '';
  return `${command.comment} ${command.command} ${command.collection} ${JSON.stringify(query.filter)}${sort}${upsert}`;
}
