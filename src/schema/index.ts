import { lexicographicSortSchema, printSchema } from 'graphql';
import { builder } from './builder.js';
import './dataset.js';
import './entity.js';
import './episode.js';
import './fact.js';
import './relatedFacts.js';
import './memory.js';
import './viewer.js';
import './apiKey.js';
import './recordEpisode.js';
import './erasure.js';
import './memoryCuration.js';
import './recall.js';
import './datasetChange.js';

/**
 * The executable schema: every domain file above adds its types and root fields. The
 * scopes declared on it are checked before execution, for the whole operation
 * (src/schema/operationScopes.ts), so scope-auth's per-field run-time wrappers are left
 * out: they would only repeat that decision, at a cost on every field of every answer.
 */
export const schema = builder.toSchema({ disableScopeAuth: true });

/**
 * The SDL committed as schema.graphql: sorted, so diffs stay small; trailing newline.
 * @internal for `npm run schema` and the test that the committed file is current.
 */
export function printSortedSchema(): string {
  return `${printSchema(lexicographicSortSchema(schema))}\n`;
}
