import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseApiKey } from '../../src/domain/apiKey.js';
import { createGateway } from '../../src/http/app.js';
import {
  ApiKeysDocument,
  CreateApiKeyDocument,
  LiveDatasetChangesDocument,
  RevokeApiKeyDocument,
} from '../generated/operations.js';
import { openTestGateway, type TestGateway } from '../helpers/gateway.js';
import { subscribeSse } from '../helpers/live.js';

/**
 * Key management through GraphQL (the admin scope, the asking key's workspace): a key made
 * through the API works on every surface; it can grant only scopes its maker holds and
 * cannot outlive it; expired and revoked keys are refused on every surface, in each one's
 * shape (by this process at once, by another within its key cache's TTL); every change is
 * audited, and no secret is ever stored or listed.
 */

let clockMs = Date.parse('2026-06-01T00:00:00Z');
let t: TestGateway;
let admin: string;

beforeAll(async () => {
  t = await openTestGateway({
    demoWorkspaces: ['acme', 'globex'],
    gateway: { clock: () => new Date(clockMs), readCacheTtlMs: 60_000 },
  });
  admin = await t.key('acme', ['read', 'write', 'admin']);
});

afterAll(async () => {
  await t.database.close();
});

async function create(
  key: string,
  variables: { name: string; scopes: ('READ' | 'WRITE' | 'ADMIN')[]; expiresAt?: string },
) {
  return t.graphql(CreateApiKeyDocument, variables, key);
}

/** What each surface answers the key: GraphQL, Memory Soda's REST and SupaCloud's. */
async function surfaces(key: string) {
  const graphql = await t.request('/graphql', {
    method: 'POST',
    key,
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({
      query: '{ dataset(name: "user_42") { facts(first: 1) { totalCount } } }',
    }),
  });
  const memorySoda = await t.request('/v1/memory/semantic/datasets/user_42/facts?limit=1', { key });
  const supaCloud = await t.request('/api/memories', { key });
  return {
    graphql: { status: graphql.status, body: await graphql.json() },
    memorySoda: { status: memorySoda.status, body: await memorySoda.json() },
    supaCloud: { status: supaCloud.status, body: await supaCloud.json() },
  };
}

function expectRefusedEverywhere(answers: Awaited<ReturnType<typeof surfaces>>) {
  expect(answers.graphql.status).toBe(401);
  expect(answers.graphql.body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
  expect(answers.memorySoda).toEqual({
    status: 401,
    body: { error: expect.stringMatching(/not valid/) },
  });
  expect(answers.supaCloud.status).toBe(401);
  expect(answers.supaCloud.body).toMatchObject({ code: 'unauthorized' });
}

describe('createApiKey', () => {
  it('returns the secret once; the key works on every surface, with the scopes asked for', async () => {
    const { body } = await create(admin, { name: 'ingest pipeline', scopes: ['READ', 'WRITE'] });
    expect(body.errors).toBeUndefined();
    const made = body.data!.createApiKey;
    expect(made.key).toMatch(/^mk_[0-9a-f]{24}_[A-Za-z0-9_-]{43}$/);
    expect(made.apiKey).toEqual({
      keyId: parseApiKey(made.key)!.keyId,
      name: 'ingest pipeline',
      scopes: ['READ', 'WRITE'],
      createdAt: new Date(clockMs).toISOString(),
      expiresAt: null,
      status: 'ACTIVE',
      createdBy: parseApiKey(admin)!.keyId,
    });
    const answers = await surfaces(made.key);
    expect(answers.graphql.status).toBe(200);
    expect(answers.graphql.body.data.dataset.facts.totalCount).toBeGreaterThan(0);
    expect(answers.memorySoda.status).toBe(200);
    expect(answers.supaCloud.status).toBe(200);
    // A live stream too.
    const stream = subscribeSse(
      t.gateway.fetch,
      'http://gateway.test/graphql',
      LiveDatasetChangesDocument,
      { dataset: 'user_42', after: null },
      made.key,
    );
    await expect.poll(() => t.gateway.live.watches.counts().followers).toBeGreaterThan(0);
    stream.close();
    // The secret is in that answer and nowhere else: not stored, not listed, not audited.
    const listed = await t.graphql(ApiKeysDocument, {}, admin);
    const secret = parseApiKey(made.key)!.secret;
    expect(JSON.stringify(listed.body)).not.toContain(secret);
    for (const name of ['apiKeys', 'keyEvents', 'apiKeyUse'] as const) {
      expect(JSON.stringify(await t.database.collections[name].find({}).toArray())).not.toContain(
        secret,
      );
    }
  });

  it('cannot grant a scope the asking key lacks: FORBIDDEN, nothing made', async () => {
    const readOnlyAdmin = await t.key('acme', ['admin']);
    const before = await t.database.collections.apiKeys.countDocuments({});
    const events = await t.database.collections.keyEvents.countDocuments({});
    const { status, body } = await create(readOnlyAdmin, { name: 'escalation', scopes: ['READ'] });
    expect(status).toBe(200);
    expect(body.errors![0]).toMatchObject({
      message: expect.stringContaining('cannot grant scopes it does not hold: read'),
      extensions: { code: 'FORBIDDEN' },
    });
    expect(body.data).toBeNull();
    expect(await t.database.collections.apiKeys.countDocuments({})).toBe(before);
    expect(await t.database.collections.keyEvents.countDocuments({})).toBe(events);
  });

  it('cannot outlive the asking key: its expiry is the default and the limit', async () => {
    const parentExpiry = new Date(clockMs + 30 * 86_400_000).toISOString();
    const parent = (
      await create(admin, {
        name: 'temporary admin',
        scopes: ['READ', 'ADMIN'],
        expiresAt: parentExpiry,
      })
    ).body.data!.createApiKey.key;
    const child = await create(parent, { name: 'child', scopes: ['READ'] });
    expect(child.body.data!.createApiKey.apiKey.expiresAt).toBe(parentExpiry);
    const later = await create(parent, {
      name: 'outlives',
      scopes: ['READ'],
      expiresAt: new Date(clockMs + 31 * 86_400_000).toISOString(),
    });
    expect(later.body.errors![0]!.extensions).toEqual({ code: 'BAD_USER_INPUT' });
    expect(later.body.errors![0]!.message).toMatch(/^expiresAt: must not be after the expiry/);
    const past = await create(admin, {
      name: 'already over',
      scopes: ['READ'],
      expiresAt: new Date(clockMs - 1000).toISOString(),
    });
    expect(past.body.errors![0]).toMatchObject({
      message: 'expiresAt: must be in the future',
      extensions: { code: 'BAD_USER_INPUT' },
    });
  });

  it('bad input is BAD_USER_INPUT naming it, and nothing is made', async () => {
    const before = await t.database.collections.apiKeys.countDocuments({});
    for (const [variables, wrong] of [
      [{ name: '', scopes: ['READ'] }, 'name'],
      [{ name: 'x'.repeat(101), scopes: ['READ'] }, 'name'],
      [{ name: 'none', scopes: [] }, 'scopes'],
      [{ name: 'twice', scopes: ['READ', 'READ'] }, 'scopes'],
    ] as const) {
      const { body } = await create(admin, variables as never);
      expect(body.errors![0]!.extensions!.code, JSON.stringify(variables)).toBe('BAD_USER_INPUT');
      expect(body.errors![0]!.message).toContain(wrong);
    }
    expect(await t.database.collections.apiKeys.countDocuments({})).toBe(before);
  });
});

describe('expired and revoked keys', () => {
  it('an expired key is refused on every surface, as a revoked one is, though it was just used', async () => {
    const expiresAt = new Date(clockMs + 60_000).toISOString();
    const { key } = (await create(admin, { name: 'a minute', scopes: ['READ'], expiresAt })).body
      .data!.createApiKey;
    expect((await surfaces(key)).memorySoda.status).toBe(200);
    clockMs += 60_000;
    try {
      expectRefusedEverywhere(await surfaces(key));
      const listed = (await t.graphql(ApiKeysDocument, {}, admin)).body.data!.apiKeys;
      expect(listed.find((k) => k.keyId === parseApiKey(key)!.keyId)?.status).toBe('EXPIRED');
    } finally {
      clockMs -= 60_000;
    }
  });

  it('a revoked key is refused at once here and within the TTL by another process; once only', async () => {
    const { key, apiKey } = (await create(admin, { name: 'leaked', scopes: ['READ'] })).body.data!
      .createApiKey;
    // Another gateway process on the same database, with a short key cache.
    const replicaTtlMs = 300;
    const replica = createGateway({
      database: t.database,
      readCacheTtlMs: replicaTtlMs,
      keyUseFlushMs: 0,
    });
    const onReplica = () =>
      replica.fetch(
        new Request('http://gateway.test/api/memories', {
          headers: { authorization: `Bearer ${key}` },
        }),
      );
    expect((await surfaces(key)).supaCloud.status).toBe(200);
    expect((await onReplica()).status).toBe(200);

    // Pasted whole, as a leaked key would be.
    const first = await t.graphql(RevokeApiKeyDocument, { keyId: key }, admin);
    expect(first.body.data!.revokeApiKey).toEqual({
      revoked: true,
      apiKey: {
        keyId: apiKey.keyId,
        status: 'REVOKED',
        revokedAt: new Date(clockMs).toISOString(),
      },
    });
    // This process forgot it at once, though it was verified a moment ago.
    expectRefusedEverywhere(await surfaces(key));
    // The other refuses it within its cache's TTL: once the TTL has passed (a wait that a
    // loaded machine only makes longer), it has forgotten the key.
    await new Promise((r) => setTimeout(r, replicaTtlMs + 50));
    expect((await onReplica()).status).toBe(401);

    const again = await t.graphql(RevokeApiKeyDocument, { keyId: apiKey.keyId }, admin);
    expect(again.body.data!.revokeApiKey).toEqual({
      revoked: false,
      apiKey: {
        keyId: apiKey.keyId,
        status: 'REVOKED',
        revokedAt: new Date(clockMs).toISOString(),
      },
    });
  });

  it("another workspace's key, or no such key, is NOT_FOUND and untouched", async () => {
    const globex = await t.key('globex', ['read']);
    for (const keyId of [parseApiKey(globex)!.keyId, '0'.repeat(24)]) {
      const { body } = await t.graphql(RevokeApiKeyDocument, { keyId }, admin);
      expect(body.errors![0]!.extensions).toEqual({ code: 'NOT_FOUND' });
    }
    expect((await surfaces(globex)).supaCloud.status).toBe(200);
  });
});

describe('apiKeys and apiKeyEvents', () => {
  it('list the keys with their last use, and the audit log says who did what, when', async () => {
    const { key, apiKey } = (await create(admin, { name: 'audited', scopes: ['READ'] })).body.data!
      .createApiKey;
    await surfaces(key);
    expect(await t.gateway.flushKeyUse()).toBeGreaterThan(0);
    await t.graphql(RevokeApiKeyDocument, { keyId: apiKey.keyId }, admin);
    const { body } = await t.graphql(ApiKeysDocument, {}, admin);
    const listed = body.data!.apiKeys.find((k) => k.keyId === apiKey.keyId)!;
    expect(listed).toMatchObject({
      name: 'audited',
      status: 'REVOKED',
      lastUsedAt: new Date(clockMs).toISOString(),
      createdBy: parseApiKey(admin)!.keyId,
    });
    const events = body.data!.apiKeyEvents.filter((e) => e.keyId === apiKey.keyId);
    expect(events.map((e) => e.action).sort()).toEqual(['CREATED', 'REVOKED']);
    for (const e of events) {
      expect(e).toMatchObject({ by: parseApiKey(admin)!.keyId, name: 'audited', scopes: ['READ'] });
    }
    // Another workspace's keys and events are not listed.
    const globexAdmin = await t.key('globex', ['admin']);
    const theirs = (await t.graphql(ApiKeysDocument, {}, globexAdmin)).body.data!;
    expect(theirs.apiKeys.map((k) => k.keyId)).not.toContain(apiKey.keyId);
    expect(theirs.apiKeyEvents.map((e) => e.keyId)).not.toContain(apiKey.keyId);
  });
});
