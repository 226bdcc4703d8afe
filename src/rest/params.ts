import { z } from '@hono/zod-openapi';
import { INSTANT_FORMAT, parseInstant, parseRfc3339 } from '../domain/time.js';
import { firstSchema, MAX_PAGE_SIZE, nameSchema, querySchema, uuidSchema } from '../schema/args.js';

/**
 * The REST parameters, as zod schemas: they validate each request and generate the
 * OpenAPI document, so the two cannot drift apart. The rules are the GraphQL arguments'
 * own (src/schema/args.ts, `first`'s bounds), so both surfaces refuse the same values
 * with the same words; what is REST's alone is reading them from strings (query values
 * arrive as strings).
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

/**
 * Memory Soda's `includeInvalidated`: `true`, `false`, `1` or `0`, in any case (its
 * document says "boolean" without a spelling; docs/COMPATIBILITY.md).
 */
export const lenientBooleanParam = z
  .string()
  .transform((v) => v.toLowerCase())
  .pipe(z.enum(['true', 'false', '1', '0'], { error: 'must be true, false, 1 or 0' }))
  .transform((v) => v === 'true' || v === '1');

// The shared rules are built with the schema's zod, possibly before @hono/zod-openapi adds
// `.openapi()` to new schemas, so their documentation goes through zod's own `.meta()`,
// which the OpenAPI generator reads as well.
export const uuidParam = uuidSchema;

export const datasetParam = nameSchema.meta({
  description:
    'The dataset name, percent-encoded as ONE path segment (it may contain /, ?, #, %, spaces, non-ASCII).',
  example: 'user_42',
});

export const entityNameParam = nameSchema.meta({ example: 'honda civic' });

/** Memory Soda's `limit`: decimal digits, then GraphQL's `first` rule (it becomes `first`). */
export const limitParam = z
  .string()
  .regex(/^\d+$/, `must be a whole number between 1 and ${MAX_PAGE_SIZE}`)
  // Digits past the largest page read as one past it (zod would also call a number beyond
  // 2^53 "not a whole number"); past a double's range they read as Infinity, not a number.
  .transform((digits) => {
    const value = Number(digits);
    return Number.isFinite(value) ? Math.min(value, MAX_PAGE_SIZE + 1) : value;
  })
  .pipe(firstSchema);

export const qParam = querySchema;

/** An instant read by `parse` (src/domain/time.ts), refused with `problem` when it reads none. */
function instantParam(parse: (value: string) => Date | null, problem: string) {
  return z.string().transform((value, ctx) => {
    const date = parse(value);
    if (!date) {
      ctx.addIssue({ code: 'custom', message: problem });
      return z.NEVER;
    }
    return date;
  });
}

/**
 * Memory Soda's `asOf` (and the recall route's `validAt`, `knownAt`): an instant as every
 * surface reads one, in the same words: an ISO 8601 date (00:00:00Z) or a date-time with a
 * zone. Its document types it as a date, so a date-time without a zone is refused rather
 * than guessed at (docs/COMPATIBILITY.md, "Instants").
 */
export const asOfParam = instantParam(parseInstant, `must be ${INSTANT_FORMAT}`);

/** SupaCloud's `as_of`: an RFC 3339 instant, nothing else. */
export const rfc3339Param = instantParam(
  parseRfc3339,
  'must be an RFC 3339 date-time with a zone, e.g. 2026-06-01T00:00:00Z',
);
