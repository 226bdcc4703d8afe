import { systemClock } from '../clock.js';
import type { Scope } from '../domain/apiKey.js';
import { generateApiKey, parseApiKey, secretMatches } from '../domain/apiKey.js';
import { documentId } from '../domain/ids.js';
import type { Collections } from './database.js';
import { isDuplicateKey } from './database.js';
import type { ApiKeyDoc, WorkspaceDoc } from './documents.js';
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
}

export async function createApiKey(
  db: Collections,
  workspaceName: string,
  scopes: Scope[],
  now = systemClock(),
): Promise<CreatedKey> {
  const workspace = await ensureWorkspace(db, workspaceName, now);
  const generated = generateApiKey();
  await db.apiKeys.insertOne(
    {
      _id: generated.keyId,
      workspaceId: workspace._id,
      workspace: workspace.name,
      secretHash: generated.secretHash,
      scopes,
      createdAt: now,
      revokedAt: null,
    },
    { comment: 'store:createApiKey' },
  );
  return {
    workspaceId: workspace._id,
    workspace: workspace.name,
    keyId: generated.keyId,
    key: generated.key,
    scopes,
  };
}

export interface AuthenticatedKey {
  keyId: string;
  workspaceId: string;
  workspace: string;
  scopes: Scope[];
}

/**
 * The key's workspace and scopes, or null for a malformed, unknown or revoked key. The
 * record is found by the non-secret key id; the secret is compared in constant time. One
 * read: the key record carries its workspace's name (records written before it did cost
 * a second read); with a `cache`, a key verified in the last few seconds costs none.
 */
export async function authenticateApiKey(
  db: Collections,
  key: string,
  cache: ReadCache | null = null,
): Promise<AuthenticatedKey | null> {
  const parsed = parseApiKey(key);
  if (!parsed) return null;
  const cacheId = cache ? keyCacheId(key) : '';
  const remembered = cache?.keys.get(cacheId);
  if (remembered) return remembered;
  const record = await db.apiKeys.findOne(
    { _id: parsed.keyId },
    { comment: 'store:authenticateApiKey' },
  );
  if (!record || !secretMatches(parsed.secret, record.secretHash) || record.revokedAt !== null) {
    return null;
  }
  const workspace = record.workspace ?? (await findWorkspace(db, record.workspaceId))?.name;
  if (workspace === undefined) return null;
  const auth: AuthenticatedKey = {
    keyId: record._id,
    workspaceId: record.workspaceId,
    workspace,
    scopes: record.scopes,
  };
  cache?.keys.set(cacheId, auth);
  return auth;
}

export interface KeyListing {
  keyId: string;
  workspace: string;
  workspaceId: string;
  scopes: Scope[];
  createdAt: Date;
  revokedAt: Date | null;
}

export async function listApiKeys(db: Collections, workspaceName?: string): Promise<KeyListing[]> {
  const workspaces = workspaceName
    ? [await findWorkspaceByName(db, workspaceName)].filter((w): w is WorkspaceDoc => w !== null)
    : await db.workspaces.find({}, { comment: 'store:listApiKeys' }).sort({ name: 1 }).toArray();
  const out: KeyListing[] = [];
  for (const w of workspaces) {
    const keys: ApiKeyDoc[] = await db.apiKeys
      .find({ workspaceId: w._id }, { comment: 'store:listApiKeys' })
      .sort({ createdAt: 1 })
      .toArray();
    for (const k of keys) {
      out.push({
        keyId: k._id,
        workspace: w.name,
        workspaceId: w._id,
        scopes: k.scopes,
        createdAt: k.createdAt,
        revokedAt: k.revokedAt,
      });
    }
  }
  return out;
}

/** Revokes a key by its id (or by the whole key); true if it was active. */
export async function revokeApiKey(
  db: Collections,
  keyOrId: string,
  now = systemClock(),
): Promise<boolean> {
  const keyId = parseApiKey(keyOrId)?.keyId ?? keyOrId;
  const result = await db.apiKeys.updateOne(
    { _id: keyId, revokedAt: null },
    { $set: { revokedAt: now } },
    { comment: 'store:revokeApiKey' },
  );
  return result.modifiedCount === 1;
}
