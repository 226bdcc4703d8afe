import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { AuthenticatedKey } from '../domain/apiKey.js';
import type { DatasetDoc } from './documents.js';

/**
 * A short memory, per gateway process, of the two reads nearly every request repeats and
 * that almost never change: a verified API key, and that a dataset exists. Without it each
 * request spends two of its database round trips on them before reading any memory.
 * Only successes are remembered (an unknown key or dataset is read again each time, so a
 * new key or dataset works at once). The price, bounded by the TTL: a key revoked from
 * another process keeps working, and a dataset erased by another process reads as an
 * empty dataset instead of null, for at most `ttlMs` (this process forgets a dataset it
 * erases at once).
 */
export interface ReadCache {
  keys: LRUCache<string, AuthenticatedKey>;
  datasets: LRUCache<string, DatasetDoc>;
}

const MAX_ENTRIES = 10_000;

export function createReadCache(ttlMs: number): ReadCache | null {
  if (ttlMs <= 0) return null;
  return {
    keys: new LRUCache({ max: MAX_ENTRIES, ttl: ttlMs }),
    datasets: new LRUCache({ max: MAX_ENTRIES, ttl: ttlMs }),
  };
}

/** The cache slot of a presented key: its hash, so no key sits in memory longer than needed. */
export function keyCacheId(key: string): string {
  return createHash('sha256').update(key).digest('base64url');
}

/**
 * Forgets a key this process remembers as verified (its revocation is then refused here
 * at once; other processes refuse it within their cache's TTL). The cache is keyed by the
 * key's hash, which the revoker does not have, so the entries are searched by key id.
 */
export function forgetKey(cache: ReadCache | null, keyId: string): void {
  if (!cache) return;
  for (const [slot, auth] of cache.keys.entries()) {
    if (auth.keyId === keyId) cache.keys.delete(slot);
  }
}
