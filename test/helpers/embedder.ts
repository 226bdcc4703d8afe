import { type Embedder, loadEmbedder } from '../../src/embeddings/embedder.js';
import { readModelFiles } from '../../src/embeddings/modelFiles.js';

let loading: Promise<Embedder> | null = null;

/** The embedding model, loaded once per test process (test/setup/model.ts fetched it). */
export function testEmbedder(): Promise<Embedder> {
  loading ??= loadEmbedder(readModelFiles());
  return loading;
}
