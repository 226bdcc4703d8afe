/*
 * The memory tools: free-text memories (notes, preferences, instructions) an agent
 * creates and changes, each change a new version.
 */

import { z } from 'zod';
import {
  McpCreateMemoryDocument,
  type McpMemoryFragment,
  McpUpdateMemoryDocument,
} from '../../generated/operations.js';
import { uuidSchema } from '../../schema/args.js';
import { DEFAULT_SCORE } from '../../schema/memoryCuration.js';
import { writtenMemoryText } from './format.js';
import { dataset, instant, memoryOutput, share, writtenDataset } from './schemas.js';
import { notFoundIn, type ToolAnswer, tool, WRITE_ONLY, WRITES } from './tool.js';

/** What a memory write answers: its id and version, and the memory for a key that may read. */
const writtenMemoryOutput = z.object({
  memoryId: z.string(),
  version: z.number(),
  memory: memoryOutput.optional().describe('The memory as written, for a key that may read.'),
});

function writtenMemory(
  done: string,
  memory: { memoryId: string; version: number },
  readBack: boolean,
): ToolAnswer {
  // Decided by readBack, not by the keys present: a compiled operation (graphql-jit) may
  // leave a skipped fragment's fields as keys with no value.
  const full = readBack ? (memory as McpMemoryFragment) : null;
  return {
    structured: {
      memoryId: memory.memoryId,
      version: memory.version,
      ...(full ? { memory: full } : {}),
    },
    text: writtenMemoryText(done, memory, full),
  };
}

/** What create_memory fills in when the agent does not say (SupaCloud's fields are required). */
const MEMORY_DEFAULTS = { memoryKind: 'note', scope: 'user', sourceType: 'agent' } as const;

const IMPORTANCE = 'How much it matters (raises it in recall)';
const SALIENCE = 'How much it stands out now (raises it in recall)';

/** GraphQL's Int: the largest value an operation's Int variable carries. */
const MAX_GRAPHQL_INT = 2 ** 31 - 1;

/** A memory's fields, as create_memory sets them and update_memory changes them. */
const memoryFields = {
  text: z.string().describe('The memory, in words.'),
  memoryKind: z.string().describe('What kind, e.g. "note", "preference".'),
  scope: z.string().describe('Whose, e.g. "user", "project".'),
  sourceType: z.string().describe('Where it came from, e.g. "agent".'),
  importance: share(IMPORTANCE),
  salience: share(SALIENCE),
};

export const createMemory = tool({
  name: 'create_memory',
  title: 'Create a memory',
  description:
    'Stores a free-text memory (a note, preference or instruction to keep), version 1, valid from now (or validFrom). importance, salience and pinned raise it in recall. Give a memoryId (a UUID) to make a retry create it once.',
  input: z.object({
    dataset: writtenDataset,
    input: z
      .object({
        text: memoryFields.text,
        memoryKind: memoryFields.memoryKind.default(MEMORY_DEFAULTS.memoryKind),
        scope: memoryFields.scope.default(MEMORY_DEFAULTS.scope),
        sourceType: memoryFields.sourceType.default(MEMORY_DEFAULTS.sourceType),
        memoryId: uuidSchema
          .optional()
          .describe('A UUID naming the memory, so a retried create is recorded once.'),
        importance: share(IMPORTANCE, DEFAULT_SCORE).optional(),
        salience: share(SALIENCE, DEFAULT_SCORE).optional(),
        pinned: z
          .boolean()
          .optional()
          .describe('Pinned: raised in recall above an equal memory that is not. Default: false.'),
        validFrom: instant('When it starts to hold. Default: now.').optional(),
      })
      .describe('The memory to create.'),
  }),
  output: writtenMemoryOutput,
  annotations: WRITES,
  operation: McpCreateMemoryDocument,
  listedWith: WRITE_ONLY,
  retry: 'retry with the same memoryId',
  async run(call, args) {
    const { data, readBack } = await call.executeReadingBack(args);
    return writtenMemory('Created', data.createMemory, readBack);
  },
});

export const updateMemory = tool({
  name: 'update_memory',
  title: 'Update a memory',
  description:
    "Changes a memory's fields as its next version (the fields left out keep their value). Pass expectedVersion (the version you read) so a change made meanwhile by someone else is a CONFLICT instead of being overwritten; then read it again and decide.",
  input: z.object({
    dataset,
    memoryId: uuidSchema.describe("The memory's id (memoryId)."),
    expectedVersion: z
      .number()
      .int('must be a whole number')
      .min(1, 'must be at least 1')
      .max(MAX_GRAPHQL_INT, `must be at most ${MAX_GRAPHQL_INT}`)
      .optional()
      .describe('The version you read (a memory starts at version 1).'),
    patch: z
      .object({
        text: memoryFields.text.optional(),
        memoryKind: memoryFields.memoryKind.optional(),
        scope: memoryFields.scope.optional(),
        sourceType: memoryFields.sourceType.optional(),
        importance: memoryFields.importance.optional(),
        salience: memoryFields.salience.optional(),
      })
      .describe('The fields to change; those left out keep their value.'),
  }),
  output: writtenMemoryOutput,
  annotations: WRITES,
  operation: McpUpdateMemoryDocument,
  listedWith: WRITE_ONLY,
  notFound: ({ dataset, memoryId }) => notFoundIn(dataset, `memory ${memoryId}`),
  async run(call, args) {
    const { data, readBack } = await call.executeReadingBack(args);
    return writtenMemory('Updated', data.updateMemory, readBack);
  },
});
