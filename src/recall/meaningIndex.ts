import { EMBEDDING_DIMENSIONS, EMBEDDING_SCALE } from '../embeddings/embedder.js';
import type { Collections } from '../store/collections.js';
import { type StoredVector, type VectorKind, vectorsSince } from '../store/embeddings.js';
import type { Tenant } from '../store/tenant.js';

/**
 * Each dataset's vectors in this process's memory, for the dense leg of recall
 * (docs/SCALING.md, "Recall by meaning"): derived from the store, never the only copy. An
 * index starts empty, reads every vector of its dataset on first use, then, before each
 * search, the vectors stored since it last looked (`embeddedAt`, stamped by the process
 * that stored them) since it last looked (its own clock), less OVERLAP_MS: a write stamped a
 * little before it became visible, or by a process whose clock is a little behind, is
 * still found. So every process answers
 * the same, whichever stored the vectors. A search compares the question with every
 * vector of the dataset in two passes: the signs alone first (384 bits, a Hamming
 * distance: 3 ms at 100,000 vectors where int8 dot products take 45), then the int8 dot
 * product of the RESCORED nearest by sign. What it finds is read from the store through
 * recall's view filter, so the view is the store's, not the index's.
 */

/** How far back, before the last vector it saw, an index looks again each time. */
const OVERLAP_MS = 10_000;
/**
 * How old an index may get before it is read again whole in the background: what was
 * erased since leaves it then (until then an erased document's vector finds nothing, as
 * the store read after a search drops it).
 */
const REBUILD_AFTER_MS = 15 * 60_000;

/** How many vectors nearest by sign a search compares in full. */
const RESCORED = 2000;
/** 32-bit words of a vector's signs. */
const SIGN_WORDS = EMBEDDING_DIMENSIONS / 32;

/** The 1 bits of a 32-bit word. */
function ones(word: number): number {
  let x = word - ((word >>> 1) & 0x55555555);
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (((x + (x >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

/** A vector's signs, one bit a component (1: positive). */
function signsOf(vector: Int8Array, into: Uint32Array, offset: number): void {
  into.fill(0, offset, offset + SIGN_WORDS);
  for (let d = 0; d < EMBEDDING_DIMENSIONS; d++) {
    if (vector[d]! > 0) into[offset + (d >>> 5)]! |= 1 << (d & 31);
  }
}

/** A search's hit: a document id and its similarity to the question (the cosine). */
export interface VectorHit {
  id: string;
  similarity: number;
}

/** One dataset's vectors of one kind, and the search over them. */
export class DatasetVectors {
  ids: string[] = [];
  vectors = new Int8Array(0);
  signs = new Uint32Array(0);
  storedAt = new Float64Array(0);
  /** Each id's position, and when the vector there was stored. */
  readonly position = new Map<string, number>();
  readonly embeddedAt = new Map<string, number>();
  /** The sum of the vectors, for the dataset's mean similarity to a question. */
  readonly sum = new Float64Array(EMBEDDING_DIMENSIONS);
  /** When (the process's clock) it was read whole, and when it last read what was new. */
  builtAt: number;
  lookedAt: number;

  constructor(builtAt: number) {
    this.builtAt = builtAt;
    this.lookedAt = builtAt;
  }

  add(docs: readonly StoredVector[]): void {
    const needed = this.ids.length + docs.length;
    if (needed * EMBEDDING_DIMENSIONS > this.vectors.length) {
      const capacity = Math.max(1024, needed * 2);
      const vectors = new Int8Array(capacity * EMBEDDING_DIMENSIONS);
      vectors.set(this.vectors);
      this.vectors = vectors;
      const signs = new Uint32Array(capacity * SIGN_WORDS);
      signs.set(this.signs);
      this.signs = signs;
      const storedAt = new Float64Array(capacity);
      storedAt.set(this.storedAt);
      this.storedAt = storedAt;
    }
    for (const d of docs) {
      let at = this.position.get(d._id);
      if (at === undefined) {
        at = this.ids.length;
        this.ids.push(d._id);
        this.position.set(d._id, at);
      } else {
        // A new vector for a document (a memory's new text): the old one leaves the sum.
        for (let i = 0; i < EMBEDDING_DIMENSIONS; i++) {
          this.sum[i]! -= this.vectors[at * EMBEDDING_DIMENSIONS + i]!;
        }
      }
      this.vectors.set(d.vector, at * EMBEDDING_DIMENSIONS);
      for (let i = 0; i < EMBEDDING_DIMENSIONS; i++) this.sum[i]! += d.vector[i]!;
      signsOf(d.vector, this.signs, at * SIGN_WORDS);
      this.storedAt[at] = d.storedAt.getTime();
      this.embeddedAt.set(d._id, d.embeddedAt.getTime());
    }
  }

  /**
   * The similarity an item must reach to stand `margin` above the question's mean
   * similarity to the dataset's other vectors (what a question shares with everything
   * stored: "the user …" of every fact). The mean of the others is their sum's dot product
   * over their count, so the bar is one number for every item: (margin (n − 1) + q·Σ) / n.
   * Alone in its dataset, an item is measured against nothing: the bar is the margin.
   */
  floor(query: Int8Array, margin: number): number {
    const n = this.ids.length;
    if (n <= 1) return margin;
    let dot = 0;
    for (let d = 0; d < EMBEDDING_DIMENSIONS; d++) dot += query[d]! * this.sum[d]!;
    return (margin * (n - 1) + dot / (EMBEDDING_SCALE * EMBEDDING_SCALE)) / n;
  }

  /**
   * The `limit` nearest vectors stored by `storedBy` (a replay's K), best first, those at or
   * above `floor` only.
   */
  search(query: Int8Array, storedBy: number, limit: number, floor: number): VectorHit[] {
    const count = this.ids.length;
    const { vectors, signs, storedAt } = this;
    // First pass: the distance by sign of each vector stored by K (a replay's); -1: not.
    const querySigns = new Uint32Array(SIGN_WORDS);
    signsOf(query, querySigns, 0);
    const distance = new Int16Array(count);
    const histogram = new Uint32Array(EMBEDDING_DIMENSIONS + 1);
    for (let at = 0; at < count; at++) {
      if (storedAt[at]! > storedBy) {
        distance[at] = -1;
        continue;
      }
      const offset = at * SIGN_WORDS;
      let h = 0;
      for (let w = 0; w < SIGN_WORDS; w++) h += ones(querySigns[w]! ^ signs[offset + w]!);
      distance[at] = h;
      histogram[h]!++;
    }
    // The distance within which about RESCORED vectors lie.
    let within = 0;
    for (let seen = 0; within <= EMBEDDING_DIMENSIONS; within++) {
      seen += histogram[within]!;
      if (seen >= RESCORED) break;
    }
    // Second pass: the int8 dot product of those, the best `limit` at or above the floor.
    const threshold = floor * EMBEDDING_SCALE * EMBEDDING_SCALE;
    const best: { at: number; dot: number }[] = [];
    for (let at = 0; at < count; at++) {
      const h = distance[at]!;
      if (h < 0 || h > within) continue;
      const offset = at * EMBEDDING_DIMENSIONS;
      let dot = 0;
      for (let d = 0; d < EMBEDDING_DIMENSIONS; d++) dot += query[d]! * vectors[offset + d]!;
      if (dot < threshold) continue;
      if (best.length === limit && dot <= best[limit - 1]!.dot) continue;
      if (best.length < limit) best.push({ at, dot });
      let i = best.length - 1;
      while (i > 0 && best[i - 1]!.dot < dot) {
        best[i] = best[i - 1]!;
        i--;
      }
      best[i] = { at, dot };
    }
    return best.map((b) => ({
      id: this.ids[b.at]!,
      similarity: b.dot / (EMBEDDING_SCALE * EMBEDDING_SCALE),
    }));
  }

  /** The similarity to `query` of each of `ids` the index holds. */
  similarities(query: Int8Array, ids: readonly string[]): Map<string, number> {
    const out = new Map<string, number>();
    for (const id of ids) {
      const at = this.position.get(id);
      if (at === undefined) continue;
      const offset = at * EMBEDDING_DIMENSIONS;
      let dot = 0;
      for (let d = 0; d < EMBEDDING_DIMENSIONS; d++) dot += query[d]! * this.vectors[offset + d]!;
      out.set(id, dot / (EMBEDDING_SCALE * EMBEDDING_SCALE));
    }
    return out;
  }
}

export class MeaningIndex {
  readonly #datasets = new Map<string, Promise<DatasetVectors>>();
  readonly #rebuilding = new Set<string>();
  readonly #clock: () => number;

  /** `clock`: the process's clock, in milliseconds (how old an index is). */
  constructor(clock: () => number) {
    this.#clock = clock;
  }

  /**
   * The dataset's vectors of `kind`, current with the store: read whole on first use, then
   * what was stored since the last look.
   */
  async #current(db: Collections, tenant: Tenant, kind: VectorKind): Promise<DatasetVectors> {
    const key = JSON.stringify([tenant.workspaceId, tenant.dataset, kind]);
    let loading = this.#datasets.get(key);
    if (!loading) {
      loading = this.#build(db, tenant, kind);
      this.#datasets.set(key, loading);
      loading.catch(() => this.#datasets.delete(key));
    }
    const index = await loading;
    if (this.#clock() - index.builtAt > REBUILD_AFTER_MS && !this.#rebuilding.has(key)) {
      this.#rebuilding.add(key);
      this.#build(db, tenant, kind)
        .then((fresh) => this.#datasets.set(key, Promise.resolve(fresh)))
        .catch(() => {})
        .finally(() => this.#rebuilding.delete(key));
    }
    // What was stored since this index last looked, less the overlap: by this process's
    // clock when it looked, so a dataset nobody writes to costs one empty range read.
    const looking = this.#clock();
    const since = new Date(index.lookedAt - OVERLAP_MS);
    index.add(await vectorsSince(db, tenant, kind, since, index.embeddedAt));
    index.lookedAt = Math.max(index.lookedAt, looking);
    return index;
  }

  async #build(db: Collections, tenant: Tenant, kind: VectorKind): Promise<DatasetVectors> {
    const index = new DatasetVectors(this.#clock());
    index.add(await vectorsSince(db, tenant, kind, null));
    return index;
  }

  /**
   * The `limit` documents of `kind` whose vectors are nearest `query`, stored by `storedBy`,
   * best first: those whose similarity is at least `margin` above the question's mean
   * similarity to the dataset's other vectors (the bar: `floor`, returned).
   */
  async search(
    db: Collections,
    tenant: Tenant,
    kind: VectorKind,
    query: Int8Array,
    options: { storedBy: Date; limit: number; margin: number },
  ): Promise<{
    hits: VectorHit[];
    floor: number;
    similarities: (ids: readonly string[]) => Map<string, number>;
  }> {
    const index = await this.#current(db, tenant, kind);
    const floor = index.floor(query, options.margin);
    return {
      hits: index.search(query, options.storedBy.getTime(), options.limit, floor),
      floor,
      similarities: (ids) => index.similarities(query, ids),
    };
  }
}
