import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { BSON, type Collection, type Document, type Filter, MongoClient } from 'mongodb';

const { EJSON } = BSON;

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningFerretDb, startFerretDb } from '../../src/embedded/ferretdb.js';
import { propertySeed } from '../helpers/propertySeed.js';

/**
 * Queries on fields the store declares scalar run whole in SQL (embedded-db/README.md):
 * filter, sort, limit and count, served by indexes. Here a collection with declared fields
 * (and undeclared ones holding arrays and mixed types) lives in two embedded databases, one
 * told the declaration and one not (which filters, sorts and counts in Go, as upstream
 * FerretDB does); random documents and random queries must get byte-identical answers from
 * both, and the declared one must really have pushed them. Writes that would break the
 * declaration are refused and change nothing.
 *
 * The seed varies per run and is printed; PROPERTY_SEED repeats a run, PROPERTY_RUNS sets
 * how many.
 */

const DECLARED = {
  items: {
    workspaceId: 'string',
    key: 'string',
    at: 'date',
    n: 'number',
    flag: 'bool',
    words: 'terms',
  },
};
const INDEXES = [
  { workspaceId: 1, at: -1, _id: -1 },
  { workspaceId: 1, key: 1, at: -1, _id: -1 },
  { workspaceId: 1, n: 1, _id: 1 },
  // On a terms field: a table of its keys, one row per element, kept by triggers; a query
  // on the fields it holds (and a sort on them) is answered from the keys alone.
  { workspaceId: 1, words: 1, at: -1, _id: -1, n: 1, key: 1 },
] as const;

let dir: string;
const servers: RunningFerretDb[] = [];
const clients: MongoClient[] = [];
let pushed: Collection<Document>;
let plain: Collection<Document>;

async function open(name: string, scalarFields: object | null): Promise<Collection<Document>> {
  const server = await startFerretDb(join(dir, name), undefined, undefined, scalarFields);
  servers.push(server);
  const client = await MongoClient.connect(server.uri);
  clients.push(client);
  const items = client.db('declared').collection('items');
  for (const key of INDEXES) await items.createIndex(key);
  return items;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'embedded-declared-'));
  [pushed, plain] = await Promise.all([open('pushed', DECLARED), open('plain', null)]);
}, 120_000);

afterAll(async () => {
  for (const client of clients) await client.close();
  for (const server of servers) await server.stop();
  rmSync(dir, { recursive: true, force: true });
});

const T0 = Date.UTC(2026, 0, 1);
// Few distinct values, so equal values (ties, duplicates) are frequent.
const KEYS = ['a', 'B', 'b', 'é', 'e\u0301', 'a b', '', 'z&<"\\'];
const genDate = fc.integer({ min: 0, max: 6 }).map((i) => new Date(T0 + i * 3_600_000));
const genNumber = fc.oneof(fc.integer({ min: -3, max: 3 }), fc.constantFrom(0.5, -1.5, 2.25));
/** A declared field: absent, null, or its type. */
const declaredValue = <T>(value: fc.Arbitrary<T>) =>
  fc.oneof(
    { weight: 1, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: fc.constant(null) },
    { weight: 4, arbitrary: value },
  );
/** An undeclared field: anything, arrays and mixed types included. */
const genAnything = fc.oneof(
  fc.constant(undefined),
  fc.constant(null),
  fc.constantFrom(...KEYS),
  genNumber,
  genDate,
  fc.boolean(),
  fc.array(fc.oneof(fc.constantFrom(...KEYS), genNumber), { maxLength: 3 }),
  fc.constant({ x: 1 }),
);

const genDocs = fc
  .array(
    fc.record({
      workspaceId: fc.constantFrom('t1', 't2'),
      key: declaredValue(fc.constantFrom(...KEYS)),
      at: declaredValue(genDate),
      n: declaredValue(genNumber),
      flag: declaredValue(fc.boolean()),
      words: declaredValue(fc.array(fc.constantFrom(...KEYS), { maxLength: 3 })),
      tags: genAnything,
      other: genAnything,
    }),
    { minLength: 0, maxLength: 30 },
  )
  .map((docs) =>
    docs.map((doc, i) => {
      const out: Document = { _id: `d${String(i).padStart(2, '0')}` };
      for (const [k, v] of Object.entries(doc)) if (v !== undefined) out[k] = v;
      return out;
    }),
  );

/** A value to compare a field with: usually of its declared type, sometimes another. */
const comparand = (field: 'key' | 'at' | 'n' | 'flag' | 'words' | 'tags' | 'other') => {
  const own = {
    key: fc.constantFrom(...KEYS),
    words: fc.constantFrom(...KEYS),
    at: genDate,
    n: genNumber,
    flag: fc.boolean(),
    tags: fc.constantFrom(...KEYS),
    other: genNumber,
  }[field] as fc.Arbitrary<unknown>;
  return fc.oneof(
    { weight: 5, arbitrary: own },
    { weight: 1, arbitrary: genAnything.filter((v) => v !== undefined) },
  );
};

const genField = fc.constantFrom(
  'key',
  'at',
  'n',
  'flag',
  'words',
  'tags',
  'other',
  '_id' as const,
);
const genClause: fc.Arbitrary<Filter<Document>> = genField.chain((field) => {
  if (field === '_id') {
    return fc.oneof(
      fc.integer({ min: 0, max: 31 }).map((i) => ({ _id: `d${String(i).padStart(2, '0')}` })),
      fc.array(fc.integer({ min: 0, max: 31 }), { maxLength: 4 }).map((is) => ({
        _id: { $in: is.map((i) => `d${String(i).padStart(2, '0')}`) },
      })),
    ) as unknown as fc.Arbitrary<Filter<Document>>;
  }
  const value = comparand(field);
  return fc.oneof(
    value.map((v) => ({ [field]: v })),
    fc.constant({ [field]: null }),
    fc
      .tuple(
        fc.constantFrom('$eq', '$ne', '$gt', '$gte', '$lt', '$lte'),
        fc.oneof(value, fc.constant(null)),
      )
      .map(([op, v]) => ({ [field]: { [op]: v } })),
    fc
      .array(fc.oneof(value, fc.constant(null)), { maxLength: 3 })
      .map((vs) => ({ [field]: { $in: vs } })),
    fc
      .tuple(fc.constantFrom('$gt', '$gte'), value, fc.constantFrom('$lt', '$lte'), value)
      .map(([a, v, b, w]) => ({ [field]: { [a]: v, [b]: w } })),
    fc.array(value, { maxLength: 3 }).map((vs) => ({ [field]: { $all: vs } })),
  );
});
const genFilter: fc.Arbitrary<Filter<Document>> = fc
  .tuple(
    fc.option(fc.constantFrom('t1', 't2'), { nil: null }),
    fc.array(
      fc.oneof(
        { weight: 3, arbitrary: genClause },
        {
          weight: 1,
          arbitrary: fc.array(genClause, { minLength: 1, maxLength: 3 }).map((cs) => ({ $or: cs })),
        },
      ),
      { maxLength: 3 },
    ),
  )
  .map(([workspaceId, clauses]) => {
    const all = [...(workspaceId ? [{ workspaceId }] : []), ...clauses];
    return all.length === 0 ? {} : { $and: all };
  });
// Every sort ends in `_id` (unique), as every store sort ends in a unique id: ties are
// ordered by neither side (Go's sort is not stable).
const genSort = fc.constantFrom<Record<string, 1 | -1> | null>(
  null,
  { at: -1, _id: -1 },
  { key: 1, at: -1, _id: -1 },
  { n: 1, _id: 1 },
  { flag: -1, n: -1, _id: 1 },
  { tags: 1, _id: 1 },
  { words: 1, _id: 1 },
);
const genQuery = fc
  .record({
    filter: genFilter,
    sort: genSort,
    skip: fc.integer({ min: 0, max: 3 }),
    limit: fc.integer({ min: 0, max: 6 }),
  })
  // Without a sort, the order (and so which documents a skip or limit keeps) is unspecified.
  .map((q) => (q.sort ? q : { ...q, skip: 0, limit: 0 }));
/** Writes after the inserts, on a terms field's values especially (its index's keys). */
const genWrites = fc
  .array(
    fc.tuple(
      fc.integer({ min: 0, max: 31 }).map((i) => `d${String(i).padStart(2, '0')}`),
      fc.oneof(
        fc
          .array(fc.constantFrom(...KEYS), { maxLength: 3 })
          .map((words) => ({ update: { $set: { words } } })),
        fc.constant({ update: { $unset: { words: '' } } }),
        fc.constantFrom(...KEYS).map((key) => ({ update: { $set: { key } } })),
        fc.constant({ remove: true as const }),
      ),
    ),
    { maxLength: 6 },
  )
  .map((list) =>
    list.map(([id, w]) => async (items: Collection<Document>) => {
      if ('remove' in w) await items.deleteOne({ _id: id as never });
      else await items.updateOne({ _id: id as never }, w.update as Document);
    }),
  );
type Query = typeof genQuery extends fc.Arbitrary<infer Q> ? Q : never;

async function answer(items: Collection<Document>, q: Query) {
  let cursor = items.find(q.filter);
  if (q.sort) cursor = cursor.sort(q.sort);
  cursor = cursor.skip(q.skip).limit(q.limit);
  const found = await cursor.toArray().then(
    (docs) => EJSON.stringify(q.sort ? docs : docs.sort((a, b) => (a._id < b._id ? -1 : 1))),
    (error: { code?: number; message?: string }) => `error ${error.code}`,
  );
  const counted = await items.countDocuments(q.filter).then(
    (n) => n,
    (error: { code?: number }) => `error ${error.code}`,
  );
  // countDocuments' `limit`: counted in SQL up to the limit (recall's view size).
  const countedUpTo =
    q.limit > 0
      ? await items.countDocuments(q.filter, { limit: q.limit }).then(
          (n) => n,
          (error: { code?: number }) => `error ${error.code}`,
        )
      : null;
  return { found, counted, countedUpTo };
}

describe('a declared collection answers as one without the declaration', () => {
  it('random documents and queries: byte-identical finds (sorted, skipped, limited) and counts', async () => {
    const seed = propertySeed('declared collection');
    // A case one run in forty meets escapes 400 runs once in 25,000 ((39/40)^400).
    const numRuns = Number(process.env.PROPERTY_RUNS ?? 400);
    let queries = 0;
    let nonEmpty = 0;
    let termCounts = 0;
    let nonEmptyTermCounts = 0;
    await fc.assert(
      fc.asyncProperty(
        genDocs,
        genWrites,
        fc.array(genQuery, { minLength: 20, maxLength: 20 }),
        async (docs, writes, qs) => {
          await Promise.all([pushed.deleteMany({}), plain.deleteMany({})]);
          if (docs.length > 0) await Promise.all([pushed.insertMany(docs), plain.insertMany(docs)]);
          // Updates and deletes after the inserts: a terms index's keys follow them.
          for (const write of writes) await Promise.all([write(pushed), write(plain)]);
          // A term's count in a tenant, read from the terms index's keys alone.
          for (const workspaceId of ['t1', 't2']) {
            for (const [i, word] of KEYS.entries()) {
              // Also with a condition on a field after the term in the index, and of either of
              // two terms (a document holding both has a key for each).
              for (const filter of [
                { workspaceId, words: word },
                { workspaceId, words: word, at: { $lte: new Date(T0 + 3 * 3_600_000) } },
                { workspaceId, words: { $in: [word, KEYS[(i + 1) % KEYS.length]] } },
              ]) {
                const [a, b] = await Promise.all([
                  pushed.countDocuments(filter),
                  plain.countDocuments(filter),
                ]);
                expect(a, EJSON.stringify(filter)).toBe(b);
                termCounts++;
                if (a > 0) nonEmptyTermCounts++;
              }
            }
          }
          for (const q of qs) {
            const [a, b] = await Promise.all([answer(pushed, q), answer(plain, q)]);
            expect(a, EJSON.stringify(q)).toEqual(b);
            queries++;
            if (typeof a.counted === 'number' && a.counted > 0) nonEmpty++;
          }
        },
      ),
      { seed, numRuns, endOnFailure: true },
    );
    // The generators make queries that match something, not only empty answers.
    expect(queries).toBe(20 * numRuns);
    expect(nonEmpty).toBeGreaterThan(2.5 * numRuns);
    expect(termCounts).toBe(48 * numRuns);
    expect(nonEmptyTermCounts).toBeGreaterThan(1.25 * numRuns);
  }, 600_000);
});

describe('the declared collection is index-served', () => {
  const explain = (items: Collection<Document>, command: Document) =>
    items.db.command({ explain: { find: 'items', ...command } });

  it('a workspaceId range sorted and limited runs whole in SQL, in the index', async () => {
    const command = {
      filter: { workspaceId: 't1', at: { $lte: new Date(T0 + 3 * 3_600_000) } },
      sort: { at: -1, _id: -1 },
      limit: 3,
    };
    const plan = await explain(pushed, command);
    expect(plan).toMatchObject({ filterPushdown: true, sortPushdown: true, limitPushdown: true });
    expect(plan.queryPlanner.Plan.join('\n')).toMatch(
      /SEARCH .* USING INDEX .*workspaceId_1_at_-1__id_-1/,
    );
    expect(plan.queryPlanner.Plan.join('\n')).not.toMatch(/TEMP B-TREE/);
    // Without the declaration the same query is sorted and limited in Go.
    expect(await explain(plain, command)).toMatchObject({
      sortPushdown: false,
      limitPushdown: false,
    });
  });

  it('an $or of two keys is served by the key index, not a walk in sort order', async () => {
    const plan = await explain(pushed, {
      filter: {
        $and: [{ workspaceId: 't1' }, { $or: [{ key: 'a' }, { key: { $in: ['b', 'é'] } }] }],
      },
      sort: { at: -1, _id: -1 },
      limit: 5,
    });
    expect(plan.queryPlanner.Plan.join('\n')).toMatch(
      /USING INDEX .*workspaceId_1_key_1_at_-1__id_-1/,
    );
  });

  it('a terms field holding one of some words (or all of them) is a search of its keys', async () => {
    const docs = Array.from({ length: 40 }, (_, i) => ({
      _id: `w${String(i).padStart(2, '0')}`,
      workspaceId: i % 2 ? 't1' : 't2',
      at: new Date(T0 + i * 60_000),
      words: [['a', 'b'], ['b'], ['a', 'é'], []][Math.floor(i / 2) % 4],
    })) as Document[];
    for (const items of [pushed, plain]) {
      await items.deleteMany({});
      await items.insertMany(docs.map((d) => ({ ...d })));
    }
    for (const filter of [
      { workspaceId: 't1', words: { $in: ['a', 'zz'] } },
      { $and: [{ workspaceId: 't1' }, { $or: [{ words: 'é' }, { words: { $in: ['b'] } }] }] },
      { workspaceId: 't1', words: { $all: ['a', 'b'] } },
    ]) {
      const command = { filter, sort: { at: -1, _id: -1 }, limit: 3 };
      const plan = await explain(pushed, command);
      expect(plan, JSON.stringify(filter)).toMatchObject({
        filterPushdown: true,
        sortPushdown: true,
        limitPushdown: true,
      });
      // The keys' table is searched from the tenant's keys, by the index on its columns.
      expect(plan.queryPlanner.Plan.join('\n')).toMatch(
        /SEARCH .*_keys USING (COVERING )?INDEX .*\(k0=\? AND k1=\?/,
      );
      const [a, b] = await Promise.all(
        [pushed, plain].map(async (items) =>
          EJSON.stringify(await items.find(filter).sort({ at: -1, _id: -1 }).limit(3).toArray()),
        ),
      );
      expect(a, JSON.stringify(filter)).toBe(b);
      expect(JSON.parse(a!).length, JSON.stringify(filter)).toBeGreaterThan(0);
    }
    // With every condition and the sort on the index's fields, the keys alone give the first
    // `limit` documents (one search of them, limited: the condition is not searched again
    // over every document holding the term), so only those are read; a condition on another
    // field (`flag`) leaves the limit to the collection's rows.
    const planOf = async (filter: Document) =>
      (await explain(pushed, { filter, sort: { at: -1, _id: -1 }, limit: 3 })).queryPlanner;
    const searches = (plan: { Plan: string[] }) =>
      plan.Plan.filter((line) => /SEARCH .*_keys USING/.test(line)).length;
    const covered = await planOf({ workspaceId: 't1', words: 'a', n: { $gte: 0 } });
    expect(covered.KeysLimit).toBe(true);
    expect(searches(covered)).toBe(1);
    const uncovered = await planOf({ workspaceId: 't1', words: 'a', flag: true });
    expect(uncovered.KeysLimit).toBeUndefined();
    expect(searches(uncovered)).toBe(1);
    // A term's count in a tenant is the keys' count: the collection's rows are not read.
    const count = await explain(pushed, { filter: { workspaceId: 't1', words: 'a' } });
    expect(count.queryPlanner.CountPlan.join('\n')).toMatch(
      /SEARCH .*_keys USING COVERING INDEX .*\(k0=\? AND k1=\?\)$/,
    );
    expect(count.queryPlanner.CountPlan.join('\n')).not.toMatch(/SCAN/);
    const since = await explain(pushed, {
      filter: { workspaceId: 't1', words: 'a', at: { $lte: new Date(T0 + 10 * 60_000) } },
    });
    expect(since.queryPlanner.CountPlan.join('\n')).toMatch(
      /SEARCH .*_keys USING COVERING INDEX .*\(k0=\? AND k1=\? AND k2<\?\)$/,
    );
    expect(await pushed.countDocuments({ workspaceId: 't1', words: 'a' })).toBe(10);
  });

  it('a count of $in terms counts each document once, however many of the terms it holds', async () => {
    // The property test's case: a document holding two of the terms has two keys matching.
    const docs = [
      { _id: 'm1', workspaceId: 't1', at: new Date(T0), words: ['alpha', 'beta', 'gamma'] },
      { _id: 'm2', workspaceId: 't1', at: new Date(T0 + 60_000), words: ['beta'] },
      { _id: 'm3', workspaceId: 't2', at: new Date(T0), words: ['alpha', 'beta'] },
    ] as Document[];
    for (const items of [pushed, plain]) {
      await items.deleteMany({});
      await items.insertMany(docs.map((d) => ({ ...d })));
    }
    const cases: [Filter<Document>, number][] = [
      [{ words: { $in: ['alpha', 'beta'] } }, 3],
      [{ words: { $in: ['alpha', 'beta', 'gamma'] } }, 3],
      [{ words: { $in: ['alpha', 'zz'] } }, 2],
      [{ words: { $in: ['zz', 'yy'] } }, 0],
      [{ workspaceId: 't1', words: { $in: ['alpha', 'beta', 'gamma'] } }, 2],
      [{ workspaceId: 't1', words: { $in: ['gamma', 'zz', 'beta'] } }, 2],
      [{ workspaceId: 't1', words: { $in: ['alpha', 'beta'] }, at: { $lte: new Date(T0) } }, 1],
      [{ $or: [{ words: 'alpha' }, { words: { $in: ['beta', 'gamma'] } }] }, 3],
      [{ words: { $all: ['alpha', 'beta'] } }, 2],
    ];
    for (const [filter, n] of cases) {
      const what = EJSON.stringify(filter);
      for (const items of [pushed, plain]) {
        expect(await items.countDocuments(filter), what).toBe(n);
        expect(await items.countDocuments(filter, { limit: 5 }), what).toBe(n);
        const found = await items.find(filter).sort({ at: -1, _id: -1 }).toArray();
        expect(found.map((d) => d._id).sort(), what).toEqual(
          [...new Set(found.map((d) => d._id))].sort(),
        );
        expect(found, what).toHaveLength(n);
        const limited = await items.find(filter).sort({ at: -1, _id: -1 }).limit(2).toArray();
        expect(limited, what).toHaveLength(Math.min(n, 2));
      }
    }
    // The count is still read from the keys alone.
    const plan = await explain(pushed, {
      filter: { workspaceId: 't1', words: { $in: ['alpha', 'beta'] } },
    });
    expect(plan.queryPlanner.CountPlan.join('\n')).toMatch(/SEARCH .*_keys USING COVERING INDEX/);
    // Its DISTINCT reads a subquery's rows; no table is scanned.
    expect(plan.queryPlanner.CountPlan.join('\n')).not.toMatch(/SCAN \w/);
  });

  it('a sort on an undeclared field, or a comparison with another type, is left to Go', async () => {
    expect(
      await explain(pushed, { filter: { workspaceId: 't1' }, sort: { tags: 1, _id: 1 }, limit: 2 }),
    ).toMatchObject({
      sortPushdown: false,
      limitPushdown: false,
    });
    // `n` is declared a number: a string comparand matches nothing in MongoDB, nor here.
    await pushed.deleteMany({});
    await pushed.insertMany([{ _id: 'x1', workspaceId: 't1', n: 1 } as Document]);
    expect(await pushed.countDocuments({ n: { $lt: 'z' } })).toBe(0);
    expect(await pushed.countDocuments({ n: { $lt: 2 } })).toBe(1);
  });
});

describe('a data directory made before the declaration', () => {
  it('has its indexes built again on the declared values when the store asks for them', async () => {
    const data = join(dir, 'older');
    const command = {
      find: 'items',
      filter: { workspaceId: 't1', at: { $lte: new Date(T0 + 3 * 3_600_000) } },
      sort: { at: -1, _id: -1 } as const,
      limit: 3,
    };
    const plans: string[] = [];
    const answers: string[] = [];
    for (const scalarFields of [null, DECLARED]) {
      const server = await startFerretDb(data, undefined, undefined, scalarFields);
      const client = await MongoClient.connect(server.uri);
      try {
        const items = client.db('declared').collection('items');
        // As the store does at every start: the same indexes, by the same names.
        for (const key of INDEXES) await items.createIndex(key);
        if (scalarFields === null) {
          await items.insertMany(
            Array.from({ length: 20 }, (_, i) => ({
              _id: `o${i}`,
              workspaceId: i % 2 ? 't1' : 't2',
              at: new Date(T0 + (i % 7) * 3_600_000),
              words: i % 3 ? ['a'] : ['b', 'a'],
            })) as Document[],
          );
        }
        plans.push((await items.db.command({ explain: command })).queryPlanner.Plan.join('\n'));
        answers.push(
          EJSON.stringify(await items.find(command.filter).sort(command.sort).limit(3).toArray()),
        );
        // A terms index made before: its keys' table is made and filled from the documents.
        const terms = { ...command, filter: { workspaceId: 't1', words: 'b' } };
        plans.push((await items.db.command({ explain: terms })).queryPlanner.Plan.join('\n'));
        answers.push(
          EJSON.stringify(await items.find(terms.filter).sort(terms.sort).limit(3).toArray()),
        );
      } finally {
        await client.close();
        await server.stop();
      }
    }
    // Declared now: the index serves the sort; the answer is the one before.
    expect(plans[2]).toMatch(/SEARCH .* USING INDEX .*workspaceId_1_at_-1__id_-1/);
    expect(plans[2]).not.toMatch(/TEMP B-TREE/);
    expect(answers[2]).toBe(answers[0]);
    expect(JSON.parse(answers[0]!)).toHaveLength(3);
    expect(plans[3]).toMatch(/SEARCH .*_keys USING (COVERING )?INDEX/);
    expect(answers[3]).toBe(answers[1]);
    expect(JSON.parse(answers[1]!)).toHaveLength(3);
  }, 120_000);
});

describe('writes that would break the declaration', () => {
  it('are refused, naming the field, and change nothing', async () => {
    await pushed.deleteMany({});
    await pushed.insertOne({
      _id: 'kept',
      workspaceId: 't1',
      at: new Date(T0),
      tags: ['any', 1],
    } as Document);
    const before = EJSON.stringify(await pushed.find({}).toArray());
    const refusals: [string, () => Promise<unknown>][] = [
      [
        'an array in a declared field',
        () => pushed.insertOne({ _id: 'bad1', workspaceId: ['t1'] } as Document),
      ],
      [
        'another type in a declared field',
        () => pushed.insertOne({ _id: 'bad2', workspaceId: 't1', at: 'today' } as Document),
      ],
      [
        'a number _id',
        () => pushed.insertOne({ _id: 7, workspaceId: 't1' } as unknown as Document),
      ],
      [
        'an update to another type',
        () => pushed.updateOne({ _id: 'kept' } as Document, { $set: { n: 'many' } }),
      ],
      [
        'an update to an array',
        () => pushed.updateOne({ _id: 'kept' } as Document, { $push: { key: 'x' } as Document }),
      ],
      [
        'a string in a terms field',
        () => pushed.insertOne({ _id: 'bad3', workspaceId: 't1', words: 'a' } as Document),
      ],
      [
        'a number among the terms',
        () => pushed.updateOne({ _id: 'kept' } as Document, { $set: { words: ['a', 1] } }),
      ],
      [
        'an upsert of another type',
        () => pushed.updateOne({ _id: 'new' } as Document, { $set: { flag: 1 } }, { upsert: true }),
      ],
    ];
    for (const [what, write] of refusals) {
      await expect(write(), what).rejects.toThrow(/workspaceId|at|_id|n|key|flag|words/);
    }
    expect(EJSON.stringify(await pushed.find({}).toArray())).toBe(before);
    // The same writes are fine where nothing is declared.
    await plain.deleteMany({});
    await plain.insertOne({ _id: 'bad1', workspaceId: ['t1'] } as Document);
    expect(await plain.countDocuments({})).toBe(1);
  });
});
