import type { MeaningHit } from '../domain/recall.js';
import { type Embedder, similarity } from '../embeddings/embedder.js';
import type { Collections } from '../store/collections.js';
import {
  type FactView,
  factDocumentId,
  type MemoryDoc,
  memoryDocumentId,
} from '../store/documents.js';
import {
  embedPending,
  type StatementVectors,
  type VectorKind,
  vectorOf,
  vectorsOfTexts,
} from '../store/embeddings.js';
import {
  factsOfIdsInView,
  type MemoryRecallView,
  memoriesOfIdsInView,
  type RecallInstants,
} from '../store/recall.js';
import type { Tenant } from '../store/tenant.js';
import type { MeaningIndex } from './meaningIndex.js';

/**
 * Recall's dense leg (docs/RECALL.md, "Recall by meaning"): the question's vector, the
 * nearest vectors of the dataset (the process's MeaningIndex), and the documents of the
 * recall's view among them, read from the store. Before it looks, it stores the vectors of
 * whatever the dataset holds without one, so a question sees every write made before it.
 */

/** The model and the process's vector index: recall by meaning is on when given. */
export interface Meaning {
  embedder: Embedder;
  index: MeaningIndex;
}

/** The nearest vectors a leg reads from the store, before the view drops some. */
const MEANING_CANDIDATES = 50;

/**
 * What the dense leg found (the factors of its kind are the caller's), and the similarity
 * to the question of any other item, by its id (a fact's factId, a memory's memoryId).
 */
export interface MeaningFound<T> {
  hits: Omit<MeaningHit<T>, 'factors'>[];
  similarities(ids: readonly string[]): Map<string, number>;
}

/** The similarities of `ids`, from the similarities of their documents. */
function byItem(
  ids: readonly string[],
  documentOf: (id: string) => string,
  ofDocuments: (documents: readonly string[]) => Map<string, number>,
): Map<string, number> {
  const found = ofDocuments(ids.map(documentOf));
  return new Map(
    ids.flatMap((id) => {
      const s = found.get(documentOf(id));
      return s === undefined ? [] : [[id, s] as const];
    }),
  );
}

/** The question's vector, once its pending documents have theirs. */
async function questionVector(
  store: Collections,
  meaning: Meaning,
  tenant: Tenant,
  question: string,
  kind: VectorKind,
): Promise<Int8Array> {
  const [vector] = await Promise.all([
    meaning.embedder.embed([question]).then((v) => v[0]!),
    embedPending(store, meaning.embedder, tenant, () => {}, [kind]),
  ]);
  return vector;
}

/** The facts of the view nearest the question, `margin` above its mean similarity at least. */
export async function factsByMeaning(
  store: Collections,
  meaning: Meaning,
  tenant: Tenant,
  question: string,
  at: RecallInstants,
  margin: number,
): Promise<MeaningFound<FactView>> {
  const vector = await questionVector(store, meaning, tenant, question, 'facts');
  const { hits, similarities } = await meaning.index.search(store, tenant, 'facts', vector, {
    storedBy: at.knownAt,
    limit: MEANING_CANDIDATES,
    margin,
  });
  const byDocument = new Map(hits.map((h) => [h.id, h.similarity]));
  const facts = await factsOfIdsInView(store, tenant, [...byDocument.keys()], at);
  const documentOf = (factId: string) => factDocumentId(tenant, factId);
  return {
    hits: facts.map((f) => ({
      item: f,
      id: f.factId,
      time: f.validAt,
      similarity: byDocument.get(documentOf(f.factId))!,
    })),
    similarities: (ids) => byItem(ids, documentOf, similarities),
  };
}

/**
 * The memories of the view nearest the question, `margin` above its mean similarity at
 * least (on a replay, those changed since K as they were then, each by its own vector then).
 */
export async function memoriesByMeaning(
  store: Collections,
  meaning: Meaning,
  tenant: Tenant,
  question: string,
  view: MemoryRecallView,
  margin: number,
): Promise<MeaningFound<MemoryDoc>> {
  const vector = await questionVector(store, meaning, tenant, question, 'memories');
  const knownAt = view.kind === 'live' ? view.now : view.knownAt;
  const { hits, floor, similarities } = await meaning.index.search(
    store,
    tenant,
    'memories',
    vector,
    { storedBy: knownAt, limit: MEANING_CANDIDATES, margin },
  );
  const byDocument = new Map(hits.map((h) => [h.id, h.similarity]));
  const { found, replayed } = await memoriesOfIdsInView(
    store,
    tenant,
    [...byDocument.keys()],
    view,
  );
  const documentOf = (memoryId: string) => memoryDocumentId(tenant, memoryId);
  // A memory as it was at K: the vector of its text then (kept with the version, or
  // computed again: it depends on the text alone).
  const thenVectors = await Promise.all(
    replayed.map(async (m) =>
      m.embedded && m.embedding
        ? vectorOf(m.embedding)
        : (await meaning.embedder.embed([m.text]))[0]!,
    ),
  );
  const replayedSimilarity = new Map(
    replayed.map((m, i) => [m.memoryId, similarity(vector, thenVectors[i]!)] as const),
  );
  const hit = (m: MemoryDoc, s: number) => ({
    item: m,
    id: m.memoryId,
    time: m.createdAt,
    similarity: s,
  });
  return {
    hits: [
      ...found.map((m) => hit(m, byDocument.get(documentOf(m.memoryId))!)),
      ...replayed.flatMap((m) => {
        const s = replayedSimilarity.get(m.memoryId)!;
        return s >= floor ? [hit(m, s)] : [];
      }),
    ],
    similarities: (ids) => {
      const current = byItem(
        ids.filter((id) => !replayedSimilarity.has(id)),
        documentOf,
        similarities,
      );
      for (const id of ids) {
        const s = replayedSimilarity.get(id);
        if (s !== undefined) current.set(id, s);
      }
      return current;
    },
  };
}

/**
 * After a write: the vectors of what it stored, so they are there at write time. A failure
 * does not fail the write it follows (the write is done): the next recall, or the next
 * start, stores them (`embedPending`); the edge logs it as a warning.
 */
export async function embedWritten(
  deps: { store: Collections; meaning: Meaning | null; observed: { problems: string[] } },
  tenant: Tenant,
): Promise<void> {
  if (!deps.meaning) return;
  await embedPending(deps.store, deps.meaning.embedder, tenant).catch((error: unknown) => {
    deps.observed.problems.push(
      `vectors not stored yet: ${error instanceof Error ? error.message : String(error)}`,
    );
  });
}

/**
 * The vectors of the texts a write is about to store, when recall by meaning is on, so its
 * documents are stored with them. A failure leaves them to `embedWritten` (null here).
 */
export async function vectorsToStore(
  deps: { meaning: Meaning | null; observed: { problems: string[] } },
  texts: readonly string[],
): Promise<StatementVectors | null> {
  if (!deps.meaning || texts.length === 0) return null;
  return vectorsOfTexts(deps.meaning.embedder, texts).catch((error: unknown) => {
    deps.observed.problems.push(
      `vectors not computed: ${error instanceof Error ? error.message : String(error)}`,
    );
    return null;
  });
}
