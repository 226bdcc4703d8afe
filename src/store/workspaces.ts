import { systemClock } from '../clock.js';
import type { AuthenticatedKey, Scope } from '../domain/apiKey.js';
import { generateApiKey, parseApiKey, secretMatches } from '../domain/apiKey.js';
import { documentId } from '../domain/ids.js';
import { isOnlyDuplicateKeys } from './bulkErrors.js';
import type { Collections } from './collections.js';
import { isDuplicateKey } from './database.js';
import type { ApiKeyDoc, KeyEventDoc, WorkspaceDoc } from './documents.js';
import { keyCacheId, type ReadCache } from './readCache.js';

export function workspaceIdFor(name: string): string {
  return documentId('workspace', name);
}

/** Creates the workspace if it does not exist yet; its id is derived from the name. */
export async function ensureWorkspace(
  db: Collections,
  name: string,
  now = systemClock(),
): Promise<WorkspaceDoc> {
  const doc: WorkspaceDoc = { _id: workspaceIdFor(name), name, createdAt: now };
  try {
    await db.workspaces.insertOne(doc, { comment: 'store:ensureWorkspace' });
    return doc;
  } catch (error) {
    if (!isDuplicateKey(error)) throw error;
    return (
      (await db.workspaces.findOne({ _id: doc._id }, { comment: 'store:ensureWorkspace' })) ?? doc
    );
  }
}

export function findWorkspaceByName(db: Collections, name: string): Promise<WorkspaceDoc | null> {
  return db.workspaces.findOne(
    { _id: workspaceIdFor(name) },
    { comment: 'store:findWorkspaceByName' },
  );
}

function findWorkspace(db: Collections, workspaceId: string): Promise<WorkspaceDoc | null> {
  return db.workspaces.findOne({ _id: workspaceId }, { comment: 'store:findWorkspace' });
}

export function countWorkspaces(db: Collections): Promise<number> {
  return db.workspaces.countDocuments({}, { comment: 'store:countWorkspaces' });
}

export interface CreatedKey {
  workspaceId: string;
  workspace: string;
  keyId: string;
  /** Shown once; only its hash is stored. */
  key: string;
  scopes: Scope[];
  name: string | null;
  createdAt: Date;
  expiresAt: Date | null;
}

/** A key's label and expiry, and who made it (a key id; null: the CLI). */
export interface NewKeyOptions {
  name?: string | null;
  expiresAt?: Date | null;
  by?: string | null;
}

/** The audit log's entry for a change to a key: never its secret or hash. */
function keyEvent(
  action: KeyEventDoc['action'],
  key: Pick<ApiKeyDoc, '_id' | 'workspaceId' | 'scopes' | 'name' | 'expiresAt'>,
  by: string | null,
  at: Date,
): KeyEventDoc {
  return {
    _id: `${action}:${key._id}`,
    workspaceId: key.workspaceId,
    action,
    keyId: key._id,
    by,
    name: key.name ?? null,
    scopes: key.scopes,
    expiresAt: key.expiresAt ?? null,
    at,
  };
}

/**
 * Creates a key (and the workspace, for the CLI's first key of one), audited. The same
 * function serves the CLI and the API (createApiKey in GraphQL checks first that the key
 * asking may grant it).
 */
export async function createApiKey(
  db: Collections,
  workspaceName: string,
  scopes: Scope[],
  now = systemClock(),
  options: NewKeyOptions = {},
): Promise<CreatedKey> {
  const workspace = await ensureWorkspace(db, workspaceName, now);
  const generated = generateApiKey();
  const record: ApiKeyDoc = {
    _id: generated.keyId,
    workspaceId: workspace._id,
    workspace: workspace.name,
    secretHash: generated.secretHash,
    scopes,
    createdAt: now,
    revokedAt: null,
    name: options.name ?? null,
    expiresAt: options.expiresAt ?? null,
    createdBy: options.by ?? null,
  };
  await db.apiKeys.insertOne(record, { comment: 'store:createApiKey' });
  try {
    await db.keyEvents.insertOne(keyEvent('created', record, options.by ?? null, now), {
      comment: 'store:createApiKey',
    });
  } catch (error) {
    // No key works unaudited: one whose audit entry could not be written is removed (it
    // was given to nobody), and the caller is told the create failed.
    await db.apiKeys
      .deleteOne(
        { _id: record._id, workspaceId: record.workspaceId },
        { comment: 'store:createApiKey' },
      )
      .catch(() => {});
    throw error;
  }
  return {
    workspaceId: workspace._id,
    workspace: workspace.name,
    keyId: generated.keyId,
    key: generated.key,
    scopes,
    name: record.name ?? null,
    createdAt: now,
    expiresAt: record.expiresAt ?? null,
  };
}

const expired = (key: { expiresAt?: Date | null }, now: Date) =>
  key.expiresAt != null && key.expiresAt <= now;

/**
 * The key's workspace and scopes, or null for a malformed, unknown, revoked or expired
 * key. The record is found by the non-secret key id; the secret is compared in constant
 * time. One read: the key record carries its workspace's name (records written before it
 * did cost a second read); with a `cache`, a key verified in the last few seconds costs
 * none (its expiry is still checked against `now`).
 */
export async function authenticateApiKey(
  db: Collections,
  key: string,
  cache: ReadCache | null = null,
  now: Date = systemClock(),
): Promise<AuthenticatedKey | null> {
  const parsed = parseApiKey(key);
  if (!parsed) return null;
  const cacheId = cache ? keyCacheId(key) : '';
  const remembered = cache?.keys.get(cacheId);
  if (remembered) return expired(remembered, now) ? null : remembered;
  const record = await db.apiKeys.findOne(
    { _id: parsed.keyId },
    { comment: 'store:authenticateApiKey' },
  );
  if (
    !record ||
    !secretMatches(parsed.secret, record.secretHash) ||
    record.revokedAt !== null ||
    expired(record, now)
  ) {
    return null;
  }
  const workspace = record.workspace ?? (await findWorkspace(db, record.workspaceId))?.name;
  if (workspace === undefined) return null;
  const auth: AuthenticatedKey = {
    keyId: record._id,
    workspaceId: record.workspaceId,
    workspace,
    scopes: record.scopes,
    expiresAt: record.expiresAt ?? null,
  };
  cache?.keys.set(cacheId, auth);
  return auth;
}

/**
 * When each key was last used, noted in memory by every request (no I/O on its path) and
 * written in one unordered batch by `flush` (the gateway flushes once a minute and when it
 * shuts down, KEY_USE_FLUSH_MS): a stamp at most once a minute per key and process, in a
 * collection of its own, where `$max` keeps the latest instant whichever replica writes last.
 */
export function keyUseRecorder(db: Collections) {
  const pending = new Map<string, { workspaceId: string; lastUsedAt: Date }>();
  return {
    note(auth: Pick<AuthenticatedKey, 'keyId' | 'workspaceId'>, now: Date): void {
      const noted = pending.get(auth.keyId);
      if (!noted || noted.lastUsedAt < now) {
        pending.set(auth.keyId, { workspaceId: auth.workspaceId, lastUsedAt: now });
      }
    },
    /** Writes what was noted since the last flush; how many keys it stamped. */
    async flush(): Promise<number> {
      const batch = [...pending];
      pending.clear();
      if (batch.length === 0) return 0;
      try {
        await db.apiKeyUse.bulkWrite(
          batch.map(([keyId, use]) => ({
            updateOne: {
              filter: { _id: keyId, workspaceId: use.workspaceId },
              update: { $max: { lastUsedAt: use.lastUsedAt } },
              upsert: true,
            },
          })),
          { ordered: false, comment: 'store:flushKeyUse' },
        );
      } catch (error) {
        // Two replicas' first stamps of one key racing: the other inserted it. Anything
        // else is noted again, for the next flush.
        if (!isOnlyDuplicateKeys(error)) {
          for (const [keyId, use] of batch) if (!pending.has(keyId)) pending.set(keyId, use);
          throw error;
        }
      }
      return batch.length;
    },
  };
}

export type KeyUseRecorder = ReturnType<typeof keyUseRecorder>;

export interface KeyListing {
  keyId: string;
  workspace: string;
  workspaceId: string;
  name: string | null;
  scopes: Scope[];
  createdAt: Date;
  expiresAt: Date | null;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
  /** The key that made it; null: the CLI. */
  createdBy: string | null;
}

/** A workspace's keys as a listing, oldest first, with when each was last used. */
async function keysOf(
  db: Collections,
  workspace: WorkspaceDoc,
  limit: number,
): Promise<KeyListing[]> {
  const tag = { comment: 'store:listApiKeys' };
  const [keys, uses] = await Promise.all([
    db.apiKeys
      .find({ workspaceId: workspace._id }, tag)
      .sort({ createdAt: 1 })
      .limit(limit)
      .toArray(),
    db.apiKeyUse.find({ workspaceId: workspace._id }, tag).toArray(),
  ]);
  const lastUsed = new Map(uses.map((u) => [u._id, u.lastUsedAt]));
  return keys.map((k) => ({
    keyId: k._id,
    workspace: workspace.name,
    workspaceId: workspace._id,
    name: k.name ?? null,
    scopes: k.scopes,
    createdAt: k.createdAt,
    expiresAt: k.expiresAt ?? null,
    revokedAt: k.revokedAt,
    lastUsedAt: lastUsed.get(k._id) ?? null,
    createdBy: k.createdBy ?? null,
  }));
}

/** Keys of one workspace (by name), or of every workspace; at most `limit` per workspace. */
export async function listApiKeys(
  db: Collections,
  workspaceName?: string,
  limit = 10_000,
): Promise<KeyListing[]> {
  const workspaces = workspaceName
    ? [await findWorkspaceByName(db, workspaceName)].filter((w): w is WorkspaceDoc => w !== null)
    : await db.workspaces.find({}, { comment: 'store:listApiKeys' }).sort({ name: 1 }).toArray();
  const out: KeyListing[] = [];
  for (const w of workspaces) out.push(...(await keysOf(db, w, limit)));
  return out;
}

/** What a revocation did: revoked it now, found it revoked already, or found no such key. */
export type Revocation =
  | { outcome: 'revoked' | 'already revoked'; revokedAt: Date }
  | { outcome: 'not found' };

/**
 * Revokes a key by its id (or by the whole key), at most once: the audit entry
 * `revoked:<keyId>` is the claim (inserted once, whoever races), and the key's revokedAt
 * is set to the claim's instant afterwards, by the winner or by any later attempt (so a
 * revocation cut short is completed by the retry its caller is told to make). With
 * `workspaceId`, a key of another workspace is not found.
 */
export async function revokeApiKey(
  db: Collections,
  keyOrId: string,
  now = systemClock(),
  options: { workspaceId?: string; by?: string | null } = {},
): Promise<Revocation> {
  const keyId = parseApiKey(keyOrId)?.keyId ?? keyOrId;
  const tag = { comment: 'store:revokeApiKey' };
  const record = await db.apiKeys.findOne(
    options.workspaceId ? { _id: keyId, workspaceId: options.workspaceId } : { _id: keyId },
    tag,
  );
  if (!record) return { outcome: 'not found' };
  const apply = (at: Date) =>
    db.apiKeys.updateOne(
      { _id: keyId, workspaceId: record.workspaceId },
      { $set: { revokedAt: at } },
      tag,
    );
  // A key revoked before revocations were audited gets its entry at its own instant.
  const claim = keyEvent('revoked', record, options.by ?? null, record.revokedAt ?? now);
  try {
    await db.keyEvents.insertOne(claim, tag);
  } catch (error) {
    if (!isDuplicateKey(error)) throw error;
    const first = await db.keyEvents.findOne(
      { _id: claim._id, workspaceId: record.workspaceId },
      tag,
    );
    const at = first?.at ?? record.revokedAt ?? now;
    if (record.revokedAt === null) await apply(at);
    return { outcome: 'already revoked', revokedAt: at };
  }
  if (record.revokedAt !== null) return { outcome: 'already revoked', revokedAt: record.revokedAt };
  await apply(now);
  return { outcome: 'revoked', revokedAt: now };
}

/** The key audit log of a workspace, newest first. */
export function listKeyEvents(
  db: Collections,
  workspaceId: string,
  limit: number,
): Promise<KeyEventDoc[]> {
  return db.keyEvents
    .find({ workspaceId }, { comment: 'store:listKeyEvents' })
    .sort({ at: -1 })
    .limit(limit)
    .toArray();
}
