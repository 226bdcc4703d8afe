/*
 * The zod shapes several tools share: their arguments (each described for the model) and
 * their outputs. The argument rules are the GraphQL arguments' own (src/schema/args.ts), so
 * a value both refuse is refused with the same words.
 */

import { z } from 'zod';
import { ENTITY_TYPES } from '../../domain/names.js';
import { INSTANT_FORMAT, parseInstant } from '../../domain/time.js';
import { nameSchema, uuidSchema } from '../../schema/args.js';

// Arguments ------------------------------------------------------------------------------

/**
 * A time argument: what it means, then how it is written. Listed as JSON Schema's
 * `date-time` (what a model should send); a date alone is accepted too, as the description
 * says (docs/MCP.md, "Tools and scopes").
 */
export const instant = (what: string) =>
  z
    .string()
    .refine((value) => parseInstant(value) !== null, { message: `must be ${INSTANT_FORMAT}` })
    .meta({ format: 'date-time', description: `${what} Written as ${INSTANT_FORMAT}.` });

const DATASET =
  'The dataset (one user, agent or conversation memory) by its exact name, case included, e.g. "user_42".';

/** The dataset a tool reads or changes: one of the workspace's. */
export const dataset = nameSchema.describe(
  `${DATASET} list_datasets names them; a name no dataset has is NOT_FOUND, with the names it may have meant.`,
);

/** The dataset a tool writes to: the first write to a new name creates it. */
export const writtenDataset = nameSchema.describe(
  `${DATASET} The first write to a name no dataset has creates it.`,
);

/** A share between 0 and 1 (a fact's confidence, a memory's importance), described. */
export const share = (what: string, byDefault?: number) =>
  z
    .number()
    .min(0, 'must be between 0 and 1')
    .max(1, 'must be between 0 and 1')
    .describe(`${what}, from 0 to 1${byDefault === undefined ? '' : ` (default ${byDefault})`}.`);

/** The time arguments of a read tool: which world (valid time) as known when (transaction time). */
export const timeArgs = {
  validAt: instant(
    'Valid time: what was true in the world at this instant (corrected history: as the memory knows it now, unless knownAt is given). Default: now.',
  ).optional(),
  knownAt: instant(
    'Transaction time: answer as the memory believed at this instant, before anything it learned later (audit: "what did I know then?"). Default: now.',
  ).optional(),
};

/** The time arguments, after asOf: both at once. */
export const asOfTimeArgs = {
  asOf: instant('Sets validAt and knownAt both to this instant.').optional(),
  ...timeArgs,
};

export const factId = uuidSchema.describe(
  "The fact's id (factId, a UUID), as other tools answer it.",
);

// Outputs --------------------------------------------------------------------------------

export const nullableInstant = z.string().nullable();

export const factOutput = z.object({
  factId: z.string(),
  subject: z.string(),
  predicate: z.string(),
  object: z.string(),
  confidence: z.number(),
  sourceQuote: z.string().nullable(),
  validAt: z.string(),
  validUntil: nullableInstant,
  recordedAt: z.string(),
  invalidAt: nullableInstant,
  invalidReason: z.enum(['SUPERSEDED', 'DELETED']).nullable(),
  episodeId: z.string().nullable(),
});

export const memoryOutput = z.object({
  memoryId: z.string(),
  text: z.string(),
  memoryKind: z.string(),
  scope: z.string(),
  sourceType: z.string(),
  importance: z.number(),
  salience: z.number(),
  pinned: z.boolean(),
  version: z.number(),
  validFrom: z.string(),
  validUntil: nullableInstant,
  archivedAt: nullableInstant,
  createdAt: z.string(),
  updatedAt: z.string(),
});

/** An entity as record_episode takes it and entity_facts answers it. */
export const entity = z
  .object({
    name: z
      .string()
      .describe('Its name, e.g. "honda civic" (stored lower-cased: case does not matter).'),
    type: z.enum(ENTITY_TYPES).describe('What kind of thing it is.'),
  })
  .describe('An entity: a person, place, product... by name, and its kind.');
