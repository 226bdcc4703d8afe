/*
 * recall: the tool an agent calls before answering, ranked facts and memories for a
 * question with GraphQL's prompt-ready context of them.
 */

import { z } from 'zod';
import { recallContext } from '../../domain/recall.js';
import { McpRecallDocument } from '../../generated/operations.js';
import { DEFAULT_RECALL_SIZE, recallFirstSchema, recallQuerySchema } from '../../schema/args.js';
import { recallText } from './format.js';
import { asOfTimeArgs, dataset, factOutput, memoryOutput, nullableInstant } from './schemas.js';
import { READS, tool } from './tool.js';

const explanationOutput = z
  .object({
    score: z.number(),
    bm25: z.number(),
    factors: z.array(z.object({ name: z.string(), value: z.number() })),
    via: z.string().nullable(),
    terms: z.array(
      z.object({
        term: z.string(),
        weight: z.number(),
        common: z.boolean(),
        correctedFrom: z.string().nullable(),
        fields: z.array(z.object({ field: z.string(), termFrequency: z.number() })),
      }),
    ),
    time: z
      .object({
        phrase: z.string(),
        validFrom: nullableInstant,
        validUntil: nullableInstant,
        applied: z.boolean(),
      })
      .nullable(),
  })
  .optional();

export const recall = tool({
  name: 'recall',
  title: 'Recall what the memory holds about a question',
  description:
    'Ranked recall: the facts and memories of a dataset that best match a free-text query, best first, and a prompt-ready context (one line per fact: what holds, since when, until when). Use it before answering a question about the user or the past. Without a time argument it answers from what is true and believed now; a time the question names ("in June 2026", "last week", "since March") narrows it to what was true then; validAt asks what was true at another instant, knownAt replays what recall would have answered when only what was known then was known. Words held by most of the dataset ("user") cannot recall anything alone. A misspelt word of five letters or more is read as the nearest word the facts hold (explain shows it as correctedFrom); matching is on words, not meaning: ask with the words the user would have used.',
  input: z.object({
    dataset,
    query: recallQuerySchema.describe(
      'What to look for, in words ("what car does the user drive?").',
    ),
    limit: recallFirstSchema
      .default(DEFAULT_RECALL_SIZE)
      .describe('How many facts and how many memories at most (1-50).'),
    ...asOfTimeArgs,
    explain: z
      .boolean()
      .default(false)
      .describe('Also say why each item ranked where it did (its score, factors and terms).'),
    memories: z
      .boolean()
      .default(true)
      .describe('Also recall free-text memories (default true); false: facts only.'),
  }),
  output: z.object({
    context: z.string(),
    facts: z.array(
      z.object({ relevanceScore: z.number(), fact: factOutput, explanation: explanationOutput }),
    ),
    memories: z.array(
      z.object({
        relevanceScore: z.number(),
        memory: memoryOutput,
        explanation: explanationOutput,
      }),
    ),
  }),
  annotations: READS,
  operation: McpRecallDocument,
  listedWith: { explain: true, withMemories: true },
  async run(call, { limit, memories: withMemories, ...args }) {
    const data = await call.execute({ ...args, first: limit, withMemories });
    const facts = data.dataset?.recall.facts ?? [];
    const memories = data.dataset?.recall.memories ?? [];
    // The prompt-ready lines GraphQL's Recall.context gives, of what was recalled here.
    const context = recallContext(
      facts.map(({ fact }) => ({
        ...fact,
        validAt: new Date(fact.validAt),
        validUntil: fact.validUntil ? new Date(fact.validUntil) : null,
      })),
      memories.map(({ memory }) => memory),
    );
    return { structured: { context, facts, memories }, text: recallText(context) };
  },
});
