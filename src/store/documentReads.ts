/**
 * Which fields of its documents a read returns. A client's selection decides what a fact
 * or an entity must carry (src/schema/selectedReads.ts derives it from the fields asked
 * for, as each field declares); the store then reads those fields only, plus the ones it
 * needs itself (a loader's key, a page's order), instead of every field of the document.
 * `null` is the whole view: what a caller with no selection (an export, a write's answer,
 * recall) reads.
 */
export interface DocumentReads {
  /** The fields, sorted and without repeats. */
  readonly fields: readonly string[];
  /** The fields as one string: equal reads, equal keys (a loader's cache key). */
  readonly key: string;
}

/** `fields` as reads (sorted, each once). */
export function documentReads(fields: Iterable<string>): DocumentReads {
  const sorted = [...new Set(fields)].sort();
  return { fields: sorted, key: sorted.join(',') };
}

/**
 * The reads a batch needs: every key's fields, or the whole view if any key asks for it.
 * One read answers the whole batch, whatever each member asked.
 */
export function mergedReads(all: readonly (DocumentReads | null)[]): DocumentReads | null {
  if (all.length === 0 || all.includes(null)) return null;
  const first = all[0]!;
  if (all.every((r) => r!.key === first.key)) return first;
  return documentReads(all.flatMap((r) => r!.fields));
}

/** Whether what `had` read answers what `wanted` asks for. */
export function readsCover(had: DocumentReads | null, wanted: DocumentReads | null): boolean {
  if (had === null) return true;
  if (wanted === null) return false;
  if (had.key === wanted.key) return true;
  const fields = new Set(had.fields);
  return wanted.fields.every((f) => fields.has(f));
}

type Projection = Readonly<Record<string, 0 | 1>>;

/** Projections already built, by reads and the store's own needs (bounded by the schema's fields). */
const projections = new WeakMap<DocumentReads, Map<string, Projection>>();

/**
 * The driver's projection for `reads`: the whole view when null, else the fields asked for
 * and what the read itself needs (`needs`: its keys, its order), without `_id`.
 */
export function projectionFor(
  reads: DocumentReads | null,
  whole: Projection | undefined,
  needs: readonly string[],
): Projection | undefined {
  if (reads === null) return whole;
  let built = projections.get(reads);
  if (!built) {
    built = new Map();
    projections.set(reads, built);
  }
  const needsKey = needs.join(',');
  let projection = built.get(needsKey);
  if (!projection) {
    projection = { _id: 0, ...Object.fromEntries([...reads.fields, ...needs].map((f) => [f, 1])) };
    built.set(needsKey, projection);
  }
  return projection;
}
