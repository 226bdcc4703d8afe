import { z } from 'zod';
import { UUID_PATTERN } from '../domain/ids.js';
import { MAX_QUERY_LENGTH } from '../domain/searchTerms.js';
import { badInput } from '../errors.js';

/** Argument rules shared by several fields, checked by the validation plugin. */

/** A dataset's or an entity's name, wherever one is given: 1 to 500 characters. */
const MAX_NAME_LENGTH = 500;
export const nameSchema = z
  .string()
  .min(1, 'must not be empty')
  .max(MAX_NAME_LENGTH, `must be at most ${MAX_NAME_LENGTH} characters`);

export const uuidSchema = z.string().regex(UUID_PATTERN, 'must be a UUID');

/** The options of the arguments many fields take: `t.arg.string(datasetArg)`, `t.arg.id(uuidArg)`. */
export const datasetArg = { required: true, validate: nameSchema } as const;
export const uuidArg = { required: true, validate: uuidSchema } as const;

export const querySchema = z
  .string()
  .max(MAX_QUERY_LENGTH, `must be at most ${MAX_QUERY_LENGTH} characters`);

/**
 * A connection's page: `first` (default DEFAULT_PAGE_SIZE, at most MAX_PAGE_SIZE) and
 * `after`, a cursor of the same connection (src/schema/cursors.ts).
 */
export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 100;

export const firstSchema = z
  .number()
  .int('must be a whole number')
  .min(1, `must be between 1 and ${MAX_PAGE_SIZE}`)
  .max(MAX_PAGE_SIZE, `must be between 1 and ${MAX_PAGE_SIZE}`);
const afterSchema = z.string().max(1000, 'is not a cursor of this connection');

export const pageFirstArg = { defaultValue: DEFAULT_PAGE_SIZE, validate: firstSchema } as const;
export const afterArg = { validate: afterSchema } as const;

/**
 * Lists under an object without pages of their own (an entity's facts, an episode's
 * facts): `first` up to MAX_NESTED_LIST_SIZE, the most recent (validAt) first.
 */
export const DEFAULT_NESTED_LIST_SIZE = 100;
export const MAX_NESTED_LIST_SIZE = 1000;

const nestedFirstSchema = z
  .number()
  .int('must be a whole number')
  .min(1, `must be between 1 and ${MAX_NESTED_LIST_SIZE}`)
  .max(MAX_NESTED_LIST_SIZE, `must be between 1 and ${MAX_NESTED_LIST_SIZE}`);
export const nestedFirstArg = {
  defaultValue: DEFAULT_NESTED_LIST_SIZE,
  validate: nestedFirstSchema,
} as const;

/**
 * The point (T, K) a read is made at, as every field that takes one declares it (the
 * rule behind them: domain/factState.ts resolveTemporalSelection).
 */
export const asOfArg = {
  type: 'DateTime',
  description: 'T and K both: overrides validAt and knownAt.',
} as const;
export const validAtArg = {
  type: 'DateTime',
  description: 'T, the instant on valid time (default: now).',
} as const;
export const knownAtArg = {
  type: 'DateTime',
  description: 'K, the instant on transaction time (default: now).',
} as const;

/** Ranked recall's `query` and `first` (Dataset.recall, POST /v1/memory/recall's body). */
const MAX_RECALL_QUERY_LENGTH = 2000;
export const DEFAULT_RECALL_SIZE = 10;
export const MAX_RECALL_SIZE = 50;

export const recallQuerySchema = z
  .string()
  .min(1, 'must not be empty')
  .max(MAX_RECALL_QUERY_LENGTH, `must be at most ${MAX_RECALL_QUERY_LENGTH} characters`);
/** How many of a recalled item's matched terms its explanation lists (the largest first). */
export const DEFAULT_EXPLAINED_TERMS = 20;
export const MAX_EXPLAINED_TERMS = 100;
export const explainedTermsSchema = z
  .number()
  .int('must be a whole number')
  .min(1, `must be between 1 and ${MAX_EXPLAINED_TERMS}`)
  .max(MAX_EXPLAINED_TERMS, `must be between 1 and ${MAX_EXPLAINED_TERMS}`);

export const recallFirstSchema = z
  .number()
  .int('must be a whole number')
  .min(1, `must be between 1 and ${MAX_RECALL_SIZE}`)
  .max(MAX_RECALL_SIZE, `must be between 1 and ${MAX_RECALL_SIZE}`);

/**
 * A field's time windows, checked on its arguments together: for each `[after, by]` pair of
 * DateTime arguments given both, `after` must be earlier than `by` (a window that can hold
 * no instant is a client mistake, refused rather than answered empty). The field's other
 * arguments pass through unchanged.
 */
export function orderedWindowsSchema(pairs: readonly (readonly [after: string, by: string])[]) {
  return z.looseObject({}).superRefine((args, ctx) => {
    for (const [after, by] of pairs) {
      const from = args[after];
      const to = args[by];
      if (from instanceof Date && to instanceof Date && from.getTime() >= to.getTime()) {
        ctx.addIssue({ code: 'custom', path: [after], message: `must be earlier than ${by}` });
      }
    }
  });
}

/**
 * An argument renamed to the name the rest of the API uses for the same thing (`factId`,
 * `episodeId`, `memoryId`: payloads, inputs, REST), whose old name still works for one
 * release. GraphQL deprecates only an optional argument, so both are declared optional,
 * with the same rules (each a UUID); the field's `validate` (renamedIdSchema) requires
 * exactly one of them, and the resolver reads it with `renamedIdValue`.
 */
export interface RenamedId {
  /** The argument's name: `factId`, `episodeId` or `memoryId`. */
  readonly name: string;
  /** Its old name, deprecated: `id`. */
  readonly oldName: string;
}

/** A fact's id argument (`factId`; `id` before, deprecated). */
export const FACT_ID: RenamedId = { name: 'factId', oldName: 'id' };
/** An episode's id argument (`episodeId`; `id` before, deprecated). */
export const EPISODE_ID: RenamedId = { name: 'episodeId', oldName: 'id' };

/** The new name's options: `t.arg.id(renamedIdArg(renamed, 'The fact to delete.'))`. */
export function renamedIdArg({ name, oldName }: RenamedId, description: string) {
  return {
    validate: uuidSchema,
    description: `${description} Required: optional in the schema only so the deprecated \`${oldName}\` can still be given instead (exactly one of ${name} and ${oldName}).`,
  } as const;
}

/** The old name's options: the same rules, deprecated in favour of the new name. */
export function deprecatedIdArg({ name, oldName }: RenamedId) {
  return {
    validate: uuidSchema,
    description: `The ${name}, under its old name.`,
    deprecationReason: `Use \`${name}\` (the same value): every fact, episode and memory is named factId, episodeId or memoryId throughout the API. \`${oldName}\` is accepted until the next release.`,
  } as const;
}

/** The field's check: exactly one of the new name and the deprecated one, reported on the new name. */
export function renamedIdSchema({ name, oldName }: RenamedId) {
  return z.looseObject({}).superRefine((args, ctx) => {
    const given = [args[name], args[oldName]].filter((value) => value != null).length;
    if (given === 0) {
      ctx.addIssue({
        code: 'custom',
        path: [name],
        message: `is required (an ID; ${oldName}, its deprecated name, is accepted instead until the next release)`,
      });
    } else if (given === 2) {
      ctx.addIssue({
        code: 'custom',
        path: [name],
        message: `give ${name} or its deprecated name ${oldName}, not both`,
      });
    }
  });
}

/** The value given under either name (renamedIdSchema has made sure there is exactly one). */
export function renamedIdValue(
  { name, oldName }: RenamedId,
  args: Readonly<Record<string, unknown>>,
): string {
  const value = args[name] ?? args[oldName];
  if (typeof value !== 'string') {
    const issue = { path: [name], message: 'is required (an ID)' };
    throw badInput(`${name}: ${issue.message}`, { issues: [issue] });
  }
  return value;
}
