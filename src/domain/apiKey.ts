import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';

/**
 * API keys look like `mk_<keyId>_<secret>`: the key id (24 hex characters) is not secret
 * and finds the stored record; the secret (32 random bytes, base64url) is stored only as
 * its SHA-256 hash and compared in constant time. A fast hash is enough because the
 * secret is random and long, not a password.
 */

export const SCOPES = ['read', 'write', 'admin'] as const;
export type Scope = (typeof SCOPES)[number];

/** A verified key: whose it is, its workspace and what it may do. */
export interface AuthenticatedKey {
  keyId: string;
  workspaceId: string;
  workspace: string;
  scopes: Scope[];
  /** When the key stops working (null: never); checked on every use, a cached one too. */
  expiresAt: Date | null;
}

/** A key's name, the same rule for GraphQL's createApiKey and `npm run keys -- create --name`. */
export const keyNameSchema = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .max(100, 'must be at most 100 characters');

const KEY_PATTERN = /^mk_([0-9a-f]{24})_([A-Za-z0-9_-]{43})$/;

export interface NewApiKey {
  keyId: string;
  /** The whole key, shown once. */
  key: string;
  secretHash: string;
}

export function generateApiKey(): NewApiKey {
  const keyId = randomBytes(12).toString('hex');
  const secret = randomBytes(32).toString('base64url');
  return { keyId, key: `mk_${keyId}_${secret}`, secretHash: hashSecret(secret) };
}

export function parseApiKey(key: string): { keyId: string; secret: string } | null {
  const match = KEY_PATTERN.exec(key);
  return match ? { keyId: match[1]!, secret: match[2]! } : null;
}

function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** Constant-time check of a presented secret against a stored hash. */
export function secretMatches(secret: string, storedHash: string): boolean {
  const presented = Buffer.from(hashSecret(secret), 'hex');
  const stored = Buffer.from(storedHash, 'hex');
  return presented.length === stored.length && timingSafeEqual(presented, stored);
}

export function parseScopes(list: string): Scope[] | string {
  const scopes = list
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (scopes.length === 0) return 'at least one scope is required (read, write, admin)';
  const unknown = scopes.filter((s) => !(SCOPES as readonly string[]).includes(s));
  if (unknown.length > 0) return `unknown scope ${unknown.join(', ')} (known: read, write, admin)`;
  return [...new Set(scopes)] as Scope[];
}
