import { z } from 'zod';
import { keyNameSchema, parseApiKey, type Scope } from '../domain/apiKey.js';
import { GatewayError } from '../errors.js';
import type { KeyEventDoc } from '../store/documents.js';
import { forgetKey } from '../store/readCache.js';
import {
  createApiKey,
  type KeyListing,
  listApiKeys,
  listKeyEvents,
  revokeApiKey,
} from '../store/workspaces.js';
import { builder } from './builder.js';
import { listCost, OWN_QUERY_OBJECT_COST } from './cost.js';
import { runStoreWrite } from './storeErrors.js';
import { ScopeEnum } from './viewer.js';

/**
 * Key management through GraphQL, for the workspace of the key asking (the `admin`
 * scope): make a key (its secret shown once), list them, revoke one, read the audit log.
 * The CLI (`npm run keys`) stays for bootstrapping a workspace's first admin key; both go
 * through the same store functions (store/workspaces.ts). A key may never grant a scope it
 * does not hold itself, nor outlive its own expiry.
 */

/** Keys a workspace lists, and audit entries it reads, at most. */
const MAX_KEYS = 1000;
const MAX_KEY_EVENTS = 1000;

const KeyStatusEnum = builder.enumType('ApiKeyStatus', {
  values: {
    ACTIVE: { description: 'Works.' },
    EXPIRED: { description: 'Past its expiresAt: refused like a revoked key.' },
    REVOKED: { description: 'Revoked: refused.' },
  },
});

const ApiKeyRef = builder.objectRef<KeyListing>('ApiKey').implement({
  description:
    "One of the workspace's API keys: never its secret (shown once, when made) nor its hash.",
  authScopes: { admin: true },
  fields: (t) => ({
    keyId: t.exposeID('keyId', { description: 'The non-secret part of the key (`mk_<keyId>_…`).' }),
    name: t.exposeString('name', { nullable: true }),
    scopes: t.field({ type: [ScopeEnum], resolve: (k) => k.scopes }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    expiresAt: t.expose('expiresAt', { type: 'DateTime', nullable: true }),
    revokedAt: t.expose('revokedAt', { type: 'DateTime', nullable: true }),
    lastUsedAt: t.expose('lastUsedAt', {
      type: 'DateTime',
      nullable: true,
      description:
        'When it was last used, coarsely: each gateway process writes it at most once a minute (KEY_USE_FLUSH_MS).',
    }),
    createdBy: t.exposeID('createdBy', {
      nullable: true,
      description: 'The key that made it through the API; null: made with the CLI.',
    }),
    status: t.field({
      type: KeyStatusEnum,
      description: "At the request's instant.",
      resolve: (k, _args, ctx) =>
        k.revokedAt !== null
          ? 'REVOKED'
          : k.expiresAt !== null && k.expiresAt <= ctx.now
            ? 'EXPIRED'
            : 'ACTIVE',
    }),
  }),
});

const KeyEventActionEnum = builder.enumType('ApiKeyEventAction', {
  values: { CREATED: { value: 'created' }, REVOKED: { value: 'revoked' } } as const,
});

const ApiKeyEventRef = builder.objectRef<KeyEventDoc>('ApiKeyEvent').implement({
  description:
    "An entry of the workspace's key audit log: who (the acting key), when and what; never a secret.",
  authScopes: { admin: true },
  fields: (t) => ({
    action: t.field({ type: KeyEventActionEnum, resolve: (e) => e.action }),
    keyId: t.exposeID('keyId', { description: 'The key created or revoked.' }),
    by: t.exposeID('by', {
      nullable: true,
      description: 'The key that did it; null: the CLI.',
    }),
    name: t.exposeString('name', { nullable: true }),
    scopes: t.field({ type: [ScopeEnum], resolve: (e) => e.scopes }),
    expiresAt: t.expose('expiresAt', { type: 'DateTime', nullable: true }),
    at: t.expose('at', { type: 'DateTime' }),
  }),
});

const CreatedApiKeyRef = builder
  .objectRef<{ secret: string; apiKey: KeyListing }>('CreateApiKeyPayload')
  .implement({
    description: 'A new key: its secret is in this answer and nowhere else, ever.',
    authScopes: { admin: true },
    fields: (t) => ({
      key: t.exposeString('secret', {
        description:
          'The whole key (`mk_<keyId>_<secret>`), shown this once: the store keeps only a hash of it.',
      }),
      apiKey: t.field({ type: ApiKeyRef, resolve: (p) => p.apiKey }),
    }),
  });

const RevokedApiKeyRef = builder
  .objectRef<{ revoked: boolean; apiKey: KeyListing }>('RevokeApiKeyPayload')
  .implement({
    description: 'What a revocation did.',
    authScopes: { admin: true },
    fields: (t) => ({
      revoked: t.exposeBoolean('revoked', {
        description:
          'True when this call revoked it; false when it was revoked already (revokedAt says when).',
      }),
      apiKey: t.field({ type: ApiKeyRef, resolve: (p) => p.apiKey }),
    }),
  });

const scopesSchema = z
  .array(z.enum(['read', 'write', 'admin']))
  .min(1, 'must name at least one scope')
  .refine((list) => new Set(list).size === list.length, 'must not name a scope twice');

/** The listing of one key of the workspace, as `apiKeys` shows it. */
async function listed(
  db: Parameters<typeof listApiKeys>[0],
  workspace: string,
  keyId: string,
): Promise<KeyListing> {
  const found = (await listApiKeys(db, workspace)).find((k) => k.keyId === keyId);
  if (!found) throw new GatewayError('NOT_FOUND', 'API key not found');
  return found;
}

builder.queryFields((t) => ({
  apiKeys: t.withAuth({ admin: true }).field({
    type: [ApiKeyRef],
    description: `The workspace's API keys, oldest first (at most ${MAX_KEYS}), revoked and expired ones included. Needs the admin scope.`,
    complexity: listCost(MAX_KEYS, true),
    resolve: (_root, _args, ctx) => listApiKeys(ctx.store, ctx.auth.workspace, MAX_KEYS),
  }),
  apiKeyEvents: t.withAuth({ admin: true }).field({
    type: [ApiKeyEventRef],
    description: `The workspace's key audit log, newest first (at most ${MAX_KEY_EVENTS}). Needs the admin scope.`,
    complexity: listCost(MAX_KEY_EVENTS, true),
    resolve: (_root, _args, ctx) => listKeyEvents(ctx.store, ctx.auth.workspaceId, MAX_KEY_EVENTS),
  }),
}));

builder.mutationFields((t) => ({
  createApiKey: t.withAuth({ admin: true }).field({
    type: CreatedApiKeyRef,
    description:
      'Makes a key for the workspace of the key asking, with a name, scopes and an optional expiry. A key can grant only scopes it holds itself, and cannot make one that outlives it: without expiresAt the new key expires when the key asking does (never, for a key that never does). Audited. Needs the admin scope.',
    args: {
      name: t.arg.string({ required: true, validate: keyNameSchema }),
      scopes: t.arg({ type: [ScopeEnum], required: true, validate: scopesSchema }),
      expiresAt: t.arg({
        type: 'DateTime',
        description: 'When it stops working; default: never, or when the key asking does.',
      }),
    },
    complexity: OWN_QUERY_OBJECT_COST,
    resolve: async (_root, args, ctx) => {
      const { auth } = ctx;
      const scopes = args.scopes as Scope[];
      const beyond = scopes.filter((s) => !auth.scopes.includes(s));
      if (beyond.length > 0) {
        throw new GatewayError(
          'FORBIDDEN',
          `A key cannot grant scopes it does not hold: ${beyond.join(', ')}; nothing was made`,
        );
      }
      const expiresAt = args.expiresAt ?? auth.expiresAt;
      if (expiresAt !== null && expiresAt <= ctx.now) {
        throw new GatewayError('BAD_USER_INPUT', 'expiresAt: must be in the future');
      }
      if (auth.expiresAt !== null && (expiresAt === null || expiresAt > auth.expiresAt)) {
        throw new GatewayError(
          'BAD_USER_INPUT',
          `expiresAt: must not be after the expiry of the key asking (${auth.expiresAt.toISOString()})`,
        );
      }
      const created = await runStoreWrite(ctx.store, (store) =>
        createApiKey(store, auth.workspace, scopes, ctx.now, {
          name: args.name,
          expiresAt,
          by: auth.keyId,
        }),
      );
      return {
        secret: created.key,
        apiKey: {
          keyId: created.keyId,
          workspace: created.workspace,
          workspaceId: created.workspaceId,
          name: created.name,
          scopes: created.scopes,
          createdAt: created.createdAt,
          expiresAt: created.expiresAt,
          revokedAt: null,
          lastUsedAt: null,
          createdBy: auth.keyId,
        },
      };
    },
  }),
  revokeApiKey: t.withAuth({ admin: true }).field({
    type: RevokedApiKeyRef,
    description:
      "Revokes one of the workspace's keys (the key asking included): refused on every surface at once by this process, within CACHE_TTL_MS by the others. At most once: again, it answers revoked: false with the first revocation's instant. Audited. Needs the admin scope.",
    args: {
      keyId: t.arg.id({
        required: true,
        description: 'The key id (or the whole key, when a leaked one is pasted).',
        validate: z.string().max(200, 'is not a key id'),
      }),
    },
    complexity: OWN_QUERY_OBJECT_COST,
    resolve: async (_root, args, ctx) => {
      const { auth } = ctx;
      // A leaked key pasted whole names its key id too.
      const keyId = parseApiKey(args.keyId)?.keyId ?? args.keyId;
      const revocation = await runStoreWrite(ctx.store, (store) =>
        revokeApiKey(store, keyId, ctx.now, { workspaceId: auth.workspaceId, by: auth.keyId }),
      );
      if (revocation.outcome === 'not found')
        throw new GatewayError('NOT_FOUND', 'API key not found');
      forgetKey(ctx.readCache, keyId);
      // Its open streams end before this answers: none delivers another event.
      ctx.live?.endKey(keyId);
      return {
        revoked: revocation.outcome === 'revoked',
        apiKey: await listed(ctx.store, auth.workspace, keyId),
      };
    },
  }),
}));
