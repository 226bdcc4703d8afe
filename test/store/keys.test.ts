import { beforeAll, describe, expect, it } from 'vitest';
import { parseApiKey } from '../../src/domain/apiKey.js';
import type { Database } from '../../src/store/database.js';
import { createReadCache } from '../../src/store/readCache.js';
import {
  authenticateApiKey,
  createApiKey,
  ensureWorkspace,
  findWorkspaceByName,
  keyUseRecorder,
  listApiKeys,
  listKeyEvents,
  revokeApiKey,
  workspaceIdFor,
} from '../../src/store/workspaces.js';
import { openTestDatabase } from '../helpers/database.js';

let database: Database;

beforeAll(async () => {
  database = await openTestDatabase();
});

/** Every document of every collection of the test database, as one string. */
async function everythingStored(): Promise<string> {
  const names = (await database.db.listCollections().toArray()).map((c) => c.name);
  const dump: Record<string, unknown[]> = {};
  for (const name of names) dump[name] = await database.db.collection(name).find({}).toArray();
  return JSON.stringify(dump);
}

describe('API keys in the store', () => {
  it('stores only a hash of the secret: the key appears nowhere in the stored documents', async () => {
    const db = database.collections;
    const created = await createApiKey(db, 'hash-only', ['read', 'write']);
    const parsed = parseApiKey(created.key)!;
    expect(parsed).not.toBeNull();
    expect(parsed.keyId).toBe(created.keyId);

    const stored = await db.apiKeys.findOne({ _id: created.keyId });
    expect(stored).toMatchObject({
      workspaceId: created.workspaceId,
      scopes: ['read', 'write'],
      revokedAt: null,
    });
    expect(stored!.secretHash).toMatch(/^[0-9a-f]{64}$/);
    expect(stored!.secretHash).not.toContain(parsed.secret);

    const everything = await everythingStored();
    expect(everything).toContain(created.keyId);
    expect(everything).not.toContain(created.key);
    expect(everything).not.toContain(parsed.secret);
  });

  it('authenticates the key with its workspace and scopes', async () => {
    const db = database.collections;
    const created = await createApiKey(db, 'auth-ok', ['read', 'admin']);
    expect(created.workspaceId).toBe(workspaceIdFor('auth-ok'));
    expect(await authenticateApiKey(db, created.key)).toEqual({
      keyId: created.keyId,
      workspaceId: workspaceIdFor('auth-ok'),
      workspace: 'auth-ok',
      scopes: ['read', 'admin'],
      expiresAt: null,
    });
  });

  it('rejects a wrong secret with the right key id', async () => {
    const db = database.collections;
    const created = await createApiKey(db, 'auth-wrong-secret', ['read']);
    const { keyId, secret } = parseApiKey(created.key)!;
    // Same length and alphabet, one character changed: only the secret is wrong.
    const last = secret.at(-1) === 'A' ? 'B' : 'A';
    const forged = `mk_${keyId}_${secret.slice(0, -1)}${last}`;
    expect(parseApiKey(forged)).toEqual({ keyId, secret: `${secret.slice(0, -1)}${last}` });
    expect(await authenticateApiKey(db, forged)).toBeNull();
    // The secret of another key does not open this one either.
    const other = parseApiKey((await createApiKey(db, 'auth-wrong-secret', ['read'])).key)!;
    expect(await authenticateApiKey(db, `mk_${keyId}_${other.secret}`)).toBeNull();
    expect(await authenticateApiKey(db, created.key)).not.toBeNull();
  });

  it('rejects malformed keys', async () => {
    const db = database.collections;
    const created = await createApiKey(db, 'auth-malformed', ['read']);
    for (const bad of [
      '',
      'mk_',
      created.key.slice(0, -1),
      `${created.key}x`,
      ` ${created.key}`,
      created.key.replace(/^mk_/, 'sk_'),
      created.key.toUpperCase(),
      `Bearer ${created.key}`,
      created.keyId,
      '{"$ne":null}',
    ]) {
      expect(await authenticateApiKey(db, bad), bad).toBeNull();
    }
  });

  it('rejects an unknown key of the right shape', async () => {
    const db = database.collections;
    const unknown = `mk_${'0'.repeat(24)}_${'a'.repeat(43)}`;
    expect(parseApiKey(unknown)).not.toBeNull();
    expect(await authenticateApiKey(db, unknown)).toBeNull();
  });

  it('rejects a revoked key; revoking twice says it was already revoked, and when', async () => {
    const db = database.collections;
    const created = await createApiKey(db, 'auth-revoked', ['read', 'write']);
    const sibling = await createApiKey(db, 'auth-revoked', ['read']);
    const at = new Date('2026-03-01T00:00:00Z');
    expect(await revokeApiKey(db, created.keyId, at)).toEqual({
      outcome: 'revoked',
      revokedAt: at,
    });
    expect(await authenticateApiKey(db, created.key)).toBeNull();
    expect(await revokeApiKey(db, created.keyId, new Date('2026-03-02T00:00:00Z'))).toEqual({
      outcome: 'already revoked',
      revokedAt: at,
    });
    // Revoking by the whole key works too, and only touches that key.
    expect(await authenticateApiKey(db, sibling.key)).not.toBeNull();
    expect((await revokeApiKey(db, sibling.key)).outcome).toBe('revoked');
    expect(await authenticateApiKey(db, sibling.key)).toBeNull();
    expect(await revokeApiKey(db, 'no-such-key')).toEqual({ outcome: 'not found' });
    // Another workspace's key is not found when a workspace is named.
    const other = await createApiKey(db, 'auth-other', ['read']);
    expect(await revokeApiKey(db, other.keyId, at, { workspaceId: created.workspaceId })).toEqual({
      outcome: 'not found',
    });
    expect(await authenticateApiKey(db, other.key)).not.toBeNull();

    const listed = await listApiKeys(db, 'auth-revoked');
    expect(listed.map((k) => k.keyId).sort()).toEqual([created.keyId, sibling.keyId].sort());
    expect(listed.every((k) => k.revokedAt instanceof Date)).toBe(true);
  });
});

describe('workspaces', () => {
  it('derive their id from the name: creating twice gives one workspace', async () => {
    const db = database.collections;
    const first = await ensureWorkspace(db, 'twice', new Date('2026-01-01T00:00:00Z'));
    const second = await ensureWorkspace(db, 'twice', new Date('2026-02-01T00:00:00Z'));
    expect(first._id).toBe(workspaceIdFor('twice'));
    expect(second).toEqual(first);
    expect(second.createdAt.toISOString()).toBe('2026-01-01T00:00:00.000Z');
    expect(await db.workspaces.countDocuments({ name: 'twice' })).toBe(1);
  });

  it('two keys for the same name share one workspace; different names differ', async () => {
    const db = database.collections;
    const a = await createApiKey(db, 'shared ws ü/?', ['read']);
    const b = await createApiKey(db, 'shared ws ü/?', ['write']);
    const other = await createApiKey(db, 'shared ws u/?', ['read']);
    expect(a.workspaceId).toBe(b.workspaceId);
    expect(a.keyId).not.toBe(b.keyId);
    expect(other.workspaceId).not.toBe(a.workspaceId);
    expect(await db.workspaces.countDocuments({ _id: a.workspaceId })).toBe(1);
    expect((await findWorkspaceByName(db, 'shared ws ü/?'))?._id).toBe(a.workspaceId);
    expect(workspaceIdFor('shared ws ü/?')).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    const listed = await listApiKeys(db, 'shared ws ü/?');
    expect(listed.map((k) => k.keyId).sort()).toEqual([a.keyId, b.keyId].sort());
    expect(JSON.stringify(listed)).not.toContain('secret');
  });

  it('concurrent creation of the same workspace yields one document', async () => {
    const db = database.collections;
    const results = await Promise.all(
      Array.from({ length: 8 }, () => ensureWorkspace(db, 'racing')),
    );
    expect(new Set(results.map((w) => w._id)).size).toBe(1);
    expect(await db.workspaces.countDocuments({ _id: workspaceIdFor('racing') })).toBe(1);
  });
});

describe('expiry, the audit log and last use', () => {
  it('a key past its expiresAt is refused like a revoked one, from the cache too', async () => {
    const db = database.collections;
    const expiresAt = new Date('2030-01-01T00:00:00Z');
    const created = await createApiKey(db, 'expiring', ['read'], new Date('2029-01-01T00:00:00Z'), {
      name: 'short-lived',
      expiresAt,
    });
    const cache = createReadCache(60_000)!;
    const before = new Date('2029-12-31T23:59:59Z');
    expect(await authenticateApiKey(db, created.key, cache, before)).toMatchObject({ expiresAt });
    expect(await authenticateApiKey(db, created.key, cache, expiresAt)).toBeNull();
    expect(await authenticateApiKey(db, created.key, null, new Date('2031-01-01'))).toBeNull();
  });

  it('every create and revocation is audited (who, when, what), never a secret', async () => {
    const db = database.collections;
    const creator = await createApiKey(db, 'audited', ['admin']);
    const made = await createApiKey(db, 'audited', ['read'], new Date('2026-05-01T00:00:00Z'), {
      name: 'pipeline',
      by: creator.keyId,
    });
    await revokeApiKey(db, made.keyId, new Date('2026-05-02T00:00:00Z'), { by: creator.keyId });
    const events = await listKeyEvents(db, made.workspaceId, 10);
    expect(events.filter((e) => e.keyId === made.keyId)).toEqual([
      expect.objectContaining({
        action: 'revoked',
        keyId: made.keyId,
        by: creator.keyId,
        name: 'pipeline',
        scopes: ['read'],
        at: new Date('2026-05-02T00:00:00Z'),
      }),
      expect.objectContaining({
        action: 'created',
        keyId: made.keyId,
        by: creator.keyId,
        at: new Date('2026-05-01T00:00:00Z'),
      }),
    ]);
    expect(events.filter((e) => e.keyId === creator.keyId)).toEqual([
      expect.objectContaining({ action: 'created', by: null }),
    ]);
    const stored = JSON.stringify(await db.keyEvents.find({}).toArray());
    expect(stored).not.toContain(parseApiKey(made.key)!.secret);
    expect(stored).not.toMatch(/secretHash/);
  });

  it('racing revocations: one revokes, the others say it was already revoked, at its instant', async () => {
    const db = database.collections;
    const created = await createApiKey(db, 'race-revoke', ['read']);
    const outcomes = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        revokeApiKey(db, created.keyId, new Date(Date.UTC(2026, 0, 1, 0, 0, i))),
      ),
    );
    const revoked = outcomes.filter((o) => o.outcome === 'revoked');
    expect(revoked).toHaveLength(1);
    const at = (revoked[0] as { revokedAt: Date }).revokedAt;
    for (const o of outcomes) expect(o).toMatchObject({ revokedAt: at });
    expect((await db.apiKeys.findOne({ _id: created.keyId }))?.revokedAt).toEqual(at);
    expect(await db.keyEvents.countDocuments({ keyId: created.keyId, action: 'revoked' })).toBe(1);
  });

  it('last use is noted in memory and written in one batch, the latest instant winning', async () => {
    const db = database.collections;
    const created = await createApiKey(db, 'used', ['read']);
    const other = await createApiKey(db, 'used', ['read']);
    const auth = { keyId: created.keyId, workspaceId: created.workspaceId };
    const recorder = keyUseRecorder(db);
    recorder.note(auth, new Date('2026-06-01T10:00:00Z'));
    recorder.note(auth, new Date('2026-06-01T10:00:30Z'));
    recorder.note(auth, new Date('2026-06-01T10:00:10Z'));
    recorder.note(
      { keyId: other.keyId, workspaceId: other.workspaceId },
      new Date('2026-06-01T09:00:00Z'),
    );
    // Nothing is written until the flush; the flush writes one stamp per key.
    expect(await db.apiKeyUse.countDocuments({ workspaceId: created.workspaceId })).toBe(0);
    expect(await recorder.flush()).toBe(2);
    expect(await recorder.flush()).toBe(0);
    const stamps = Object.fromEntries(
      (await listApiKeys(db, 'used')).map((k) => [k.keyId, k.lastUsedAt]),
    );
    expect(stamps).toEqual({
      [created.keyId]: new Date('2026-06-01T10:00:30Z'),
      [other.keyId]: new Date('2026-06-01T09:00:00Z'),
    });
    // Another process's earlier note, written later, does not move it back.
    const replica = keyUseRecorder(db);
    replica.note(auth, new Date('2026-06-01T09:59:00Z'));
    await replica.flush();
    expect(
      (await listApiKeys(db, 'used')).find((k) => k.keyId === created.keyId)?.lastUsedAt,
    ).toEqual(new Date('2026-06-01T10:00:30Z'));
    // The key's own record is never written by a stamp.
    expect(await db.apiKeys.findOne({ _id: created.keyId })).not.toHaveProperty('lastUsedAt');
  });
});
