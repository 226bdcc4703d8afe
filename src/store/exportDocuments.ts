import type { Collections } from './collections.js';
import type { StoredDocument } from './documents.js';

/** Every document of a workspace (or one dataset), in a stable order, for export. */
export async function* exportDocuments(
  db: Collections,
  workspaceId: string,
  dataset?: string | null,
): AsyncGenerator<StoredDocument> {
  const filter = dataset != null ? { workspaceId, dataset } : { workspaceId };
  const tag = { comment: 'store:exportDocuments' };
  // A vector is never exported (an import computes it again from the text): not read.
  const noVector = { ...tag, projection: { embedding: 0 } };
  for await (const doc of db.entities.find(filter, tag).sort({ dataset: 1, name: 1 })) {
    yield { kind: 'entity', doc };
  }
  for await (const doc of db.episodes.find(filter, tag).sort({ dataset: 1, episodeId: 1 })) {
    yield { kind: 'episode', doc };
  }
  for await (const doc of db.facts.find(filter, noVector).sort({ dataset: 1, factId: 1 })) {
    yield { kind: 'fact', doc };
  }
  for await (const doc of db.memories.find(filter, noVector).sort({ dataset: 1, memoryId: 1 })) {
    yield { kind: 'memory', doc };
  }
}
