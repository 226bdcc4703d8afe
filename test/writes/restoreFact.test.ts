import { MongoClient } from 'mongodb';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  CurationDeleteFactDocument,
  CurationFactDocument,
  CurationLiveFactsDocument,
  CurationRestoreFactDocument,
} from '../../src/generated/operations.js';
import { collections } from '../../src/store/database.js';
import { factDocumentId, restoreFact } from '../../src/store/facts.js';
import { workspaceIdFor } from '../../src/store/workspaces.js';
import { testServerUri } from '../helpers/database.js';
import { type GraphqlError, openTestGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * restoreFact (admin): undoes a soft delete. The fact is live again and can be deleted
 * again, exactly once per restoration (the invalidation claim carries the restoration
 * generation); only a deleted fact can be restored.
 */

const DATASET = 'user_42';
/** Demo facts: live ones, one superseded, one deleted at import. */
const FAMILY_CAR = '6c1a8e3d-5f27-4b90-8d46-e2b7c9a5d138';
const BUDGET = '9e5d2b7f-3a61-4c08-a9e4-7f1b6d3c8a52';
const MADE_BY = '2f7c4e9a-8b13-4d65-9c2e-a5d8b1f63e70';
const TOYOTA = '3a91c6e8-0f2d-4b57-a8e3-5d1c9b7f2a40';
const HONDA_INTEREST = '4b8e2c6a-1d93-4e7f-b052-8c3a9d6e1f27';
const LIVES_IN_BERLIN = '7d3e9a1c-6b28-4f05-9e74-2a8c5d1b3f96';
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

async function liveIds(key = reader): Promise<string[]> {
  const result = data(
    await t.graphql(CurationLiveFactsDocument, { dataset: DATASET, first: 100 }, key),
  );
  return result.dataset!.facts.edges.map((e) => e.node.factId);
}

/** Every stored document of the write path's collections, for "nothing changed". */
async function everything() {
  const c = t.database.collections;
  const all = async (name: 'facts' | 'claims' | 'restorations') =>
    (c[name] as typeof c.facts).find({}).sort({ _id: 1 }).toArray();
  return {
    facts: await all('facts'),
    claims: await all('claims'),
    restorations: await all('restorations'),
  };
}

describe('restoreFact', () => {
  it('makes a deleted fact live again; it can be deleted again exactly once, and restored again', async () => {
    const deleted = data(await remove(FAMILY_CAR)).deleteFact;
    expect(deleted.fact).toMatchObject({ invalidReason: 'DELETED', state: 'SUPERSEDED' });
    expect(await liveIds()).not.toContain(FAMILY_CAR);

    const restored = data(await restore(FAMILY_CAR)).restoreFact;
    expect(restored).toMatchObject({
      factId: FAMILY_CAR,
      invalidAt: null,
      invalidReason: null,
      state: 'LIVE',
      supersededBy: null,
    });
    expect(await fact(FAMILY_CAR)).toMatchObject({ invalidAt: null, state: 'LIVE' });
    expect(await liveIds()).toContain(FAMILY_CAR);

    // Restoring it again: it is not deleted any more.
    expect(codeOf(await restore(FAMILY_CAR))).toBe('NOT_FOUND');

    // Deleted again: once.
    const again = data(await remove(FAMILY_CAR)).deleteFact;
    expect(again.fact).toMatchObject({ invalidReason: 'DELETED', state: 'SUPERSEDED' });
    expect(again.fact.invalidAt).not.toBeNull();
    expect(codeOf(await remove(FAMILY_CAR))).toBe('NOT_FOUND');
    expect(await liveIds()).not.toContain(FAMILY_CAR);

    // And restored again.
    expect(data(await restore(FAMILY_CAR)).restoreFact).toMatchObject({ state: 'LIVE' });
    expect(await liveIds()).toContain(FAMILY_CAR);

    // One claim per deletion generation, one restoration claim per restore.
    const docId = factDocumentId(acme, FAMILY_CAR);
    const claims = await t.database.collections.claims
      .find({ factId: FAMILY_CAR, workspaceId: acme.workspaceId })
      .sort({ _id: 1 })
      .toArray();
    expect(claims.map((c) => c._id)).toEqual([`invalidate:${docId}`, `invalidate:${docId}:1`]);
    expect(claims.every((c) => c.applied && c.reason === 'deleted')).toBe(true);
    const restorations = await t.database.collections.restorations
      .find({ factId: FAMILY_CAR, workspaceId: acme.workspaceId })
      .sort({ _id: 1 })
      .toArray();
    expect(restorations.map((r) => r._id)).toEqual([`restore:${docId}:0`, `restore:${docId}:1`]);
    expect((await t.database.collections.facts.findOne({ _id: docId }))?.restorations).toBe(2);
  });

  it('restores the demo fact deleted at import, which can then be deleted again', async () => {
    expect((await fact(LIVES_IN_BERLIN)).invalidReason).toBe('DELETED');
    expect(data(await restore(LIVES_IN_BERLIN)).restoreFact).toMatchObject({
      invalidAt: null,
      state: 'LIVE',
    });
    expect(await liveIds()).toContain(LIVES_IN_BERLIN);
    expect(data(await remove(LIVES_IN_BERLIN)).deleteFact.deleted).toBe(true);
    expect(codeOf(await remove(LIVES_IN_BERLIN))).toBe('NOT_FOUND');
  });

  it('after a restore, racing deletes still succeed exactly once', async () => {
    data(await remove(BUDGET));
    data(await restore(BUDGET));
    const results = await Promise.all(Array.from({ length: 6 }, () => remove(BUDGET)));
    expect(results.filter((r) => !r.body.errors)).toHaveLength(1);
    for (const r of results.filter((x) => x.body.errors)) expect(codeOf(r)).toBe('NOT_FOUND');
    expect((await fact(BUDGET)).invalidReason).toBe('DELETED');
  });

  it('racing restores over separate connections: exactly one succeeds', async () => {
    data(await remove(MADE_BY));
    const clients = await Promise.all(
      Array.from({ length: 6 }, () => new MongoClient(testServerUri()).connect()),
    );
    try {
      const results = await Promise.all(
        clients.map((client) =>
          restoreFact(
            collections(client.db(t.database.db.databaseName)),
            acme,
            MADE_BY,
            'deleted',
            new Date(),
          ),
        ),
      );
      expect(results.filter((r) => r.ok)).toHaveLength(1);
      const stored = await t.database.collections.facts.findOne({
        _id: factDocumentId(acme, MADE_BY),
      });
      expect(stored).toMatchObject({ invalidAt: null, invalidReason: null, restorations: 1 });
      // Deletable again, once.
      data(await remove(MADE_BY));
      expect(codeOf(await remove(MADE_BY))).toBe('NOT_FOUND');
    } finally {
      await Promise.all(clients.map((c) => c.close()));
    }
  });

  it('a live, a superseded or an unknown fact is NOT_FOUND, and nothing changes', async () => {
    const before = await everything();
    for (const id of [TOYOTA, HONDA_INTEREST, UNKNOWN]) {
      const result = await restore(id);
      expect(codeOf(result)).toBe('NOT_FOUND');
      expect(result.body.data).toBeNull();
    }
    expect((await fact(HONDA_INTEREST)).invalidReason).toBe('SUPERSEDED');
    // A deleted fact of another dataset or workspace is not this dataset's.
    data(await remove(FAMILY_CAR, globexAdmin));
    const afterGlobexDelete = await everything();
    expect(codeOf(await restore(FAMILY_CAR, admin, 'user_43'))).toBe('NOT_FOUND');
    expect(await everything()).toEqual(afterGlobexDelete);
    expect(before.facts.length).toBe(afterGlobexDelete.facts.length);
    // globex's own admin can restore globex's copy; acme's copy stays as it was.
    const acmeCopy = await fact(FAMILY_CAR);
    expect(data(await restore(FAMILY_CAR, globexAdmin)).restoreFact.state).toBe('LIVE');
    expect(await fact(FAMILY_CAR)).toEqual(acmeCopy);
  });

  it('needs the admin scope (FORBIDDEN for write-only and read keys) and a key (401)', async () => {
    data(await remove(TOYOTA));
    const before = await everything();
    const writeOnly = await t.key('acme', ['write']);
    for (const key of [writer, writeOnly, reader]) {
      const result = await restore(TOYOTA, key);
      expect(codeOf(result)).toBe('FORBIDDEN');
      expect(result.body.errors![0]!.message).toMatch(/"admin" scope/);
    }
    const anonymous = await restore(TOYOTA, null);
    expect(anonymous.status).toBe(401);
    expect(codeOf(anonymous)).toBe('UNAUTHENTICATED');
    expect(await everything()).toEqual(before);
    expect((await fact(TOYOTA)).invalidReason).toBe('DELETED');
  });

  it('bad input is BAD_USER_INPUT naming the field', async () => {
    const before = await everything();
    const badId = await restore('not-a-uuid');
    expect(codeOf(badId)).toBe('BAD_USER_INPUT');
    expect(badId.body.errors![0]!.message).toContain('id');
    const badDataset = await restore(TOYOTA, admin, '');
    expect(codeOf(badDataset)).toBe('BAD_USER_INPUT');
    expect(badDataset.body.errors![0]!.message).toContain('dataset');
    expect(await everything()).toEqual(before);
  });
});
