import { parseCommandLine } from '../src/cli/help.js';
import { exitOnStartupFailure } from '../src/config.js';
import { ensureFerretDbBinary } from '../src/embedded/ferretdb.js';

/**
 * `npm run build:db`: builds (or finds in the cache) the embedded FerretDB binary, and
 * prints where it is. It takes no options. A failure the user can fix (no Go, too old a Go,
 * a failed build) is one line, as `npm start` prints it.
 */
parseCommandLine(import.meta.url, { options: {} });
const path = await ensureFerretDbBinary((line) => process.stderr.write(`${line}\n`)).catch(
  (error: unknown) => exitOnStartupFailure(error, 'build the embedded database'),
);
process.stdout.write(`Embedded database binary: ${path}\n`);
