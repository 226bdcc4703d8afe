import { ensureModelFiles } from '../../src/embeddings/modelFiles.js';

/**
 * The embedding model, fetched once for the run if it is not there yet (as `npm start`
 * does): the tests of recall by meaning load it (test/helpers/embedder.ts).
 */
export async function setup(): Promise<void> {
  await ensureModelFiles((line) => process.stderr.write(`${line}\n`));
}
