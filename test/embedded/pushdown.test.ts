import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Collection, type Document, type Filter, MongoClient, ObjectId } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningFerretDb, startFerretDb } from '../../src/embedded/ferretdb.js';

/**
 * The embedded FerretDB is built with a patch (embedded-db/README.md): string equalities,
 * `$in`, `$all`, `$and` and `$or` of them become SQL conditions, so a query decodes only
 * the rows that can match instead of the whole collection, and `_id` is looked up in its
 * index. These pin that (1) every answer is still MongoDB's, including the cases a naive
 * pushdown gets wrong (a string matching an array element, an ObjectId `_id`, a branch of
 * `$or` with nothing to push), and (2) the pushdown is in the binary: `explain` reports it,
 * and a lookup by `_id` uses the index.
 */

let dir: string;
let ferret: RunningFerretDb;
let client: MongoClient;
let docs: Collection<Document>;
const OID = new ObjectId('64b7f0c2a1b2c3d4e5f60718');

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'embedded-pushdown-'));
  ferret = await startFerretDb(join(dir, 'db'));
  client = new MongoClient(ferret.uri);
  await client.connect();
  docs = client.db('pushdown').collection('docs');
  await docs.createIndex({ tenant: 1, kind: 1 });
  await docs.insertMany([
    { _id: 'a' as never, tenant: 't1', kind: 'x', words: ['red', 'car'] },
    { _id: 'b' as never, tenant: 't1', kind: ['x', 'y'], words: ['blue', 'car'] },
    { _id: 'c' as never, tenant: 't1', kind: 'y', words: 'red' },
    { _id: 'd' as never, tenant: 't2', kind: 'x', words: ['red'] },
    { _id: 'e' as never, tenant: 't2', kind: 5 },
    { _id: 'f' as never, tenant: 't2', kind: { x: 1 } },
    { _id: 'g' as never, tenant: 't2' },
    { _id: OID, tenant: 't1', kind: 'x' },
    // Characters JSON encoders may escape differently: the SQL comparison must still match.
    { _id: 'h' as never, tenant: 'AT&T <R&D> "q" \\ é 🚗 \u2028', kind: 'x&y' },
  ]);
}, 120_000);

afterAll(async () => {
  await client?.close();
  await ferret?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const ids = async (filter: Filter<Document>) =>
  (await docs.find(filter).toArray()).map((d) => String(d._id)).sort();

describe('answers as MongoDB does', () => {
  it.each<[string, Filter<Document>, string[]]>([
    [
      'a string equality (matching an array element too)',
      { kind: 'x' },
      ['a', 'b', 'd', String(OID)],
    ],
    ['$eq', { kind: { $eq: 'y' } }, ['b', 'c']],
    ['$in', { kind: { $in: ['y', 'z'] } }, ['b', 'c']],
    ['two equalities', { tenant: 't1', kind: 'x' }, ['a', 'b', String(OID)]],
    ['equalities inside $and', { $and: [{ tenant: 't2' }, { kind: 'x' }] }, ['d']],
    ['$or of equalities', { $or: [{ tenant: 't2', kind: 'x' }, { kind: 'y' }] }, ['b', 'c', 'd']],
    [
      '$or with a branch that pushes nothing',
      { $or: [{ kind: 'y' }, { kind: 5 }] },
      ['b', 'c', 'e'],
    ],
    ['$all over an array or a string', { words: { $all: ['red'] } }, ['a', 'c', 'd']],
    ['$all of two words', { words: { $all: ['car', 'red'] } }, ['a']],
    ['_id with other fields', { _id: 'a' as never, tenant: 't1' }, ['a']],
    ['_id that does not match the other fields', { _id: 'a' as never, tenant: 't2' }, []],
    ['_id $in', { _id: { $in: ['c', 'g', 'zz'] as never[] } }, ['c', 'g']],
    ['an ObjectId _id', { _id: OID, tenant: 't1' }, [String(OID)]],
    ['a number (not pushed down)', { kind: 5 }, ['e']],
    ['a missing field', { tenant: 't3' }, []],
    ['escaped characters', { tenant: 'AT&T <R&D> "q" \\ é 🚗 \u2028', kind: 'x&y' }, ['h']],
    ['escaped characters in $in', { kind: { $in: ['x&y'] } }, ['h']],
    ['escaped characters in $all', { kind: { $all: ['x&y'] } }, ['h']],
  ])('%s', async (_what, filter, expected) => {
    expect(await ids(filter)).toEqual([...expected].sort());
    expect(await docs.countDocuments(filter)).toBe(expected.length);
  });

  it('updates and deletes only what their filters match', async () => {
    const updated = await docs.updateMany({ tenant: 't1', kind: 'x' }, { $set: { seen: true } });
    expect(updated.modifiedCount).toBe(3);
    expect(await ids({ seen: true })).toEqual([String(OID), 'a', 'b']);
    await docs.insertMany([
      { _id: 'z1' as never, tenant: 't9', kind: 'gone' },
      { _id: 'z2' as never, tenant: 't9', kind: ['gone'] },
      { _id: 'z3' as never, tenant: 't9', kind: 'kept' },
    ]);
    const deleted = await docs.deleteMany({ tenant: 't9', kind: { $in: ['gone'] } });
    expect(deleted.deletedCount).toBe(2);
    expect(await ids({ tenant: 't9' })).toEqual(['z3']);
  });
});

describe('the pushdown is in the binary', () => {
  const explain = (filter: Document) =>
    client.db('pushdown').command({ explain: { find: 'docs', filter } });

  it('explain reports the filter pushed down, inside $and too', async () => {
    expect((await explain({ tenant: 't1' })).filterPushdown).toBe(true);
    expect((await explain({ $and: [{ tenant: 't1' }, { kind: 'x' }] })).filterPushdown).toBe(true);
    // A filter with nothing pushable stays in Go.
    expect((await explain({ kind: 5 })).filterPushdown).toBe(false);
  });

  it('a lookup by _id, even beside other fields, uses the _id index', async () => {
    const plan = (await explain({ _id: { $in: ['a', 'b'] }, tenant: 't1' })).queryPlanner.Plan;
    expect(plan.join('\n')).toMatch(/SEARCH .* USING INDEX .*__id_/);
  });
});
