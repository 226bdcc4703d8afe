/*
 * The MCP tools (docs/MCP.md): what an agent can ask of the memory, each a registered
 * GraphQL operation (src/mcp/tools.graphql) run in-process with the request's own context,
 * as the REST adapters run theirs. A tool declares its input (zod: it validates the call
 * and becomes the JSON Schema `tools/list` shows), its output (structuredContent's schema),
 * its annotations and its operation; `run` maps the arguments to the operation's variables
 * and its answer to structured content plus a text for the model. The argument rules are
 * the GraphQL arguments' own (src/schema/args.ts), so a value both refuse is refused with
 * the same words.
 */

import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { RequestContext } from '../context.js';
import { ENTITY_TYPES } from '../domain/names.js';
import { recallContext } from '../domain/recall.js';
import { INSTANT_FORMAT, parseInstant } from '../domain/time.js';
import { GatewayError } from '../errors.js';
import {
  McpCreateMemoryDocument,
  McpDeleteFactDocument,
  McpEntityFactsDocument,
  type McpFactFragment,
  McpFactHistoryDocument,
  McpListDatasetsDocument,
  McpListFactsDocument,
  type McpMemoryFragment,
  McpRecallDocument,
  McpRecordEpisodeDocument,
  McpUpdateMemoryDocument,
  McpWhatChangedDocument,
} from '../generated/operations.js';
import { runOperation } from '../rest/runOperation.js';
import {
  DEFAULT_PAGE_SIZE,
  DEFAULT_RECALL_SIZE,
  firstSchema,
  MAX_NESTED_LIST_SIZE,
  nameSchema,
  querySchema,
  recallFirstSchema,
  recallQuerySchema,
  uuidSchema,
} from '../schema/args.js';
import { scopesOf } from '../schema/authScopes.js';
import { schema } from '../schema/index.js';
import { authorizeOperation } from '../schema/operationScopes.js';

/** What a tool answers: the structured content (its output schema's) and a text for the model. */
interface ToolAnswer {
  structured: Record<string, unknown>;
  text: string;
}

export interface McpTool<Input extends z.ZodObject = z.ZodObject> {
  name: string;
  title: string;
  /** Written for a model: what it answers, and what the time arguments mean. */
  description: string;
  input: Input;
  output: z.ZodObject;
  annotations: ToolAnnotations;
  /** The operation it runs (src/mcp/tools.graphql). */
  operation: TypedDocumentNode<unknown, never>;
  /**
   * The @include / @skip values `tools/list` judges a key by: recall's widest call, a write
   * tool's ids-only one (`readBack`: any key that may write may call it).
   */
  listedWith?: Record<string, unknown>;
  /** What to add to WRITE_OUTCOME_UNKNOWN's message: how to retry this tool safely. */
  retry?: string;
  run(ctx: RequestContext, args: z.output<Input>): Promise<ToolAnswer>;
}

/** Why the key may not run an operation whole (the refusal runOperation would answer), or null. */
export function refusalOf(
  ctx: RequestContext,
  operation: TypedDocumentNode<unknown, never>,
  variables: Record<string, unknown> = {},
) {
  return authorizeOperation(schema, operation, { variables }, scopesOf(ctx), { fields: false });
}

/**
 * Whether a write tool reads back what it wrote in full (the key may also read), else only
 * the ids and versions a write-only key (an extraction pipeline's) is handed back.
 */
const mayReadBack = (ctx: RequestContext, operation: TypedDocumentNode<unknown, never>) =>
  !refusalOf(ctx, operation, { readBack: true });

/** What `tools/list` judges a write tool by: the ids-only call. */
const WRITE_ONLY = { readBack: false };

/** A tool, typed by its input (one name for the idiom: every tool below is declared with it). */
const tool = <Input extends z.ZodObject>(declared: McpTool<Input>): McpTool =>
  declared as unknown as McpTool;

// Arguments ------------------------------------------------------------------------------

const instant = (what: string) =>
  z
    .string()
    .refine((value) => parseInstant(value) !== null, { message: `must be ${INSTANT_FORMAT}` })
    .describe(what);

const dataset = nameSchema.describe(
  'The dataset (one user, agent or conversation memory), e.g. "user_42". list_datasets names them.',
);
const validAt = instant(
  'Valid time: what was true in the world at this instant (corrected history: as the memory knows it now, unless knownAt is given). Default: now.',
);
const knownAt = instant(
  'Transaction time: answer as the memory believed at this instant, before anything it learned later (audit: "what did I know then?"). Default: now.',
);
const asOf = instant('Sets validAt and knownAt both to this instant.');
const cursor = (of: string) =>
  z
    .string()
    .max(1000, 'is not a cursor of this list')
    .describe(`The cursor a previous ${of} call answered, to continue after it.`);
const pageSize = (what: string) =>
  firstSchema.default(DEFAULT_PAGE_SIZE).describe(`How many ${what} at most (1-100).`);
const factId = uuidSchema.describe("The fact's id (factId, a UUID), as other tools answer it.");

// Outputs --------------------------------------------------------------------------------

const nullableInstant = z.string().nullable();
const factOutput = z.object({
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
const memoryOutput = z.object({
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

// Texts ----------------------------------------------------------------------------------

/** One fact as a line the model reads: the statement, both time axes, its id. */
function factLine(f: McpFactFragment): string {
  const valid = `valid from ${f.validAt}${f.validUntil ? ` until ${f.validUntil}` : ''}`;
  const believed = f.invalidAt
    ? `; ${f.invalidReason === 'DELETED' ? 'deleted' : 'superseded'} ${f.invalidAt}`
    : '';
  return `- ${f.subject} ${f.predicate} ${f.object} (${valid}; recorded ${f.recordedAt}${believed}) [fact ${f.factId}]`;
}

const memoryLine = (m: McpMemoryFragment) =>
  `- ${m.text} [memory ${m.memoryId}, version ${m.version}${m.pinned ? ', pinned' : ''}]`;

const listed = (lines: string[], none: string) => (lines.length ? lines.join('\n') : none);

const notFound = (what: string) => new GatewayError('NOT_FOUND', what);

/** What a client may assume of the read tools: they change nothing, and the memory is closed-world. */
const READS: ToolAnnotations = { readOnlyHint: true, openWorldHint: false };
/** Of the write tools: they add, not destroy, and a repeat is another write (unless a tool says). */
const WRITES: ToolAnnotations = {
  readOnlyHint: false,
  destructiveHint: false,
  idempotentHint: false,
  openWorldHint: false,
};

// The tools ------------------------------------------------------------------------------

const recall = tool({
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
    asOf: asOf.optional(),
    validAt: validAt.optional(),
    knownAt: knownAt.optional(),
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
  async run(ctx, { limit, memories: withMemories, ...args }) {
    const data = await runOperation(ctx, McpRecallDocument, {
      ...args,
      first: limit,
      withMemories,
    });
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
    return {
      structured: { context, facts, memories },
      text: context || 'Nothing in this dataset matches the query.',
    };
  },
});

const listFacts = tool({
  name: 'list_facts',
  title: 'List facts',
  description:
    'The facts of a dataset, the most recent validAt first, a page at a time (pass nextCursor back as cursor for the next). By default the facts true and believed now. q keeps facts whose subject, predicate and object hold every word of q. includeInvalidated adds superseded and deleted facts. validAt: what was true at that time (as known now); knownAt: what the memory believed at that time; asOf: both. episodeId: the facts one episode produced.',
  input: z.object({
    dataset,
    q: querySchema.optional().describe('Words every listed fact must contain.'),
    limit: pageSize('facts'),
    cursor: cursor('list_facts').optional(),
    includeInvalidated: z
      .boolean()
      .optional()
      .describe('Also superseded and deleted facts (every state).'),
    asOf: asOf.optional(),
    validAt: validAt.optional(),
    knownAt: knownAt.optional(),
    episodeId: uuidSchema.optional().describe('Only the facts this episode produced.'),
  }),
  output: z.object({
    facts: z.array(factOutput),
    total: z.number(),
    nextCursor: z.string().nullable(),
  }),
  annotations: READS,
  operation: McpListFactsDocument,
  async run(ctx, { limit, cursor: after, ...args }) {
    const data = await runOperation(ctx, McpListFactsDocument, {
      ...args,
      first: limit,
      ...(after === undefined ? {} : { after }),
    });
    const page = data.dataset?.facts;
    const facts = page?.edges.map((e) => e.node) ?? [];
    const nextCursor = page?.pageInfo.hasNextPage ? page.pageInfo.endCursor : null;
    const total = page?.totalCount ?? 0;
    return {
      structured: { facts, total, nextCursor },
      text: `${total} fact${total === 1 ? '' : 's'}${nextCursor ? ` (more: cursor ${nextCursor})` : ''}\n${listed(facts.map(factLine), 'None.')}`,
    };
  },
});

const entityFacts = tool({
  name: 'entity_facts',
  title: "An entity's facts",
  description:
    'Every fact whose subject or object is the named entity (a person, place, product...), the most recent validAt first. By default the facts true and believed now; validAt: what was true at that time (as known now); knownAt: what the memory believed at that time. An entity the dataset does not know is NOT_FOUND.',
  input: z.object({
    dataset,
    entity: nameSchema.describe('The entity\'s name, e.g. "honda civic" (case does not matter).'),
    limit: z
      .number()
      .int('must be a whole number')
      .min(1, `must be between 1 and ${MAX_NESTED_LIST_SIZE}`)
      .max(MAX_NESTED_LIST_SIZE, `must be between 1 and ${MAX_NESTED_LIST_SIZE}`)
      .default(100)
      .describe(`How many facts at most (1-${MAX_NESTED_LIST_SIZE}).`),
    validAt: validAt.optional(),
    knownAt: knownAt.optional(),
  }),
  output: z.object({
    entity: z.object({ name: z.string(), type: z.enum(ENTITY_TYPES) }),
    facts: z.array(factOutput),
  }),
  annotations: READS,
  operation: McpEntityFactsDocument,
  async run(ctx, { entity: name, limit, ...args }) {
    const data = await runOperation(ctx, McpEntityFactsDocument, { ...args, name, first: limit });
    const found = data.dataset?.entity;
    if (!found) throw notFound(`No entity named "${name}" in dataset "${args.dataset}"`);
    const { facts, ...entity } = found;
    return {
      structured: { entity, facts },
      text: `${entity.name} (${entity.type}):\n${listed(facts.map(factLine), 'No facts.')}`,
    };
  },
});

const factHistory = tool({
  name: 'fact_history',
  title: "A fact's history",
  description:
    'One fact, whatever its state, with what superseded it and the history of its statement: every fact with the same subject and predicate, the most recent validAt first (how the value changed over time, and when the memory learned each change). A correctionOf / correctedBy pair marks the version of a fact the memory recorded once it learned when the value changed.',
  input: z.object({
    dataset,
    factId,
    limit: pageSize('facts of the history'),
  }),
  output: z.object({
    fact: factOutput.extend({
      supersededBy: factOutput.nullable(),
      correctionOf: z.object({ factId: z.string() }).nullable(),
      correctedBy: z.object({ factId: z.string() }).nullable(),
    }),
    history: z.array(
      factOutput.extend({
        supersededBy: z.object({ factId: z.string() }).nullable(),
        correctionOf: z.object({ factId: z.string() }).nullable(),
      }),
    ),
  }),
  annotations: READS,
  operation: McpFactHistoryDocument,
  async run(ctx, { limit, ...args }) {
    const data = await runOperation(ctx, McpFactHistoryDocument, { ...args, first: limit });
    const found = data.dataset?.fact;
    if (!found) throw notFound(`No fact ${args.factId} in dataset "${args.dataset}"`);
    const { history, ...fact } = found;
    const lines = [
      factLine(fact),
      ...(fact.supersededBy ? [`Superseded by:\n${factLine(fact.supersededBy)}`] : []),
      `History of "${fact.subject} ${fact.predicate}":`,
      listed(history.map(factLine), 'None.'),
    ];
    return { structured: { fact, history }, text: lines.join('\n') };
  },
});

const whatChanged = tool({
  name: 'what_changed',
  title: 'What changed in a dataset',
  description:
    "The dataset's change feed, oldest first: every change after a cursor (facts recorded, superseded, corrected, deleted, restored; episodes recorded and erased; memories created and changed). Without a cursor it starts at the beginning. Keep the cursor it answers and pass it next time: nothing is missed and nothing is told twice.",
  input: z.object({
    dataset,
    after: cursor('what_changed').optional(),
    limit: pageSize('changes'),
  }),
  output: z.object({
    changes: z.array(
      z.object({
        id: z.string(),
        kind: z.string(),
        at: z.string(),
        cursor: z.string(),
        fact: factOutput.nullable(),
        episode: z
          .object({ episodeId: z.string(), source: z.string(), occurredAt: z.string() })
          .nullable(),
        memory: z
          .object({ memoryId: z.string(), text: z.string(), version: z.number() })
          .nullable(),
        erased: z
          .object({
            episodes: z.number(),
            facts: z.number(),
            entities: z.number(),
            memories: z.number(),
            restoredFacts: z.number(),
          })
          .nullable(),
      }),
    ),
    cursor: z.string().nullable(),
    hasMore: z.boolean(),
  }),
  annotations: READS,
  operation: McpWhatChangedDocument,
  async run(ctx, { limit, ...args }) {
    const data = await runOperation(ctx, McpWhatChangedDocument, { ...args, first: limit });
    const page = data.dataset?.changes;
    const changes = page?.edges.map((e) => e.node) ?? [];
    // Where to resume: after the last change told, or where this call began.
    const resume = page?.pageInfo.endCursor ?? args.after ?? null;
    const hasMore = page?.pageInfo.hasNextPage ?? false;
    const lines = changes.map((c) => {
      const what = c.fact
        ? factLine(c.fact).slice(2)
        : c.memory
          ? `memory ${c.memory.memoryId} (version ${c.memory.version}): ${c.memory.text}`
          : c.episode
            ? `episode ${c.episode.episodeId} (${c.episode.source}, ${c.episode.occurredAt})`
            : JSON.stringify(c.erased);
      return `- ${c.at} ${c.kind}: ${what}`;
    });
    return {
      structured: { changes, cursor: resume, hasMore },
      text: `${listed(lines, 'No changes.')}\nResume with after: ${resume ?? '(none yet)'}${hasMore ? ' (more now)' : ''}`,
    };
  },
});

const listDatasets = tool({
  name: 'list_datasets',
  title: 'List datasets',
  description:
    "The datasets of this key's workspace, by name, a page at a time (pass nextCursor back as cursor for the next). Each dataset is one memory: a user, an agent, a conversation.",
  input: z.object({
    limit: pageSize('datasets'),
    cursor: cursor('list_datasets').optional(),
  }),
  output: z.object({
    datasets: z.array(z.object({ name: z.string(), createdAt: z.string() })),
    total: z.number(),
    nextCursor: z.string().nullable(),
  }),
  annotations: READS,
  operation: McpListDatasetsDocument,
  async run(ctx, { limit, cursor: after }) {
    const data = await runOperation(ctx, McpListDatasetsDocument, {
      first: limit,
      ...(after === undefined ? {} : { after }),
    });
    const datasets = data.datasets.edges.map((e) => e.node);
    const nextCursor = data.datasets.pageInfo.hasNextPage ? data.datasets.pageInfo.endCursor : null;
    return {
      structured: { datasets, total: data.datasets.totalCount, nextCursor },
      text: listed(
        datasets.map((d) => `- ${d.name} (since ${d.createdAt})`),
        'No datasets yet.',
      ),
    };
  },
});

const entityInput = z.object({ name: z.string(), type: z.enum(ENTITY_TYPES) });
const factInput = z.object({
  subject: z.string().describe('Who or what the fact is about, e.g. "user".'),
  predicate: z.string().describe('The relation, e.g. "drives", "is interested in".'),
  object: z.string().describe('The value, e.g. "a honda civic".'),
  objectIsEntity: z.boolean().optional().describe('Whether object names one of the entities.'),
  confidence: z.number().describe('How sure the extraction is, 0 to 1.'),
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
  supersedes: z.array(z.string()).optional().describe('factIds this fact says are wrong.'),
});

const recordEpisode = tool({
  name: 'record_episode',
  title: 'Record an episode and the facts learned from it',
  description:
    'Records an episode (a conversation turn or other source text), the entities it mentions and the facts extracted from it, superseding the facts they replace. Safe to retry: the same episode (the same episode.episodeId, or without one the same source, occurredAt and content) is recorded once; outcome says RECORDED (this call), ALREADY_RECORDED (an earlier call did; nothing changed) or COMPLETED (this call finished an interrupted one). After WRITE_OUTCOME_UNKNOWN, call it again with the same input.',
  input: z.object({
    dataset,
    input: z.object({
      episode: z.object({
        episodeId: z
          .string()
          .optional()
          .describe(
            'A UUID naming the episode; give one so a retry is recognised whatever else changes.',
          ),
        occurredAt: instant('When the episode happened.'),
        source: z.string().describe('Where it came from, e.g. "chat".'),
        content: z.string().describe('The text.'),
      }),
      entities: z.array(entityInput).optional(),
      facts: z.array(factInput).optional(),
    }),
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
  async run(ctx, args) {
    const readBack = mayReadBack(ctx, McpRecordEpisodeDocument);
    const recorded = (await runOperation(ctx, McpRecordEpisodeDocument, { ...args, readBack }))
      .recordEpisode;
    const { outcome, episode, supersededIds, superseded } = recorded;
    const factIds = recorded.facts.map((f) => f.factId);
    const facts = readBack ? (recorded.facts as McpFactFragment[]) : null;
    return {
      structured: {
        outcome,
        episodeId: episode.episodeId,
        factIds,
        supersededIds,
        ...(facts && superseded ? { facts, superseded } : {}),
      },
      text: [
        `${outcome}: episode ${episode.episodeId}, ${factIds.length} fact${factIds.length === 1 ? '' : 's'}`,
        ...(facts ? facts.map(factLine) : factIds.map((id) => `- fact ${id}`)),
        ...(superseded?.length
          ? ['Superseded:', ...superseded.map(factLine)]
          : supersededIds.length
            ? [`Superseded: ${supersededIds.join(', ')}`]
            : []),
      ].join('\n'),
    };
  },
});

const deleteFact = tool({
  name: 'delete_fact',
  title: 'Delete a fact that is wrong',
  description:
    'Says a fact was wrong: it stops being believed from now on (its history stays readable with knownAt). Deletes once: a fact already deleted or superseded, or unknown, is NOT_FOUND. To record that a value changed, record an episode with a replacing fact instead.',
  input: z.object({ dataset, factId }),
  output: z.object({ factId: z.string(), deleted: z.boolean() }),
  annotations: { ...WRITES, destructiveHint: true },
  operation: McpDeleteFactDocument,
  async run(ctx, args) {
    const data = await runOperation(ctx, McpDeleteFactDocument, args);
    return { structured: data.deleteFact, text: `Deleted fact ${data.deleteFact.factId}.` };
  },
});

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
    text: `${done}:\n${full ? memoryLine(full) : `- memory ${memory.memoryId}, version ${memory.version}`}`,
  };
}

/** What create_memory fills in when the agent does not say (SupaCloud's fields are required). */
const MEMORY_DEFAULTS = { memoryKind: 'note', scope: 'user', sourceType: 'agent' } as const;

const createMemory = tool({
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
  async run(ctx, args) {
    const readBack = mayReadBack(ctx, McpCreateMemoryDocument);
    const data = await runOperation(ctx, McpCreateMemoryDocument, { ...args, readBack });
    return writtenMemory('Created', data.createMemory, readBack);
  },
});

const updateMemory = tool({
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
  async run(ctx, args) {
    const readBack = mayReadBack(ctx, McpUpdateMemoryDocument);
    const data = await runOperation(ctx, McpUpdateMemoryDocument, { ...args, readBack });
    return writtenMemory('Updated', data.updateMemory, readBack);
  },
});

/** Every tool, in the order `tools/list` gives them. */
export const MCP_TOOLS: readonly McpTool[] = [
  recall,
  listFacts,
  entityFacts,
  factHistory,
  whatChanged,
  listDatasets,
  recordEpisode,
  deleteFact,
  createMemory,
  updateMemory,
];
