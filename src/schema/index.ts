import { lexicographicSortSchema, printSchema } from 'graphql';
import { builder } from './builder.js';
import './dataset.js';
import './entity.js';
import './episode.js';
import './fact.js';
import './memory.js';
import './viewer.js';
import './recordEpisode.js';
import './erasure.js';
import './memoryCuration.js';
import './recall.js';

/** The executable schema: every domain file above adds its types and root fields. */
export const schema = builder.toSchema();

/**
 * The SDL committed as schema.graphql: sorted, so diffs stay small; trailing newline.
 * @internal for `npm run schema` and the test that the committed file is current.
 */
export function printSortedSchema(): string {
  return `${printSchema(lexicographicSortSchema(schema))}\n`;
}
