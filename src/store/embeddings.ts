import { Binary, type Filter } from 'mongodb';
import { systemClock } from '../clock.js';
import { factText } from '../domain/recallTerms.js';
import type { Embedder } from '../embeddings/embedder.js';
import type { Collections } from './collections.js';
import type { FactDoc, MemoryDoc } from './documents.js';
import type { Tenant } from './tenant.js';

/**
 * Vectors for what was written (docs/RECALL.md, "Recall by meaning"). A write stores a
 * fact or a memory with `embedded: false` and no vector; `embedPending` then computes the
 * vectors of a dataset's documents still without one and stores them. Every write path
 * calls it once its documents are there (episodes, memories, deletes and restores,
 * imports), recall calls it before it reads by meaning (so a question sees every earlier
 * write, whichever process made it, and however it ended), and the start-up repair calls it
 * for every dataset (`embedAllPending`: stores written with EMBEDDINGS=off, or before
 * vectors existed). It is idempotent: a vector is a function of the text alone, stored only
 * while the document still holds the text it was computed from.
 */

/** Documents embedded per round: one model batch of this size is about 10 ms on one core. */
const EMBED_ROUND = 64;

/** A stored vector, as BSON binary (the int8 vector subtype, which $vectorSearch reads too). */
const storedVector = (vector: Int8Array): Binary => Binary.fromInt8Array(vector);

/** What a document stores when it is written with its vector. */
export const embeddedWith = (vector: Int8Array, at: Date) => ({
  embedded: true,
  embedding: storedVector(vector),
  embeddedAt: at,
});

/** Vectors a write knows, by the text they are of (a fact's `factText`, a memory's text). */
export type StatementVectors = ReadonlyMap<string, Int8Array>;

/** The vectors of `texts`, by text. */
export async function vectorsOfTexts(
  embedder: Embedder,
  texts: readonly string[],
): Promise<StatementVectors> {
  const distinct = [...new Set(texts)];
  const vectors = await embedder.embed(distinct);
  return new Map(distinct.map((text, i) => [text, vectors[i]!]));
}

/** A stored vector's components. */
export const vectorOf = (binary: Binary): Int8Array => binary.toInt8Array();

const scoped = (tenant: Tenant | null) =>
  tenant ? { workspaceId: tenant.workspaceId, dataset: tenant.dataset } : {};

/** How many of each kind a call embedded. */
export interface EmbedCounts {
  facts: number;
  memories: number;
}

/**
 * Embeds the documents of `tenant` (null: of every dataset) still without a vector, round by
 * round until none is left; `progress` hears the running counts after each round.
 */
export async function embedPending(
  db: Collections,
  embedder: Embedder,
  tenant: Tenant | null,
  progress: (counts: EmbedCounts) => void = () => {},
  /** Which documents: both kinds, or one (a recall's leg needs its own kind only). */
  kinds: readonly VectorKind[] = ['facts', 'memories'],
): Promise<EmbedCounts> {
  const counts: EmbedCounts = { facts: 0, memories: 0 };
  const tag = { comment: 'store:embedPending' };
  while (kinds.includes('facts')) {
    const facts = await db.facts
      .find(
        { ...scoped(tenant), embedded: false },
        {
          projection: { _id: 1, workspaceId: 1, dataset: 1, subject: 1, predicate: 1, object: 1 },
          limit: EMBED_ROUND,
          ...tag,
        },
      )
      .toArray();
    if (facts.length === 0) break;
    const vectors = await embedder.embed(facts.map((f) => factText(f)));
    const at = systemClock();
    const result = await db.facts.bulkWrite(
      facts.map((f, i) => ({
        updateOne: {
          // A fact document's statement never changes: its id names the fact's run.
          filter: {
            _id: f._id,
            workspaceId: f.workspaceId,
            dataset: f.dataset,
            embedded: false,
          } as Filter<FactDoc>,
          update: {
            $set: embeddedWith(vectors[i]!, at),
          },
        },
      })),
      { ordered: false, ...tag },
    );
    counts.facts += result.modifiedCount;
    progress(counts);
  }
  while (kinds.includes('memories')) {
    const memories = await db.memories
      .find(
        { ...scoped(tenant), embedded: false },
        {
          projection: { _id: 1, workspaceId: 1, dataset: 1, text: 1, version: 1 },
          limit: EMBED_ROUND,
          ...tag,
        },
      )
      .toArray();
    if (memories.length === 0) break;
    const vectors = await embedder.embed(memories.map((m) => m.text));
    const at = systemClock();
    const result = await db.memories.bulkWrite(
      memories.map((m, i) => ({
        updateOne: {
          // Only the version whose text was read: a newer text waits for the next round.
          filter: {
            _id: m._id,
            workspaceId: m.workspaceId,
            dataset: m.dataset,
            embedded: false,
            version: m.version,
          } as Filter<MemoryDoc>,
          update: {
            $set: embeddedWith(vectors[i]!, at),
          },
        },
      })),
      { ordered: false, ...tag },
    );
    counts.memories += result.modifiedCount;
    progress(counts);
  }
  return counts;
}

/** What a vector index holds of a document: its id, its vector, when it entered the store. */
export interface StoredVector {
  _id: string;
  vector: Int8Array;
  /** A fact's `recordedAt`, a memory's `createdAt`: a replay at an earlier K leaves it out. */
  storedAt: Date;
  embeddedAt: Date;
}

/** The documents a vector index can be about. */
export type VectorKind = 'facts' | 'memories';

/**
 * A dataset's vectors stored at or after `since` (null: all of them), for a process's
 * vector index (recall/meaningIndex.ts). With `known`, the ids (and when each was stored)
 * are read first, and the vectors only of those it does not hold as stored then: the
 * overlap an index reads again each time costs ids, not vectors.
 */
export async function vectorsSince(
  db: Collections,
  tenant: Tenant,
  kind: VectorKind,
  since: Date | null,
  known: ReadonlyMap<string, number> = new Map(),
): Promise<StoredVector[]> {
  const filter = {
    ...scoped(tenant),
    embedded: true,
    ...(since ? { embeddedAt: { $gte: since } } : {}),
  };
  const tag = { comment: 'store:vectorsSince' };
  const stored = kind === 'facts' ? 'recordedAt' : 'createdAt';
  const collection = db[kind] as unknown as import('mongodb').Collection<
    Pick<FactDoc, '_id' | 'embedding' | 'embeddedAt'> & {
      storedAt?: Date;
      recordedAt?: Date;
      createdAt?: Date;
    }
  >;
  let ids: string[] | null = null;
  if (known.size > 0) {
    const seen = await collection
      .find(filter, { projection: { _id: 1, embeddedAt: 1 }, ...tag })
      .batchSize(10_000)
      .toArray();
    ids = seen.filter((d) => known.get(d._id) !== d.embeddedAt?.getTime()).map((d) => d._id);
    if (ids.length === 0) return [];
  }
  const docs = await collection
    .find(ids ? { ...filter, _id: { $in: ids } } : filter, {
      projection: { _id: 1, embedding: 1, embeddedAt: 1, [stored]: 1 },
      ...tag,
    })
    .batchSize(10_000)
    .toArray();
  return docs.flatMap((d) =>
    d.embedding && d.embeddedAt
      ? [
          {
            _id: d._id,
            vector: vectorOf(d.embedding),
            storedAt: (kind === 'facts' ? d.recordedAt : d.createdAt)!,
            embeddedAt: d.embeddedAt,
          },
        ]
      : [],
  );
}
