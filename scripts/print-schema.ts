import { writeFileSync } from 'node:fs';
import { parseCommandLine } from '../src/cli/help.js';

/**
 * `npm run schema`: writes the sorted SDL to schema.graphql (a test checks it is current).
 * It takes no options.
 */
parseCommandLine(import.meta.url, { options: {} });
// Loaded after the command line is read: building the schema is the slow part.
const { printSortedSchema } = await import('../src/schema/index.js');
writeFileSync(new URL('../schema.graphql', import.meta.url), printSortedSchema());
process.stdout.write('Wrote schema.graphql\n');
