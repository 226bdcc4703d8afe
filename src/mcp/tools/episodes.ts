/*
 * record_episode: how an agent (or its extraction pipeline) teaches the memory, an episode
 * with the entities and facts learned from it, recorded once however often it is sent.
 */

import { z } from 'zod';
import { type McpFactFragment, McpRecordEpisodeDocument } from '../../generated/operations.js';
import { uuidSchema } from '../../schema/args.js';
import { recordedText } from './format.js';
import { entity, factId, factOutput, instant, share, writtenDataset } from './schemas.js';
import { tool, WRITE_ONLY, WRITES } from './tool.js';

const factInput = z
  .object({
    subject: z.string().describe('Who or what the fact is about, e.g. "user".'),
    predicate: z.string().describe('The relation, e.g. "drives", "is interested in".'),
    object: z.string().describe('The value, e.g. "a honda civic".'),
    objectIsEntity: z.boolean().optional().describe('Whether object names one of the entities.'),
    confidence: share('How sure the extraction is'),
    sourceQuote: z.string().optional().describe('The words of the episode it comes from.'),
    validAt: instant(
      "When it became true in the world. Default: the episode's occurredAt.",
    ).optional(),
    validUntil: instant('When it stopped being true, if known. Default: open-ended.').optional(),
    replaceExisting: z
      .boolean()
      .optional()
      .describe(
        'This fact is the one value of its subject and predicate at a time: it supersedes the believed facts of the pair it replaces, and ends where a later one begins, whatever order episodes arrive in.',
      ),
    supersedes: z
      .array(factId)
      .optional()
      .describe('The factIds of the facts this one says are wrong.'),
  })
  .describe('A fact learned from the episode: subject, predicate, object, and when it holds.');

export const recordEpisode = tool({
  name: 'record_episode',
  title: 'Record an episode and the facts learned from it',
  description:
    'Records an episode (a conversation turn or other source text), the entities it mentions and the facts extracted from it, superseding the facts they replace. Safe to retry: the same episode (the same episode.episodeId, or without one the same source, occurredAt and content) is recorded once; outcome says RECORDED (this call), ALREADY_RECORDED (an earlier call did; nothing changed) or COMPLETED (this call finished an interrupted one). After WRITE_OUTCOME_UNKNOWN, call it again with the same input.',
  input: z.object({
    dataset: writtenDataset,
    input: z
      .object({
        episode: z
          .object({
            episodeId: uuidSchema
              .optional()
              .describe(
                'A UUID naming the episode; give one so a retry is recognised whatever else changes.',
              ),
            occurredAt: instant('When the episode happened.'),
            source: z.string().describe('Where it came from, e.g. "chat".'),
            content: z.string().describe('The text.'),
          })
          .describe('The source text and when it happened.'),
        entities: z
          .array(entity)
          .optional()
          .describe('The entities the episode mentions, each once (facts name them by name).'),
        facts: z.array(factInput).optional().describe('The facts learned from the episode.'),
      })
      .describe('The episode, the entities it mentions and the facts learned from it.'),
  }),
  output: z.object({
    outcome: z.enum(['RECORDED', 'ALREADY_RECORDED', 'COMPLETED']),
    episodeId: z.string(),
    factIds: z.array(z.string()),
    supersededIds: z.array(z.string()),
    facts: z.array(factOutput).optional().describe('The stored facts, for a key that may read.'),
    superseded: z
      .array(factOutput)
      .optional()
      .describe('The facts they superseded, as they are now, for a key that may read.'),
  }),
  // The same episode is recorded once, however often it is sent.
  annotations: { ...WRITES, idempotentHint: true },
  operation: McpRecordEpisodeDocument,
  listedWith: WRITE_ONLY,
  retry: 'retry with the same episode id: call record_episode again with the same input',
  async run(call, args) {
    const { data, readBack } = await call.executeReadingBack(args);
    const { outcome, episode, supersededIds, superseded } = data.recordEpisode;
    const recorded = {
      outcome,
      episodeId: episode.episodeId,
      factIds: data.recordEpisode.facts.map((f) => f.factId),
      supersededIds,
    };
    const facts = readBack ? (data.recordEpisode.facts as McpFactFragment[]) : null;
    return {
      structured: { ...recorded, ...(facts && superseded ? { facts, superseded } : {}) },
      text: recordedText(recorded, facts, superseded),
    };
  },
});
