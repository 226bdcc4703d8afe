import { z } from '@hono/zod-openapi';
import { UUID_PATTERN } from '../domain/ids.js';
import { MAX_QUERY_LENGTH } from '../domain/searchTerms.js';
import { parseInstant, parseRfc3339 } from '../domain/time.js';

/**
 * The REST parameters, as zod schemas: they validate each request and generate the
 * OpenAPI document, so the two cannot drift apart. Query values arrive as strings.
 */

/**
 * A query parameter given twice arrives as an array; like most HTTP frameworks, the
 * first occurrence wins (docs/COMPATIBILITY.md).
 */
export function firstOccurrence<T extends z.ZodType>(schema: T) {
  return z.preprocess((value) => (Array.isArray(value) ? value[0] : value), schema);
}

export const booleanParam = z
  .enum(['true', 'false'], { error: 'must be true or false' })
  .transform((v) => v === 'true');

export const uuidParam = z.string().regex(UUID_PATTERN, 'must be a UUID');

export const datasetParam = z
  .string()
  .min(1, 'must not be empty')
  .max(500, 'must be at most 500 characters')
  .openapi({
    description:
      'The dataset name, percent-encoded as ONE path segment (it may contain /, ?, #, %, spaces, non-ASCII).',
    example: 'user_42',
  });

export const limitParam = z
  .string()
  .regex(/^\d+$/, 'must be a whole number between 1 and 100')
  .transform(Number)
  .pipe(z.number().min(1, 'must be between 1 and 100').max(100, 'must be between 1 and 100'));

export const qParam = z
  .string()
  .max(MAX_QUERY_LENGTH, `must be at most ${MAX_QUERY_LENGTH} characters`);

/** Memory Soda's `asOf`: an ISO 8601 date (00:00:00Z) or date-time with a zone. */
export const asOfParam = z.string().transform((value, ctx) => {
  const date = parseInstant(value);
  if (!date) {
    ctx.addIssue({
      code: 'custom',
      message: 'must be an ISO 8601 date (2026-06-01) or date-time with a zone',
    });
    return z.NEVER;
  }
  return date;
});

/** SupaCloud's `as_of`: an RFC 3339 instant, nothing else. */
export const rfc3339Param = z.string().transform((value, ctx) => {
  const date = parseRfc3339(value);
  if (!date) {
    ctx.addIssue({
      code: 'custom',
      message: 'must be an RFC 3339 date-time with a zone, e.g. 2026-06-01T00:00:00Z',
    });
    return z.NEVER;
  }
  return date;
});

/** "name: reason; name: reason" for a failed parse, naming each parameter. */
export function describeIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) =>
      issue.path.length > 0 ? `${issue.path.join('.')}: ${issue.message}` : issue.message,
    )
    .join('; ');
}
