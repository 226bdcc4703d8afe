import { createHash, randomUUID } from 'node:crypto';

/**
 * Identifier rules. Public ids (factId, entityId, episodeId, memory id, workspaceId) are
 * UUIDs. Every stored document's `_id` is derived from its natural key (workspace,
 * dataset and the public id or lower-cased name), so re-importing or re-recording the
 * same thing hits the same `_id` and cannot duplicate it, and ids from different
 * workspaces or datasets can never collide. `_id` equality is also the one filter that
 * FerretDB's SQLite backend evaluates in SQL rather than in Go, so lookups by key are cheap.
 */

export const UUID_PATTERN =
  /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

export function newId(): string {
  return randomUUID();
}

/** A name-based (version 5 style, SHA-1) UUID: the same parts always give the same UUID. */
export function derivedUuid(...parts: string[]): string {
  const hash = createHash('sha1').update(JSON.stringify(parts)).digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/** Kinds of stored document; the kind is part of the derived key. */
export type DocumentKind =
  | 'change'
  | 'dataset'
  | 'entity'
  | 'episode'
  | 'fact'
  | 'factRecord'
  | 'memory'
  | 'term'
  | 'workspace';

/** The `_id` of a stored document from its natural key. */
export function documentId(kind: DocumentKind, ...key: string[]): string {
  return derivedUuid(kind, ...key);
}

/** Public ids are compared case-insensitively as UUIDs; stored in lower case. */
export function normalizeUuid(value: string): string {
  return value.toLowerCase();
}
