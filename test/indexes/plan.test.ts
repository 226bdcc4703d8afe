import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import {
  INDEXES,
  RETIRED_INDEXES,
  SCALAR_FIELDS,
  SHARD_KEY,
  SHARDED_COLLECTIONS,
} from '../../src/store/collections.js';
import { openDatabase } from '../../src/store/database.js';
import { eraseDataset } from '../../src/store/erasure.js';
import { listApiKeys } from '../../src/store/workspaces.js';
import { openTestDatabase, testServerUri } from '../helpers/database.js';
import { type Declared, judgeQuery, type RecordedCommand, recordedCommand } from './plan.js';

/**
 * The analyzer behind the index check (storeQueries.check.ts), on a made-up collection
 * whose indexes are known, so each rule is shown to pass what it should and catch what
 * it should; then the shape of INDEXES itself, and the recorder at work.
 */

const declared: Declared = {
  sharded: ['notes'],
  indexes: {
    notes: [
      { key: { workspaceId: 1, dataset: 1, at: -1, noteId: -1 }, name: 'tenant_at' },
      {
        key: { workspaceId: 1, dataset: 1, topic: 1, at: -1, noteId: -1 },
        name: 'tenant_topic_at',
      },
      { key: { workspaceId: 1, dataset: 1, day: 1, title: 1 }, name: 'tenant_day_title' },
      { key: { pending: 1 }, name: 'pending', allTenants: 'a start-up repair scan' },
    ],
    registry: [{ key: { name: 1 }, name: 'name', allTenants: 'the registry, in name order' }],
  },
};

const T = new Date('2026-01-01T00:00:00Z');
const tenant = { workspaceId: 'w', dataset: 'd' };

/** A command as the driver sends it (find's sort arrives as a Map), as recorded. */
function recorded(name: string, body: Record<string, unknown>): RecordedCommand {
  const command = recordedCommand(name, { ...body, comment: 'store:test' });
  if (!command) throw new Error('not recorded');
  return command;
}

function find(filter: object, sort?: Record<string, number>, collection = 'notes') {
  return recorded('find', {
    find: collection,
    filter,
    ...(sort ? { sort: new Map(Object.entries(sort)) } : {}),
  });
}

function judge(command: RecordedCommand) {
  const verdicts = command.queries.map((q) => judgeQuery(command.collection, q, declared));
  const failed = verdicts.find((v) => !v.served);
  return failed ?? { served: true as const, by: verdicts.flatMap((v) => (v.served ? v.by : [])) };
}

const served = (command: RecordedCommand) => expect(judge(command)).toMatchObject({ served: true });
const unserved = (command: RecordedCommand, why: RegExp) => {
  const verdict = judge(command);
  expect(verdict.served).toBe(false);
  expect(verdict.served ? '' : verdict.why).toMatch(why);
};

describe('recording', () => {
  it('keeps only store commands that select documents, with the values blanked', () => {
    expect(recordedCommand('find', { find: 'notes', filter: {}, comment: 'test' })).toBeNull();
    expect(recordedCommand('find', { find: 'notes', filter: {} })).toBeNull();
    expect(
      recordedCommand('insert', { insert: 'notes', documents: [{}], comment: 'store:x' }),
    ).toBeNull();
    const command = find(
      { ...tenant, at: { $lte: T }, gone: null, topic: { $in: ['a', 'b', null] } },
      { at: -1, noteId: -1 },
    );
    expect(command).toEqual({
      comment: 'store:test',
      command: 'find',
      collection: 'notes',
      queries: [
        {
          filter: {
            workspaceId: '?',
            dataset: '?',
            at: { $lte: '?' },
            gone: null,
            topic: { $in: ['?', null] },
          },
          sort: { at: -1, noteId: -1 },
        },
      ],
    });
  });

  it('reads the filter of a count, an update, a delete and a findAndModify', () => {
    const count = recorded('aggregate', {
      aggregate: 'notes',
      pipeline: [{ $match: tenant }, { $group: { _id: 1, n: { $sum: 1 } } }],
    });
    expect(count.queries).toEqual([
      { filter: { workspaceId: '?', dataset: '?' }, stages: ['$group'] },
    ]);
    const update = recorded('update', {
      update: 'notes',
      updates: [
        { q: { _id: 'a', ...tenant }, u: {}, upsert: true },
        { q: { _id: 'b', ...tenant }, u: {}, upsert: true },
      ],
    });
    expect(update.queries).toEqual([
      { filter: { _id: '?', workspaceId: '?', dataset: '?' }, upsert: true },
    ]);
    const remove = recorded('delete', { delete: 'notes', deletes: [{ q: tenant, limit: 0 }] });
    expect(remove.queries).toEqual([{ filter: { workspaceId: '?', dataset: '?' } }]);
    const modify = recorded('findAndModify', {
      findAndModify: 'notes',
      query: { ...tenant, topic: 'a' },
      sort: { at: -1 },
    });
    expect(modify.queries).toEqual([
      { filter: { workspaceId: '?', dataset: '?', topic: '?' }, sort: { at: -1 } },
    ]);
  });
});

describe('a served query', () => {
  it('binds the tenant, then sorts along the index, with ranges after the sort', () => {
    served(find({ ...tenant, at: { $lte: T } }, { at: -1, noteId: -1 }));
    expect(judge(find({ ...tenant, topic: 'a' }, { at: -1, noteId: -1 }))).toEqual({
      served: true,
      by: ['tenant_topic_at'],
    });
  });

  it('may walk the index backwards, but not in mixed directions', () => {
    served(find({ ...tenant }, { at: 1, noteId: 1 }));
    unserved(find({ ...tenant }, { at: -1, noteId: 1 }), /directions/);
  });

  it('counts $in as equality and skips sort keys bound by equality', () => {
    served(find({ ...tenant, topic: { $in: ['a', 'b'] } }, { at: -1, noteId: -1 }));
    served(find({ ...tenant, day: 'mon' }, { day: 1, title: 1 }));
  });

  it('serves each branch of a selecting $or: a keyset cursor, or alternatives', () => {
    const after = { $or: [{ at: { $lt: T } }, { at: T, noteId: { $lt: 'n' } }] };
    served(find({ $and: [{ ...tenant, topic: 'a' }, after] }, { at: -1, noteId: -1 }));
    served(find({ ...tenant, $or: [{ topic: 'a' }, { topic: 'b' }] }, { at: -1, noteId: -1 }));
  });

  it('checks temporal bounds and fields beyond a selective key on the documents read', () => {
    const live = { $or: [{ gone: null }, { gone: { $gt: T } }] };
    served(find({ ...tenant, ...live, until: { $gt: T } }, { at: -1, noteId: -1 }));
    served(find({ ...tenant, topic: 'a', color: 'red' }));
  });

  it('looks up by _id with the workspace, and upserts with the whole shard key', () => {
    served(find({ _id: { $in: ['a', 'b'] }, ...tenant }));
    served(
      recorded('update', {
        update: 'notes',
        updates: [{ q: { _id: 'a', ...tenant }, u: {}, upsert: true }],
      }),
    );
  });

  it('counts with the aggregate the driver sends for countDocuments', () => {
    served(
      recorded('aggregate', {
        aggregate: 'notes',
        pipeline: [{ $match: { ...tenant, topic: 'a' } }, { $group: { _id: 1, n: { $sum: 1 } } }],
      }),
    );
  });

  it('uses an allTenants index for a scan across every workspace', () => {
    served(find({ pending: true }));
    served(find({}, { name: 1 }, 'registry'));
    served(
      recorded('aggregate', {
        aggregate: 'registry',
        pipeline: [{ $match: {} }, { $group: { _id: 1, n: { $sum: 1 } } }],
      }),
    );
  });
});

describe('an unserved query', () => {
  it('misses the workspace prefix', () => {
    unserved(find({ dataset: 'd', topic: 'a' }, { at: -1, noteId: -1 }), /workspace/);
    unserved(find({ _id: 'a', dataset: 'd' }), /every shard/);
    unserved(find({}), /workspace/);
  });

  it('sorts on keys the index does not give in that order', () => {
    unserved(find({ ...tenant }, { title: 1 }), /sort on title/);
    unserved(find({ ...tenant, topic: 'a' }, { noteId: -1 }), /sort on noteId/);
  });

  it('puts a range before the sort key', () => {
    unserved(
      find({ ...tenant, day: { $gte: 'mon' } }, { title: 1 }),
      /range on day.*sort on title/,
    );
  });

  it('filters by equality on a field no index leads with', () => {
    unserved(find({ ...tenant, color: 'red' }), /equality on color/);
    unserved(find({ ...tenant, noteId: 'n' }), /equality on noteId/);
  });

  it('has an $or branch no index serves', () => {
    unserved(find({ ...tenant, $or: [{ topic: 'a' }, { color: 'red' }] }), /equality on color/);
  });

  it('upserts without the whole shard key', () => {
    unserved(
      recorded('update', {
        update: 'notes',
        updates: [{ q: { _id: 'a', workspaceId: 'w' }, u: {}, upsert: true }],
      }),
      /shard key/,
    );
  });

  it('cannot be judged, or is not on a declared collection', () => {
    unserved(find({ ...tenant, $expr: { $gt: ['$a', '$b'] } }), /\$expr/);
    unserved(find({ ...tenant }, undefined, 'elsewhere'), /not a collection/);
  });

  it('walks a sharded collection without its tenant, even with an allTenants index', () => {
    unserved(find({}, { pending: 1 }), /workspace/);
  });
});

describe('INDEXES', () => {
  const entries = Object.entries(INDEXES);

  it('lead with the workspace, then the dataset, unless declared to serve every tenant', () => {
    for (const [collection, indexes] of entries) {
      for (const index of indexes) {
        const keys = Object.keys(index.key);
        const where = `${collection}.${index.name}`;
        if (index.allTenants) {
          expect(keys, where).not.toContain('workspaceId');
          continue;
        }
        expect(keys[0], where).toBe('workspaceId');
        if (keys.includes('dataset')) expect(keys[1], where).toBe('dataset');
      }
    }
  });

  it('give every sharded collection an index on its shard key, and unique names', () => {
    for (const collection of SHARDED_COLLECTIONS) {
      const prefixes = INDEXES[collection].map((i) => Object.keys(i.key).slice(0, 2).join());
      expect(prefixes, collection).toContain(Object.keys(SHARD_KEY).join());
    }
    for (const [collection, indexes] of entries) {
      const names = indexes.map((i) => i.name);
      expect(new Set(names).size, collection).toBe(names.length);
    }
  });
});

describe('INDEXES and the scalar declarations', () => {
  // Rate limit counters are a library's documents (ObjectId ids): not declared at all.
  const UNDECLARED = new Set(['rateLimits']);

  it('declare every field an index names: one scalar type, or terms (an array of strings)', () => {
    let checked = 0;
    let terms = 0;
    for (const [collection, indexes] of Object.entries(INDEXES)) {
      if (UNDECLARED.has(collection)) {
        expect(collection in SCALAR_FIELDS, collection).toBe(false);
        continue;
      }
      const declared = SCALAR_FIELDS[collection as keyof typeof SCALAR_FIELDS] as Record<
        string,
        string
      >;
      for (const index of indexes) {
        const fields = Object.keys(index.key);
        for (const field of fields) {
          checked++;
          expect(declared[field], `${collection}.${index.name}: ${field}`).toBeDefined();
        }
        // The embedded database keeps an index on a terms field as a table of its keys: one
        // terms field per index (as MongoDB allows one array per index key), never unique.
        const arrays = fields.filter((f) => declared[f] === 'terms');
        expect(arrays.length, `${collection}.${index.name}`).toBeLessThanOrEqual(1);
        if (arrays.length > 0) {
          terms++;
          expect(index.unique ?? false, `${collection}.${index.name}`).toBe(false);
        }
      }
    }
    expect(checked).toBeGreaterThan(50);
    expect(terms).toBe(4);
  });
});

describe('retired indexes', () => {
  it('are dropped when the store is opened, once their replacements exist', async () => {
    const retired = Object.entries(RETIRED_INDEXES).flatMap(([collection, list]) =>
      (list ?? []).map((index) => ({ collection, ...index })),
    );
    expect(retired.length).toBeGreaterThan(0);
    const database = await openTestDatabase();
    // As an earlier version left them (their keys do not matter to the drop).
    for (const [i, { collection, name }] of retired.entries()) {
      await database.db
        .collection(collection)
        .createIndex({ workspaceId: 1, [`retired${i}`]: 1 }, { name });
    }
    const reopened = await openDatabase(testServerUri(), database.db.databaseName);
    try {
      for (const { collection, name, replacedBy } of retired) {
        const names = (await reopened.db.collection(collection).indexes()).map((i) => i.name);
        expect(names).not.toContain(name);
        expect(names).toContain(replacedBy);
      }
    } finally {
      await reopened.close();
    }
  });
});

describe('the recorder', () => {
  it('records what a store function sends, and not a test’s own reads', async () => {
    const database = await openTestDatabase();
    await eraseDataset(database.collections, tenant, { keyId: 'k' }, T);
    // Only `npm run keys -- list` sends this one, from a process the recorder does not see.
    await listApiKeys(database.collections);
    await database.db.collection('notStore').find({}, { comment: 'test' }).toArray();
    const file = join(inject('storeCommandsDir'), `${process.pid}.jsonl`);
    const commands = readFileSync(file, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as RecordedCommand);
    expect(commands).toContainEqual({
      comment: 'store:eraseDataset',
      command: 'delete',
      collection: 'facts',
      queries: [{ filter: { workspaceId: '?', dataset: '?' } }],
    });
    expect(commands.map((c) => `${c.comment} ${c.collection}`)).toContain(
      'store:listApiKeys workspaces',
    );
    expect(commands.some((c) => c.collection === 'notStore')).toBe(false);
  });
});
