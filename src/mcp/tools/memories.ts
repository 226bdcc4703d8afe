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
import { writtenMemoryText } from './format.js';
import { dataset, instant, memoryOutput } from './schemas.js';
import { type ToolAnswer, tool, WRITE_ONLY, WRITES } from './tool.js';

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

export const createMemory = tool({
  name: 'create_memory',
  title: 'Create a memory',
  description:
    'Stores a free-text memory (a note, preference or instruction to keep), version 1, valid from now (or validFrom). importance, salience and pinned raise it in recall. Give a memoryId (a UUID) to make a retry create it once.',
  input: z.object({
    dataset,
    input: z.object({
      text: z.string().describe('The memory, in words.'),
      memoryKind: z
        .string()
        .default(MEMORY_DEFAULTS.memoryKind)
        .describe('What kind, e.g. "note", "preference".'),
      scope: z.string().default(MEMORY_DEFAULTS.scope).describe('Whose, e.g. "user", "project".'),
      sourceType: z.string().default(MEMORY_DEFAULTS.sourceType).describe('Where it came from.'),
      memoryId: z.string().optional().describe('A UUID, so a retried create is recorded once.'),
      importance: z.number().optional().describe('0 to 1 (default 0.5).'),
      salience: z.number().optional().describe('0 to 1 (default 0.5).'),
      pinned: z.boolean().optional(),
      validFrom: instant('When it starts to hold. Default: now.').optional(),
    }),
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
      .optional()
      .describe('The version you read.'),
    patch: z.object({
      text: z.string().optional(),
      memoryKind: z.string().optional(),
      scope: z.string().optional(),
      sourceType: z.string().optional(),
      importance: z.number().optional(),
      salience: z.number().optional(),
    }),
  }),
  output: writtenMemoryOutput,
  annotations: WRITES,
  operation: McpUpdateMemoryDocument,
  listedWith: WRITE_ONLY,
  async run(call, args) {
    const { data, readBack } = await call.executeReadingBack(args);
    return writtenMemory('Updated', data.updateMemory, readBack);
  },
});
