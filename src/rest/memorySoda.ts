/*
 * Memory Soda's semantic API, to the letter (its routes, parameters and answers): thin
 * adapters that validate path and query, run a named GraphQL operation in-process with
 * the request's context, and reshape the answer. Errors are `{ "error": message }`.
 * Where the document is silent (docs/COMPATIBILITY.md): an unknown dataset (or another
 * workspace's) reads as empty (`{ "facts": [], "total": 0 }`, `{ "entities": [] }`), as a
 * new user's would.
 */

import { createRoute, z } from '@hono/zod-openapi';
import { UUID_PATTERN } from '../domain/ids.js';
import { ENTITY_TYPES } from '../domain/names.js';
import { recallContext } from '../domain/recall.js';
import { GatewayError } from '../errors.js';
import {
  MemorySodaDeleteFactDocument,
  MemorySodaEntityFactsDocument,
  type MemorySodaFactFragment,
  MemorySodaListEntitiesDocument,
  MemorySodaListFactsDocument,
  MemorySodaRecallDocument,
} from '../generated/operations.js';
import {
  DEFAULT_PAGE_SIZE,
  DEFAULT_RECALL_SIZE,
  MAX_PAGE_SIZE,
  MAX_RECALL_SIZE,
  nameSchema,
  recallFirstSchema,
  recallQuerySchema,
} from '../schema/args.js';
import { WHOLE_LIST_CAP } from '../schema/cost.js';
import { CAPPED_LIST_HEADERS, capHeaders } from './capped.js';
import { edgeResponses } from './edgeResponses.js';
import {
  asOfParam,
  datasetParam,
  entityNameParam,
  firstOccurrence,
  lenientBooleanParam,
  limitParam,
  qParam,
  uuidParam,
} from './params.js';
import { runOperation } from './runOperation.js';
import { jsonBody, surfaceApp } from './surfaceApp.js';

/** How many live facts an entity's facts route answers with at most. */
const ENTITY_FACTS_CAP = 1000;

/** Memory Soda's API root: the semantic routes and recall lie below it. */
export const MEMORY_SODA_ROOT = '/v1/memory';
const MEMORY_SODA_BASE = `${MEMORY_SODA_ROOT}/semantic`;
/** The OpenAPI tag that groups this surface's routes in /openapi.json and /docs. */
export const MEMORY_SODA_TAG = 'Memory Soda semantic API';

const FactSchema = z
  .object({
    factId: z.string().openapi({ example: '3a91c6e8-0f2d-4b57-a8e3-5d1c9b7f2a40' }),
    subject: z.string().openapi({ example: 'user' }),
    predicate: z.string().openapi({ example: 'is interested in' }),
    object: z.string().openapi({ example: 'toyota corolla hybrid' }),
    objectIsEntity: z.boolean(),
    confidence: z.number().openapi({ example: 0.9 }),
    sourceQuote: z.string().nullable(),
    validAt: z.string().openapi({ format: 'date-time', example: '2026-08-16T09:14:02.000Z' }),
    validUntil: z.string().nullable().openapi({ format: 'date-time' }),
    invalidAt: z.string().nullable().openapi({ format: 'date-time' }),
    episodeId: z.string().nullable(),
  })
  .openapi('MemorySodaFact');

const ErrorSchema = z.object({ error: z.string() }).openapi('MemorySodaError');

const errorResponses = {
  400: {
    description: 'Bad input: the message names the parameter and the reason',
    content: { 'application/json': { schema: ErrorSchema } },
  },
  401: {
    description: 'Missing or bad API key',
    content: { 'application/json': { schema: ErrorSchema } },
  },
  403: {
    description: 'The key lacks the needed scope',
    content: { 'application/json': { schema: ErrorSchema } },
  },
  ...edgeResponses({ 'application/json': { schema: ErrorSchema } }),
} as const;

const datasetPath = z.object({ dataset: datasetParam });
const security = [{ Bearer: [] }];

const listFacts = createRoute({
  tags: [MEMORY_SODA_TAG],
  method: 'get',
  path: `${MEMORY_SODA_BASE}/datasets/{dataset}/facts`,
  summary: 'List facts (unranked, chronological)',
  description:
    'Ordered by validAt descending (ties: factId descending). `total` counts every match, ignoring `limit`. Default: live facts. `includeInvalidated`: full history. `asOf`: what was believed on both time axes at that instant (overrides includeInvalidated; a date means 00:00:00Z). `episodeId`: everything that episode produced, whatever its state, unless `asOf` is given.',
  security,
  request: {
    params: datasetPath,
    query: z.object({
      q: firstOccurrence(qParam.optional()).openapi({
        description:
          'Full-text filter over subject + predicate + object: every term must occur (words stemmed, English stop words left out, as recall reads them). Max 1000 chars.',
      }),
      limit: firstOccurrence(limitParam.optional()).openapi({
        type: 'integer',
        minimum: 1,
        maximum: MAX_PAGE_SIZE,
        default: DEFAULT_PAGE_SIZE,
      }),
      includeInvalidated: firstOccurrence(lenientBooleanParam.optional()).openapi({
        type: 'string',
        enum: ['true', 'false', '1', '0'],
        default: 'false',
        description: 'Any case.',
      }),
      asOf: firstOccurrence(asOfParam.optional()).openapi({
        type: 'string',
        format: 'date',
        description: 'Point-in-time. Overrides includeInvalidated.',
      }),
      episodeId: firstOccurrence(uuidParam.optional()).openapi({
        format: 'uuid',
        description: 'Only facts extracted from this episode',
      }),
    }),
  },
  responses: {
    200: {
      description: 'The matching facts and their total',
      content: {
        'application/json': {
          schema: z.object({ facts: z.array(FactSchema), total: z.number().int() }),
        },
      },
    },
    ...errorResponses,
  },
});

const deleteFact = createRoute({
  tags: [MEMORY_SODA_TAG],
  method: 'delete',
  path: `${MEMORY_SODA_BASE}/datasets/{dataset}/facts/{factId}`,
  summary: 'Soft delete a fact (stamps invalidAt)',
  description:
    'The fact leaves retrieval immediately but stays queryable via includeInvalidated=true and asOf. Succeeds once. Needs the write scope.',
  security,
  request: {
    // Any segment: an id that is not a UUID names no fact, so it is a 404 like any unknown id.
    params: z.object({
      dataset: datasetParam,
      factId: z
        .string()
        .openapi({ format: 'uuid', example: '3a91c6e8-0f2d-4b57-a8e3-5d1c9b7f2a40' }),
    }),
  },
  responses: {
    200: {
      description: 'Deleted',
      content: {
        'application/json': { schema: z.object({ factId: z.string(), deleted: z.literal(true) }) },
      },
    },
    404: {
      description:
        'Unknown id, wrong dataset, or already invalidated: { "error": "Fact not found" }',
      content: { 'application/json': { schema: ErrorSchema } },
    },
    ...errorResponses,
  },
});

const listEntities = createRoute({
  tags: [MEMORY_SODA_TAG],
  method: 'get',
  path: `${MEMORY_SODA_BASE}/datasets/{dataset}/entities`,
  summary: 'List every entity (unpaginated)',
  description: 'Ordered by updatedAt descending, most recently mentioned first.',
  security,
  request: { params: datasetPath },
  responses: {
    200: {
      description: `Every entity of the dataset, up to ${WHOLE_LIST_CAP.toLocaleString('en-US')}`,
      headers: CAPPED_LIST_HEADERS,
      content: {
        'application/json': {
          schema: z.object({
            entities: z.array(
              z.object({
                entityId: z.string(),
                name: z.string(),
                type: z.enum(ENTITY_TYPES),
              }),
            ),
          }),
        },
      },
    },
    ...errorResponses,
  },
});

const entityFacts = createRoute({
  tags: [MEMORY_SODA_TAG],
  method: 'get',
  path: `${MEMORY_SODA_BASE}/datasets/{dataset}/entities/{name}/facts`,
  summary: 'Every live fact touching a named entity',
  description:
    'As subject or object. The name is lower-cased server-side, otherwise exact (a lookup, not a search). An unknown entity returns { "facts": [] }.',
  security,
  request: {
    params: z.object({
      dataset: datasetParam,
      name: entityNameParam,
    }),
  },
  responses: {
    200: {
      description: `The live facts, up to ${ENTITY_FACTS_CAP.toLocaleString('en-US')}`,
      headers: CAPPED_LIST_HEADERS,
      content: { 'application/json': { schema: z.object({ facts: z.array(FactSchema) }) } },
    },
    ...errorResponses,
  },
});

/** Why a recalled fact ranked where it did (`explain: true`). */
const RecallExplanationSchema = z
  .object({
    terms: z.array(
      z.object({
        term: z.string(),
        weight: z.number(),
        common: z.boolean(),
        correctedFrom: z.string().nullable().openapi({
          description:
            "The question's word this term was matched as (a typo no fact holds as written); null when asked as written.",
        }),
        fields: z.array(z.object({ field: z.string(), termFrequency: z.number() })).openapi({
          description: 'Each field that holds the term: the statement, the source quote (quote).',
        }),
      }),
    ),
    bm25: z.number(),
    factors: z.array(z.object({ name: z.string(), value: z.number() })),
    score: z.number(),
    via: z.string().nullable().openapi({
      description:
        "A fact brought in one hop from an entity the question names: the factId of the fact that links it (its score is half that fact's).",
    }),
    time: z
      .object({
        phrase: z.string(),
        validFrom: z.string().nullable().openapi({ format: 'date-time' }),
        validUntil: z.string().nullable().openapi({ format: 'date-time' }),
        applied: z.boolean(),
      })
      .nullable()
      .openapi({
        description:
          'The time the question named ("in June 2026", "last week"), read as a window on valid time: the facts true at any point of it. Null: none; `applied: false`: validAt or asOf won over it.',
      }),
  })
  .openapi('RecallExplanation');

const recall = createRoute({
  tags: [MEMORY_SODA_TAG],
  method: 'post',
  path: `${MEMORY_SODA_ROOT}/recall`,
  middleware: [jsonBody('memorySoda')] as const,
  summary: 'Ranked recall: the live facts that best match a query, and prompt-ready context',
  description:
    'Facts recorded by `knownAt`, not invalidated by then and valid at `validAt` (each default now; `asOf` sets both) that share a term with `query`, best first (BM25 over stemmed words, English stop words dropped; confidence and recency break near-ties). `relevanceScore` is in (0, 1]: the fact\'s score over the best one\'s. `context` has one line per returned fact, in the same order. An unknown dataset answers `{ "facts": [], "context": "" }`. Needs the read scope.',
  security,
  request: {
    body: {
      required: true,
      content: {
        'application/json': {
          schema: z.object({
            dataset: nameSchema.meta({
              description: 'The dataset name.',
              example: 'user_42',
            }),
            // The shared rules document themselves through zod's own .meta() (params.ts).
            query: recallQuerySchema.meta({ example: 'what does the user drive?' }),
            limit: recallFirstSchema
              .optional()
              .meta({ default: DEFAULT_RECALL_SIZE, maximum: MAX_RECALL_SIZE }),
            asOf: asOfParam.optional().openapi({
              type: 'string',
              format: 'date',
              description:
                "Point-in-time on both axes, as the facts route's asOf (overrides validAt and knownAt).",
            }),
            validAt: asOfParam.optional().openapi({
              type: 'string',
              format: 'date',
              description:
                'T, the instant on valid time (default now): facts true in the world then.',
            }),
            knownAt: asOfParam.optional().openapi({
              type: 'string',
              format: 'date',
              description:
                'K, the instant on transaction time (default now): recall replayed as it would have answered when only what was recorded by K was known.',
            }),
            explain: z.boolean().optional().meta({
              default: false,
              description:
                "Adds each fact's `explanation`: the query terms it holds with their BM25 weights (the largest first, at most 100), the factors applied, and the score.",
            }),
          }),
        },
      },
    },
  },
  responses: {
    200: {
      description: 'The recalled facts, best first, and their context',
      content: {
        'application/json': {
          schema: z.object({
            facts: z.array(
              FactSchema.extend({
                relevanceScore: z.number(),
                explanation: RecallExplanationSchema.optional().meta({
                  description: 'With `explain: true` only.',
                }),
              }),
            ),
            context: z.string(),
          }),
        },
      },
    },
    ...errorResponses,
  },
});

/** The documented fact object: exactly these fields, in this order. */
function toMemorySodaFact(f: MemorySodaFactFragment) {
  return {
    factId: f.factId,
    subject: f.subject,
    predicate: f.predicate,
    object: f.object,
    objectIsEntity: f.objectIsEntity,
    confidence: f.confidence,
    sourceQuote: f.sourceQuote,
    validAt: f.validAt,
    validUntil: f.validUntil,
    invalidAt: f.invalidAt,
    episodeId: f.episodeId,
  };
}

export function memorySodaRoutes() {
  const app = surfaceApp('memorySoda');

  app.openapi(listFacts, async (c) => {
    const { dataset } = c.req.valid('param');
    const query = c.req.valid('query');
    const data = await runOperation(c.get('requestContext'), MemorySodaListFactsDocument, {
      dataset,
      q: query.q ?? null,
      first: query.limit ?? DEFAULT_PAGE_SIZE,
      includeInvalidated: query.includeInvalidated ?? false,
      asOf: query.asOf?.toISOString() ?? null,
      episodeId: query.episodeId ?? null,
    });
    const facts = data.dataset?.facts;
    return c.json(
      {
        facts: (facts?.edges ?? []).map((e) => toMemorySodaFact(e.node)),
        total: facts?.totalCount ?? 0,
      },
      200,
    );
  });

  app.openapi(recall, async (c) => {
    const body = c.req.valid('json');
    const data = await runOperation(c.get('requestContext'), MemorySodaRecallDocument, {
      dataset: body.dataset,
      query: body.query,
      first: body.limit ?? DEFAULT_RECALL_SIZE,
      asOf: body.asOf?.toISOString() ?? null,
      validAt: body.validAt?.toISOString() ?? null,
      knownAt: body.knownAt?.toISOString() ?? null,
      explain: body.explain ?? false,
    });
    const recalled = data.dataset?.recall.facts ?? [];
    return c.json(
      {
        facts: recalled.map((r) => ({
          ...toMemorySodaFact(r.fact),
          relevanceScore: r.relevanceScore,
          ...(r.explanation ? { explanation: r.explanation } : {}),
        })),
        context: recallContext(
          recalled.map(({ fact }) => ({
            ...fact,
            validAt: new Date(fact.validAt),
            validUntil: fact.validUntil ? new Date(fact.validUntil) : null,
          })),
        ),
      },
      200,
    );
  });

  app.openapi(deleteFact, async (c) => {
    const { dataset, factId } = c.req.valid('param');
    if (!UUID_PATTERN.test(factId)) throw new GatewayError('NOT_FOUND', 'Fact not found');
    const data = await runOperation(c.get('requestContext'), MemorySodaDeleteFactDocument, {
      dataset,
      factId,
    });
    return c.json({ factId: data.deleteFact.factId, deleted: true as const }, 200);
  });

  app.openapi(listEntities, async (c) => {
    const { dataset } = c.req.valid('param');
    const data = await runOperation(c.get('requestContext'), MemorySodaListEntitiesDocument, {
      dataset,
    });
    const entities = data.dataset?.allEntities ?? [];
    return c.json(
      { entities: entities.map((e) => ({ entityId: e.entityId, name: e.name, type: e.type })) },
      200,
      capHeaders(entities.length, WHOLE_LIST_CAP),
    );
  });

  app.openapi(entityFacts, async (c) => {
    const { dataset, name } = c.req.valid('param');
    const data = await runOperation(c.get('requestContext'), MemorySodaEntityFactsDocument, {
      dataset,
      name,
      first: ENTITY_FACTS_CAP,
    });
    const facts = data.dataset?.entity?.facts ?? [];
    return c.json(
      { facts: facts.map(toMemorySodaFact) },
      200,
      capHeaders(facts.length, ENTITY_FACTS_CAP),
    );
  });

  return app;
}
