import { parseCommandLine } from '../src/cli/help.js';
import { ensureFerretDbBinary } from '../src/embedded/ferretdb.js';

/**
 * `npm run build:db`: builds (or finds in the cache) the embedded FerretDB binary, and
 * prints where it is. It takes no options.
 */
parseCommandLine(import.meta.url, { options: {} });
const path = await ensureFerretDbBinary((line) => process.stderr.write(`${line}\n`));
process.stdout.write(`Embedded database binary: ${path}\n`);
