import type { Db, Document, Filter } from 'mongodb';
import { expect } from 'vitest';
import type { FactDoc } from '../../src/store/documents.js';

/**
 * Checks for a write that a failure cut short and a retry (or the start-up repair)
 * completed: that what the retry wrote carries its own transaction time, and that the
 * history of what the store believed before the retry is the one readers saw then
 * (docs/TEMPORAL_MODEL.md, "Writes without transactions").
 */

export type Documents = Map<string, Record<string, unknown>>;

const COLLECTIONS = ['datasets', 'episodeRecords', 'episodes', 'entities', 'facts', 'factRecords'];

/** The documents of the write path's collections, keyed `collection/_id`. */
export async function writtenDocuments(db: Db, filter: Filter<Document> = {}): Promise<Documents> {
  const docs: Documents = new Map();
  for (const name of COLLECTIONS) {
    for (const doc of await db.collection(name).find(filter).toArray()) {
      docs.set(`${name}/${doc._id}`, doc);
    }
  }
  return docs;
}

const TIME_FIELDS = [
  'recordedAt',
  'invalidAt',
  'createdAt',
  'updatedAt',
  'completedAt',
  'at',
] as const;

/** The instants of the fact records among `docs`: every instant a fact document may carry. */
function recordInstants(docs: Documents): Set<number> {
  const instants = new Set<number>();
  for (const [id, doc] of docs) {
    if (id.startsWith('factRecords/') && doc.at instanceof Date) instants.add(doc.at.getTime());
  }
  return instants;
}

/**
 * Every instant the interrupted attempt had stored is still there, unchanged, and every
 * instant written since is `completedAt` (an entity's `updatedAt` moves to the latest
 * attempt that touched it); a fact document's instants are those of the records it is
 * derived from (docs/TEMPORAL_MODEL.md, "The history is derived"), so a record the
 * interrupted attempt stored keeps its instant in every document derived from it.
 * `alsoBefore` are instants of documents written before the interrupted attempt.
 */
export function expectOwnInstants(
  interrupted: Documents,
  completed: Documents,
  completedAt: Date,
  alsoBefore: Date[] = [],
): void {
  const before = new Set(alsoBefore.map((d) => d.getTime()));
  const derivable = recordInstants(completed);
  for (const [id, doc] of completed) {
    const earlierDoc = interrupted.get(id);
    for (const field of TIME_FIELDS) {
      const value = doc[field];
      if (!(value instanceof Date)) continue;
      const earlier = earlierDoc?.[field];
      if (id.startsWith('facts/') && (field === 'recordedAt' || field === 'invalidAt')) {
        expect(
          derivable.has(value.getTime()) || before.has(value.getTime()),
          `${id} ${field} is a record's instant`,
        ).toBe(true);
      } else if (earlier instanceof Date) {
        if (!(id.startsWith('entities/') && field === 'updatedAt')) {
          expect(value, `${id} ${field}`).toEqual(earlier);
        }
      } else if (!before.has(value.getTime())) {
        expect(value, `${id} ${field}`).toEqual(completedAt);
      }
    }
  }
}

/** Each fact the store believed at K (recorded by K, not invalidated by K), with its valid time. */
function believedAt(docs: Documents, K: Date) {
  return [...docs.entries()]
    .filter(([id]) => id.startsWith('facts/'))
    .map(([, f]) => f as unknown as FactDoc)
    .filter(
      (f) =>
        f.recordedAt.getTime() <= K.getTime() &&
        (f.invalidAt === null || f.invalidAt.getTime() > K.getTime()),
    )
    .map((f) => ({ factId: f.factId, validAt: f.validAt, validUntil: f.validUntil }))
    .sort((a, b) => (a.factId < b.factId ? -1 : 1));
}

/**
 * What the store believed at each instant `at` is what it believed then, read from the
 * interrupted state: the completion did not rewrite it. Holds for instants before any
 * record the interrupted attempt stored (a record keeps the instant of the attempt that
 * stored it, and the history derived from it begins there: docs/TEMPORAL_MODEL.md,
 * "Where racing writers meet the audit").
 */
export function expectHistoryKept(interrupted: Documents, completed: Documents, at: Date[]): void {
  for (const K of at) {
    expect(believedAt(completed, K), `believed at ${K.toISOString()}`).toEqual(
      believedAt(interrupted, K),
    );
  }
}

/** The fact ids believed at K. */
export function believedIdsAt(docs: Documents, K: Date): string[] {
  return believedAt(docs, K).map((f) => f.factId);
}
