import { EnvelopArmor } from '@escape.tech/graphql-armor';
import { createComplexityRule } from '@pothos/plugin-complexity';
import { type DocumentNode, type GraphQLError, type GraphQLSchema, validate } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { LRUCache } from 'lru-cache';
import type { RequestContext } from '../context.js';
import { GatewayError } from '../errors.js';
import type { Metrics } from './observability.js';

/**
 * The limits on an operation's shape, all checked before any resolver runs.
 *
 * - `maxCost`: the cost model declared on the schema (src/schema/cost.ts), computed with
 *   the request's variables and the arguments' defaults. 20,000 lets through what front
 *   ends ask for every day and refuses lists nested in lists of lists: docs/GRAPHQL.md,
 *   "Query limits", gives the figures, which test/graphql/queryCost.test.ts measures on
 *   the front-end corpus (test/graphql/frontEndCorpus.graphql).
 * - `maxDepth`: nesting, fragments included.
 * - `maxAliases`, `maxDirectives`, `maxTokens` (graphql-armor): cheap checks on the
 *   document itself, at parse and validation time.
 * - `maxNesting`: brackets (`{`, `[`, `(`) open at once in the document's text, checked
 *   before it is parsed: graphql-js parses a value literal recursively, and one nested a
 *   few thousand deep (`@skip(if: [[[...]]])`) overflows the stack before the token limit
 *   is reached. The deepest selection allowed (`maxDepth`) with arguments and a list
 *   value in them needs under 40.
 */
export const QUERY_LIMITS = {
  maxCost: 20_000,
  maxDepth: 12,
  maxAliases: 15,
  maxDirectives: 30,
  maxTokens: 3000,
  maxNesting: 64,
} as const;

type QueryMeasure = 'cost' | 'depth' | 'aliases' | 'directives' | 'tokens' | 'nesting';

/**
 * The most brackets open at once in a GraphQL document's text, strings, block strings and
 * comments left out: one pass, no parse.
 */
export function nestingDepth(source: string): number {
  let depth = 0;
  let deepest = 0;
  const BLOCK = '"""';
  for (let i = 0; i < source.length; i++) {
    const ch = source[i];
    if (ch === '#') {
      while (i < source.length && source[i] !== '\n' && source[i] !== '\r') i++;
    } else if (ch === '"') {
      if (source.startsWith(BLOCK, i)) {
        // A block string ends at the next """ not escaped as \""".
        i += 3;
        while (i < source.length && !source.startsWith(BLOCK, i)) {
          i += source.startsWith(`\\${BLOCK}`, i) ? 4 : 1;
        }
        i += 2;
      } else {
        i++;
        while (i < source.length && source[i] !== '"' && source[i] !== '\n') {
          i += source[i] === '\\' ? 2 : 1;
        }
      }
    } else if (ch === '{' || ch === '[' || ch === '(') {
      depth++;
      if (depth > deepest) deepest = depth;
    } else if (ch === '}' || ch === ']' || ch === ')') {
      depth--;
    }
  }
  return deepest;
}

/** Refuses a document nested past `maxNesting` before graphql-js parses it (and caches it). */
const nestingLimit: Plugin<RequestContext> = {
  onParse({ params }) {
    const source = typeof params.source === 'string' ? params.source : params.source.body;
    const nesting = nestingDepth(source);
    if (nesting > QUERY_LIMITS.maxNesting) {
      throw queryTooComplex('nesting', QUERY_LIMITS.maxNesting, nesting);
    }
  },
};

/**
 * A refusal: code QUERY_TOO_COMPLEX, what was measured, its value (when known) and the
 * limit. A request error in GraphQL over HTTP's terms: 400 with
 * application/graphql-response+json, 200 with application/json (`spec: true` lets Yoga
 * choose).
 */
function queryTooComplex(measure: QueryMeasure, limit: number, value?: number) {
  const found = value === undefined ? '' : ` (${value})`;
  return new GatewayError(
    'QUERY_TOO_COMPLEX',
    `The operation's ${measure}${found} is over the limit of ${limit}; ask for fewer or smaller lists (see docs/GRAPHQL.md, "Query limits")`,
    { measure, ...(value === undefined ? {} : { [measure]: value }), limit },
    'spec',
  );
}

/** graphql-armor's own errors say "Syntax Error: ... found N."; the number is all we keep. */
const foundIn = (error: GraphQLError) => {
  const match = /found (\d+)/.exec(error.message);
  return match ? Number(match[1]) : undefined;
};

const rejectAs = (measure: QueryMeasure, limit: number) => (_ctx: unknown, error: GraphQLError) => {
  throw queryTooComplex(measure, limit, foundIn(error));
};

/**
 * An operation's cost and depth (src/schema/cost.ts), with the request's variables and
 * the arguments' defaults. Variables that do not coerce measure as zero: execution then
 * refuses them with its own message.
 */
export function measureOperation(
  schema: GraphQLSchema,
  document: DocumentNode,
  request: { variables?: Record<string, unknown> | null; operationName?: string | null },
  context: object,
): { cost: number; depth: number } {
  let measured = { cost: 0, depth: 0 };
  // A validation rule run on its own here, not beside graphql's rules: Yoga caches
  // validation per document, and a cost depends on the variables of each request.
  validate(schema, document, [
    createComplexityRule({
      context,
      variableValues: request.variables ?? {},
      operationName: request.operationName ?? null,
      // Called once per operation of the document; the largest counts.
      validate: ({ complexity, depth }) => {
        measured = {
          cost: Math.max(measured.cost, Math.ceil(complexity)),
          depth: Math.max(measured.depth, depth),
        };
      },
    }),
  ]);
  return measured;
}

/**
 * measureOperation, remembered per parsed document (Yoga's parse cache hands back the same
 * document object for the same text), operation name and variables: the cost functions
 * read nothing else (src/schema/cost.ts), so a front end's repeated operation is measured
 * once instead of by a validation pass on every request. One LRU bounded in entries and in
 * the bytes of its keys; variables too large to be worth a slot are measured every time.
 */
function cachedMeasure() {
  const documentIds = new WeakMap<DocumentNode, number>();
  let nextDocumentId = 0;
  const MAX_KEY_LENGTH = 2048;
  const measures = new LRUCache<string, { cost: number; depth: number }>({
    max: 2000,
    maxSize: 2000 * 256,
    sizeCalculation: (_value, key) => key.length,
  });
  return (
    schema: GraphQLSchema,
    document: DocumentNode,
    request: { variables?: Record<string, unknown> | null; operationName?: string | null },
  ) => {
    let documentId = documentIds.get(document);
    if (documentId === undefined) {
      documentId = nextDocumentId++;
      documentIds.set(document, documentId);
    }
    const key = JSON.stringify([
      documentId,
      request.operationName ?? null,
      request.variables ?? {},
    ]);
    const known = measures.get(key);
    if (known) return known;
    const measured = measureOperation(schema, document, request, {});
    if (key.length <= MAX_KEY_LENGTH) measures.set(key, measured);
    return measured;
  };
}

/** Cost and depth, measured on the operation about to run, before it runs. */
function costLimit(metrics?: Metrics): Plugin<RequestContext> {
  const measure = cachedMeasure();
  const check = ({
    args,
  }: {
    args: {
      schema: GraphQLSchema;
      document: DocumentNode;
      variableValues?: Record<string, unknown> | null;
      operationName?: string | null;
    };
  }) => {
    {
      const { cost, depth } = measure(args.schema, args.document, {
        variables: args.variableValues,
        operationName: args.operationName,
      });
      const refusal =
        depth > QUERY_LIMITS.maxDepth
          ? queryTooComplex('depth', QUERY_LIMITS.maxDepth, depth)
          : cost > QUERY_LIMITS.maxCost
            ? queryTooComplex('cost', QUERY_LIMITS.maxCost, cost)
            : null;
      if (refusal) {
        metrics?.errors.inc({ code: refusal.code });
        throw refusal;
      }
    }
  };
  // A subscription's selection is measured as a query's: each event resolves it once.
  return { onExecute: check, onSubscribe: check };
}

/** Every query limit, as Yoga plugins. */
export function queryLimitPlugins(options: {
  introspection: boolean;
  metrics?: Metrics | undefined;
}): Plugin<RequestContext>[] {
  const armor = new EnvelopArmor({
    maxAliases: {
      n: QUERY_LIMITS.maxAliases,
      onReject: [rejectAs('aliases', QUERY_LIMITS.maxAliases)],
    },
    maxDirectives: {
      n: QUERY_LIMITS.maxDirectives,
      onReject: [rejectAs('directives', QUERY_LIMITS.maxDirectives)],
    },
    maxTokens: {
      n: QUERY_LIMITS.maxTokens,
      onReject: [rejectAs('tokens', QUERY_LIMITS.maxTokens)],
    },
    maxDepth: { enabled: false },
    costLimit: { enabled: false },
    blockFieldSuggestion: { enabled: !options.introspection },
  });
  return [
    nestingLimit,
    ...(armor.protect().plugins as Plugin<RequestContext>[]),
    costLimit(options.metrics),
  ];
}
