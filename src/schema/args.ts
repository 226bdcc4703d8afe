import { z } from 'zod';
import { UUID_PATTERN } from '../domain/ids.js';
import { MAX_QUERY_LENGTH } from '../domain/searchTerms.js';

/** Argument rules shared by several fields, checked by the validation plugin. */
export const datasetNameSchema = z
  .string()
  .min(1, 'must not be empty')
  .max(500, 'must be at most 500 characters');

export const uuidSchema = z.string().regex(UUID_PATTERN, 'must be a UUID');

/** The options of the arguments many fields take: `t.arg.string(datasetArg)`, `t.arg.id(uuidArg)`. */
export const datasetArg = { required: true, validate: datasetNameSchema } as const;
export const uuidArg = { required: true, validate: uuidSchema } as const;

export const querySchema = z
  .string()
  .max(MAX_QUERY_LENGTH, `must be at most ${MAX_QUERY_LENGTH} characters`);

export const entityNameSchema = z
  .string()
  .min(1, 'must not be empty')
  .max(500, 'must be at most 500 characters');

/** Ranked recall's `query` and `first` (Dataset.recall, POST /v1/memory/recall's body). */
export const MAX_RECALL_QUERY_LENGTH = 2000;
export const DEFAULT_RECALL_SIZE = 10;
export const MAX_RECALL_SIZE = 50;

export const recallQuerySchema = z
  .string()
  .min(1, 'must not be empty')
  .max(MAX_RECALL_QUERY_LENGTH, `must be at most ${MAX_RECALL_QUERY_LENGTH} characters`);
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
