import { MongoClient } from 'mongodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { collections } from '../../src/store/collections.js';
import { restoreFact } from '../../src/store/factLifecycle.js';
import { FactNotFoundError } from '../../src/store/facts.js';
import { workspaceIdFor } from '../../src/store/workspaces.js';
import {
  CurationDeleteFactDocument,
  CurationFactDocument,
  CurationLiveFactsDocument,
  CurationRestoreFactDocument,
} from '../generated/operations.js';
import { testServerUri } from '../helpers/database.js';
import { DEMO } from '../helpers/demo.js';
import { type GraphqlError, openTestGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * restoreFact (admin): undoes a soft delete. The fact is believed again from the restore
 * on, as a new version of it (`correctionOf`), while what the store believed in between
 * stays as it was; it can be deleted again, exactly once per restore (each delete and
 * restore is a record whose id carries its generation); only a deleted fact can be
 * restored.
 */

const DATASET = 'user_42';
const UNKNOWN = '99999999-9999-4999-8999-999999999999';

let t: TestGateway;
let admin: string;
let writer: string;
let reader: string;
let globexAdmin: string;
const acme = { workspaceId: workspaceIdFor('acme'), dataset: DATASET };

beforeAll(async () => {
  t = await openTestGateway({ demoWorkspaces: ['acme', 'globex'] });
  admin = await t.key('acme', ['read', 'write', 'admin']);
  writer = await t.key('acme', ['read', 'write']);
  reader = await t.key('acme', ['read']);
  globexAdmin = await t.key('globex', ['read', 'write', 'admin']);
});

type Result<T> = { status: number; body: { data?: T | null; errors?: GraphqlError[] } };

function data<T>(result: Result<T>): T {
  expect(result.body.errors).toBeUndefined();
  expect(result.status).toBe(200);
  return result.body.data!;
}

function codeOf<T>(result: Result<T>): string | undefined {
  expect(result.body.errors?.length).toBeGreaterThan(0);
  return result.body.errors![0]!.extensions?.code;
}

const restore = (id: string, key: string | null = admin, dataset = DATASET) =>
  t.graphql(CurationRestoreFactDocument, { dataset, id }, key);
const remove = (id: string, key = writer, dataset = DATASET) =>
  t.graphql(CurationDeleteFactDocument, { dataset, id }, key);

async function fact(id: string, key = reader) {
  return data(await t.graphql(CurationFactDocument, { dataset: DATASET, id }, key)).dataset!.fact!;
}

/** The live facts, each by the fact as first recorded (a restored version names its fact). */
async function liveIds(key = reader): Promise<string[]> {
  const result = data(
    await t.graphql(CurationLiveFactsDocument, { dataset: DATASET, first: 100 }, key),
  );
  const db = t.database.collections;
  const ids = result.dataset!.facts.edges.map((e) => e.node.factId);
  const docs = await db.facts.find({ ...acme, factId: { $in: ids } }).toArray();
  return docs.map((d) => d.correctionOf ?? d.factId);
}

/** Every stored document of the write path's collections, for "nothing changed". */
async function everything() {
  const db = t.database.collections;
  const all = async (name: 'facts' | 'factRecords') =>
    (db[name] as typeof db.facts).find({}).sort({ _id: 1 }).toArray();
  return { facts: await all('facts'), factRecords: await all('factRecords') };
}

describe('restoreFact', () => {
  it('makes a deleted fact live again; it can be deleted again exactly once, and restored again', async () => {
    const deleted = data(await remove(DEMO.facts.familyCar)).deleteFact;
    expect(deleted.fact).toMatchObject({ invalidReason: 'DELETED', state: 'SUPERSEDED' });
    expect(await liveIds()).not.toContain(DEMO.facts.familyCar);

    const restored = data(await restore(DEMO.facts.familyCar)).restoreFact;
    expect(restored).toMatchObject({
      correctionOf: { factId: DEMO.facts.familyCar },
      invalidAt: null,
      invalidReason: null,
      state: 'LIVE',
      supersededBy: null,
    });
    // The fact as first recorded keeps its deleted time: the audit history does not change.
    expect(await fact(DEMO.facts.familyCar)).toMatchObject({ invalidReason: 'DELETED' });
    expect(await fact(restored.factId)).toMatchObject({ invalidAt: null, state: 'LIVE' });
    expect(await liveIds()).toContain(DEMO.facts.familyCar);

    // Restoring it again: it is not deleted any more.
    expect(codeOf(await restore(DEMO.facts.familyCar))).toBe('NOT_FOUND');

    // Deleted again (by the fact's id or its version's): once.
    const again = data(await remove(DEMO.facts.familyCar)).deleteFact;
    expect(again.fact).toMatchObject({ invalidReason: 'DELETED', state: 'SUPERSEDED' });
    expect(again.fact.invalidAt).not.toBeNull();
    expect(await fact(restored.factId)).toMatchObject({ invalidReason: 'DELETED' });
    expect(codeOf(await remove(DEMO.facts.familyCar))).toBe('NOT_FOUND');
    expect(codeOf(await remove(restored.factId))).toBe('NOT_FOUND');
    expect(await liveIds()).not.toContain(DEMO.facts.familyCar);

    // And restored again.
    expect(data(await restore(DEMO.facts.familyCar)).restoreFact).toMatchObject({ state: 'LIVE' });
    expect(await liveIds()).toContain(DEMO.facts.familyCar);

    // One record per delete and per restore, each with its generation.
    const records = await t.database.collections.factRecords
      .find({ factId: DEMO.facts.familyCar, workspaceId: acme.workspaceId })
      .toArray();
    const lifecycle = records
      .filter((r) => r.kind === 'deleted' || r.kind === 'restored')
      .map((r) => `${r.kind}:${r.generation}`)
      .sort();
    expect(lifecycle).toEqual(['deleted:0', 'deleted:1', 'restored:0', 'restored:1']);
  });

  it('restores the demo fact deleted at import, which can then be deleted again', async () => {
    expect((await fact(DEMO.facts.livesInBerlin)).invalidReason).toBe('DELETED');
    expect(data(await restore(DEMO.facts.livesInBerlin)).restoreFact).toMatchObject({
      invalidAt: null,
      state: 'LIVE',
    });
    expect(await liveIds()).toContain(DEMO.facts.livesInBerlin);
    expect(data(await remove(DEMO.facts.livesInBerlin)).deleteFact.deleted).toBe(true);
    expect(codeOf(await remove(DEMO.facts.livesInBerlin))).toBe('NOT_FOUND');
  });

  it('after a restore, racing deletes still succeed exactly once', async () => {
    data(await remove(DEMO.facts.budget));
    data(await restore(DEMO.facts.budget));
    const results = await Promise.all(Array.from({ length: 6 }, () => remove(DEMO.facts.budget)));
    expect(results.filter((r) => !r.body.errors)).toHaveLength(1);
    for (const r of results.filter((x) => x.body.errors)) expect(codeOf(r)).toBe('NOT_FOUND');
    expect((await fact(DEMO.facts.budget)).invalidReason).toBe('DELETED');
  });

  it('racing restores over separate connections: exactly one succeeds', async () => {
    data(await remove(DEMO.facts.hondaMadeBy));
    const clients = await Promise.all(
      Array.from({ length: 6 }, () => new MongoClient(testServerUri()).connect()),
    );
    try {
      const results = await Promise.allSettled(
        clients.map((client) =>
          restoreFact(
            collections(client.db(t.database.db.databaseName)),
            acme,
            DEMO.facts.hondaMadeBy,
            new Date(),
          ),
        ),
      );
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      for (const lost of results.filter((r) => r.status === 'rejected')) {
        expect(lost.reason).toBeInstanceOf(FactNotFoundError);
      }
      const restored = await t.database.collections.facts
        .find({ ...acme, correctionOf: DEMO.facts.hondaMadeBy, invalidAt: null })
        .toArray();
      expect(restored).toHaveLength(1);
      // Deletable again, once.
      data(await remove(DEMO.facts.hondaMadeBy));
      expect(codeOf(await remove(DEMO.facts.hondaMadeBy))).toBe('NOT_FOUND');
    } finally {
      await Promise.all(clients.map((c) => c.close()));
    }
  });

  it('a live, a superseded or an unknown fact is NOT_FOUND, and nothing changes', async () => {
    const before = await everything();
    for (const id of [DEMO.facts.toyotaInterest, DEMO.facts.hondaInterest, UNKNOWN]) {
      const result = await restore(id);
      expect(codeOf(result)).toBe('NOT_FOUND');
      expect(result.body.data).toBeNull();
    }
    expect((await fact(DEMO.facts.hondaInterest)).invalidReason).toBe('SUPERSEDED');
    // A deleted fact of another dataset or workspace is not this dataset's.
    data(await remove(DEMO.facts.familyCar, globexAdmin));
    const afterGlobexDelete = await everything();
    expect(codeOf(await restore(DEMO.facts.familyCar, admin, 'user_43'))).toBe('NOT_FOUND');
    expect(await everything()).toEqual(afterGlobexDelete);
    expect(before.facts.length).toBe(afterGlobexDelete.facts.length);
    // globex's own admin can restore globex's copy; acme's copy stays as it was.
    const acmeCopy = await fact(DEMO.facts.familyCar);
    expect(data(await restore(DEMO.facts.familyCar, globexAdmin)).restoreFact.state).toBe('LIVE');
    expect(await fact(DEMO.facts.familyCar)).toEqual(acmeCopy);
  });

  it('needs the admin scope (FORBIDDEN for write-only and read keys) and a key (401)', async () => {
    data(await remove(DEMO.facts.toyotaInterest));
    const before = await everything();
    const writeOnly = await t.key('acme', ['write']);
    for (const key of [writer, writeOnly, reader]) {
      const result = await restore(DEMO.facts.toyotaInterest, key);
      expect(codeOf(result)).toBe('FORBIDDEN');
      expect(result.body.errors![0]!.message).toMatch(/the admin scope/);
    }
    const anonymous = await restore(DEMO.facts.toyotaInterest, null);
    expect(anonymous.status).toBe(401);
    expect(codeOf(anonymous)).toBe('UNAUTHENTICATED');
    expect(await everything()).toEqual(before);
    expect((await fact(DEMO.facts.toyotaInterest)).invalidReason).toBe('DELETED');
  });

  it('bad input is BAD_USER_INPUT naming the field', async () => {
    const before = await everything();
    const badId = await restore('not-a-uuid');
    expect(codeOf(badId)).toBe('BAD_USER_INPUT');
    expect(badId.body.errors![0]!.message).toContain('id');
    const badDataset = await restore(DEMO.facts.toyotaInterest, admin, '');
    expect(codeOf(badDataset)).toBe('BAD_USER_INPUT');
    expect(badDataset.body.errors![0]!.message).toContain('dataset');
    expect(await everything()).toEqual(before);
  });
});
