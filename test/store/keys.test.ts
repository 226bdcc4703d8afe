import { beforeAll, describe, expect, it } from 'vitest';
import { parseApiKey } from '../../src/domain/apiKey.js';
import type { Database } from '../../src/store/database.js';
import {
  authenticateApiKey,
  createApiKey,
  ensureWorkspace,
  findWorkspaceByName,
  listApiKeys,
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

  it('rejects a revoked key; revoking twice reports false', async () => {
    const db = database.collections;
    const created = await createApiKey(db, 'auth-revoked', ['read', 'write']);
    const sibling = await createApiKey(db, 'auth-revoked', ['read']);
    expect(await revokeApiKey(db, created.keyId)).toBe(true);
    expect(await authenticateApiKey(db, created.key)).toBeNull();
    expect(await revokeApiKey(db, created.keyId)).toBe(false);
    // Revoking by the whole key works too, and only touches that key.
    expect(await authenticateApiKey(db, sibling.key)).not.toBeNull();
    expect(await revokeApiKey(db, sibling.key)).toBe(true);
    expect(await authenticateApiKey(db, sibling.key)).toBeNull();
    expect(await revokeApiKey(db, 'no-such-key')).toBe(false);

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
