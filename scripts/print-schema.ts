import { writeFileSync } from 'node:fs';
import { printSortedSchema } from '../src/schema/index.js';

/** `npm run schema`: writes the sorted SDL to schema.graphql (a test checks it is current). */
writeFileSync(new URL('../schema.graphql', import.meta.url), printSortedSchema());
process.stdout.write('Wrote schema.graphql\n');
