import type { Db, Document, Filter } from 'mongodb';
import { expect } from 'vitest';
import {
  correctedFactId,
  type FactDoc,
  factDocumentId,
  type InvalidationClaimDoc,
  parseInvalidationClaimId,
} from '../../src/store/documents.js';

/**
 * Checks for a write that a failure cut short and a retry (or the start-up repair)
 * completed: that what the retry wrote carries its own transaction time, and that the
 * history of what the store believed before the retry is the one readers saw then
 * (docs/TEMPORAL_MODEL.md, "Writes without transactions").
 */

export type Documents = Map<string, Record<string, unknown>>;

const COLLECTIONS = ['datasets', 'episodeRecords', 'episodes', 'entities', 'facts', 'claims'];

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

/**
 * The facts whose invalidation was claimed (its claim inserted, the stamp perhaps not):
 * the claim fixed the instant, so whoever applies it writes that one.
 */
function claimedInvalidations(docs: Documents): Map<string, Date> {
  const claimed = new Map<string, Date>();
  for (const [id, doc] of docs) {
    if (!id.startsWith('claims/')) continue;
    const claim = doc as unknown as InvalidationClaimDoc;
    const { factDocId, restorations } = parseInvalidationClaimId(claim._id);
    claimed.set(`facts/${factDocId}`, claim.invalidAt);
    // A replacement's corrected version is recorded at the claim's instant too.
    if (claim.correctedUntil && claim.supersededBy) {
      const version = correctedFactId({ factId: claim.factId, restorations }, claim.supersededBy);
      claimed.set(`facts/${factDocumentId(claim, version)}`, claim.invalidAt);
    }
  }
  return claimed;
}

/** The field a claim fixes on a document: a version's `recordedAt`, a fact's `invalidAt`. */
const claimedField = (doc: Record<string, unknown>) =>
  doc.correctionOf ? 'recordedAt' : 'invalidAt';

const TIME_FIELDS = ['recordedAt', 'invalidAt', 'createdAt', 'updatedAt', 'completedAt'] as const;

/**
 * Every instant the interrupted attempt had stored is still there, unchanged, and every
 * instant written since is `completedAt` (an entity's `updatedAt` moves to the latest
 * attempt that touched it), but for the invalidations the interrupted attempt had already
 * claimed, which carry the claim's (and so do the corrected versions they record). `alsoBefore` are instants of documents written before
 * the interrupted attempt.
 */
export function expectOwnInstants(
  interrupted: Documents,
  completed: Documents,
  completedAt: Date,
  alsoBefore: Date[] = [],
): void {
  const claimed = claimedInvalidations(interrupted);
  const before = new Set(alsoBefore.map((d) => d.getTime()));
  for (const [id, doc] of completed) {
    const earlierDoc = interrupted.get(id);
    for (const field of TIME_FIELDS) {
      const value = doc[field];
      if (!(value instanceof Date)) continue;
      const earlier = earlierDoc?.[field];
      if (field === claimedField(doc) && claimed.has(id)) {
        expect(value, `${id} ${field}`).toEqual(claimed.get(id));
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
 * What the store believed at each instant `at` (between the interruption and the
 * completion) is what it believed then, read from the interrupted state: the completion
 * did not rewrite it. The one exception, left out here: a supersession the interrupted
 * attempt had claimed carries the claim's instant (the claim decides it once, for every
 * writer that applies it).
 */
export function expectHistoryKept(interrupted: Documents, completed: Documents, at: Date[]): void {
  const claimed = claimedInvalidations(interrupted);
  const unclaimed = (docs: Documents) => new Map([...docs].filter(([id]) => !claimed.has(id)));
  for (const K of at) {
    expect(believedAt(unclaimed(completed), K), `believed at ${K.toISOString()}`).toEqual(
      believedAt(unclaimed(interrupted), K),
    );
  }
}

/** The fact ids believed at K. */
export function believedIdsAt(docs: Documents, K: Date): string[] {
  return believedAt(docs, K).map((f) => f.factId);
}
