import { useGraphQlJit } from '@envelop/graphql-jit';
import type { Tracer } from '@opentelemetry/api';
import {
  type DocumentNode,
  type GraphQLError,
  getOperationAST,
  NoSchemaIntrospectionCustomRule,
} from 'graphql';
import { getVariableValues } from 'graphql/execution/values.js';
import { createGraphQLError, createYoga, type GraphQLParams, type Plugin } from 'graphql-yoga';
import type { TrustedDocumentMode } from '../config.js';
import { type RequestContext, unauthenticated } from '../context.js';
import { badInput, GatewayError, maskError } from '../errors.js';
import { scopesOf } from '../schema/authScopes.js';
import { schema } from '../schema/index.js';
import { authorizeOperation } from '../schema/operationScopes.js';
import { describeIssues, illFormedText } from '../validation.js';
import { isIntrospectionOnly } from './authenticateFirst.js';
import { type Metrics, type OperationLabels, operationLabels } from './observability.js';
import { queryLimitPlugins } from './queryLimits.js';
import { sharedEventExecution } from './sharedEvents.js';
import { graphqlTracing } from './tracing.js';
import { trustedDocumentPlugins } from './trustedDocuments.js';

export interface YogaOptions {
  /**
   * The development key (embedded mode only): the GraphiQL and explorer pages carry it
   * under src/http/hosts.ts's rule, and never otherwise.
   */
  developmentKey?: string;
  /** GraphiQL on GET /graphql from a browser (default on). */
  graphiql?: boolean;
  /** Schema introspection (default on). */
  introspection?: boolean;
  metrics?: Metrics;
  /** Which operations run: registered ones by hash, text, or both (default `also`). */
  trustedDocuments?: TrustedDocumentMode;
  /** Spans for GraphQL's phases (absent: none). */
  tracer?: Tracer;
}

/**
 * Every operation needs a valid key, except introspection alone, so GraphiQL can load
 * the schema before a key is typed in. The edge decides it before Yoga reads the request
 * (src/http/authenticateFirst.ts); checked again here before execution, so no resolver
 * runs whatever reaches Yoga.
 */
function keyRequired({
  args,
}: {
  args: { document: DocumentNode; operationName?: string | null; contextValue: RequestContext };
}): void {
  const ctx = args.contextValue;
  if (!ctx.auth && !isIntrospectionOnly(getOperationAST(args.document, args.operationName))) {
    throw unauthenticated(ctx.authProblem, 'request');
  }
}

const requireKey: Plugin<RequestContext> = { onExecute: keyRequired, onSubscribe: keyRequired };

/**
 * The key's scopes against the scopes the whole operation needs, decided before any
 * resolver runs (src/schema/operationScopes.ts): an operation the key may not complete is
 * refused whole, FORBIDDEN with HTTP 403, and nothing of it runs. Subscriptions too.
 */
function authorizeWholeOperation({
  args,
}: {
  args: {
    schema: typeof schema;
    document: DocumentNode;
    operationName?: string | null;
    variableValues?: Record<string, unknown> | null;
    contextValue: RequestContext;
  };
}): void {
  const refusal = authorizeOperation(
    args.schema,
    args.document,
    { operationName: args.operationName, variables: args.variableValues },
    scopesOf(args.contextValue),
  );
  if (refusal) throw refusal;
}

const authorizeBeforeExecution: Plugin<RequestContext> = {
  onExecute: authorizeWholeOperation,
  onSubscribe: authorizeWholeOperation,
};

/**
 * Names the operation for the access log and the metrics (a bounded label: see
 * operationLabels), counts every answer's outcome and error codes, refusals before
 * execution included, and keeps the first unexpected error for the request's error log
 * line (`observed.failure`), since Yoga masks it before the edge sees the answer.
 */
function observeOperations(labels: OperationLabels, metrics?: Metrics): Plugin<RequestContext> {
  const name = ({
    args,
  }: {
    args: { document: DocumentNode; operationName?: string | null; contextValue: RequestContext };
  }) => {
    const ctx = args.contextValue;
    const operation = getOperationAST(args.document, args.operationName);
    ctx.observed.operation = operation
      ? labels.of(operation.name?.value ?? null, ctx.auth !== null)
      : null;
  };
  return {
    onExecute(payload) {
      name(payload);
      const ctx = payload.args.contextValue;
      // Before Yoga masks them: an error no GatewayError describes.
      return {
        onExecuteDone({ result }) {
          if (Array.isArray(result) || Symbol.asyncIterator in result) return;
          const unexpected = result.errors?.find(
            (error) => error.originalError && !(error.originalError instanceof GatewayError),
          );
          if (unexpected) ctx.observed.failure ??= unexpected.originalError;
        },
      };
    },
    onSubscribe: name,
    onResultProcess({ result, serverContext }) {
      if (!metrics || Array.isArray(result) || Symbol.asyncIterator in result) return;
      const ctx = (serverContext as Partial<RequestContext>).observed;
      metrics.operations.inc({
        operation: ctx?.operation ?? 'unknown',
        outcome: result.errors?.length ? 'error' : 'ok',
      });
      for (const error of result.errors ?? []) {
        metrics.errors.inc({ code: String(error.extensions?.code ?? 'UNKNOWN') });
      }
    },
  };
}

/**
 * Variables checked with graphql-js before the compiled execution runs: its messages say
 * where a value is wrong (`at "input.entities[0].type"`) where graphql-jit's only name
 * the variable. Execution gets the variables as sent; graphql-jit coerces them again.
 */
const variablesCheckedFirst: Plugin<RequestContext> = {
  onExecute({ args, setResultAndStopExecution }) {
    const operation = getOperationAST(args.document, args.operationName);
    if (!operation?.variableDefinitions?.length) return;
    const coerced = getVariableValues(
      args.schema,
      operation.variableDefinitions,
      args.variableValues ?? {},
    );
    // Masked here: a result set before execution skips the masking Yoga wraps execution in.
    if (coerced.errors) setResultAndStopExecution({ errors: coerced.errors.map(maskError) });
  },
};

/**
 * Text that could not be stored and read back as sent (a lone surrogate, from a JSON
 * `"\ud800"` escape in the variables) is BAD_USER_INPUT naming where it is, before
 * anything runs. Lone surrogates in the document itself are already graphql-js's syntax
 * errors.
 */
function refuseIllFormedText({
  args,
  setResultAndStopExecution,
}: {
  args: { variableValues?: Record<string, unknown> | null };
  setResultAndStopExecution: (result: { errors: GraphQLError[] }) => void;
}): void {
  const issue = illFormedText(args.variableValues ?? {});
  if (issue) setResultAndStopExecution({ errors: [maskError(badInput(describeIssues([issue])))] });
}

const wellFormedVariables: Plugin<RequestContext> = {
  onExecute: refuseIllFormedText,
  // A subscription's variables name what it follows: the same rule, before it opens.
  onSubscribe: refuseIllFormedText,
};

/** Rejects introspection at validation when it is turned off (production default). */
const disableIntrospection: Plugin = {
  onValidate({ addValidationRule }) {
    addValidationRule(NoSchemaIntrospectionCustomRule);
  },
};

/**
 * A POST's JSON body as the edge read and checked it (`checkedBody`, src/http/app.ts),
 * parsed once here with the answers Yoga's own JSON parser gives a body that is not JSON
 * or not an object; a request the edge did not read (no key, not JSON) is Yoga's to read.
 */
const bodyReadAtTheEdge: Plugin<RequestContext> = {
  onRequestParse({ serverContext, setRequestParser }) {
    const text = (serverContext as Partial<RequestContext> | undefined)?.checkedBody;
    if (typeof text === 'string') setRequestParser(() => graphqlParamsOf(text));
  },
};

function graphqlParamsOf(text: string): GraphQLParams {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (error) {
    throw createGraphQLError('POST body sent invalid JSON.', {
      extensions: {
        http: { spec: true, status: 400 },
        code: 'BAD_REQUEST',
        originalError: { name: (error as Error).name, message: (error as Error).message },
      },
    });
  }
  if (body === null || typeof body !== 'object') {
    throw createGraphQLError(
      `POST body is expected to be object but received ${body === null ? 'null' : typeof body}`,
      { extensions: { http: { status: 400 }, code: 'BAD_REQUEST' } },
    );
  }
  return body as GraphQLParams;
}

/**
 * The GraphQL endpoint. The per-request context is built at the HTTP edge and handed in
 * as Yoga's server context, so GraphQL and the REST adapters share one object.
 */
export function createGraphqlYoga(options: YogaOptions = {}) {
  const introspection = options.introspection !== false;
  return createYoga<RequestContext>({
    schema,
    graphqlEndpoint: '/graphql',
    landingPage: false,
    // CORS is the edge's one policy for GraphQL and REST (src/http/cors.ts); Yoga's own
    // would reflect any origin with credentials.
    cors: false,
    logging: false,
    maskedErrors: { maskError: (error) => maskError(error) },
    // The edge bounds every body (BODY_LIMIT_BYTES) before Yoga sees it; Yoga's own bound
    // would wrap each POST's body in one more stream and request to count it again.
    maxRequestBodySize: false,
    plugins: [
      // First, so each phase's span holds every other plugin's work in it.
      ...(options.tracer ? [graphqlTracing(options.tracer)] : []),
      // After Yoga's own parsers (every plugin here is), so it is the one chosen when the
      // edge read the body.
      bodyReadAtTheEdge,
      // A registered document's hash becomes its text before anything else reads the request.
      ...trustedDocumentPlugins(options.trustedDocuments ?? 'also'),
      ...(introspection ? [] : [disableIntrospection]),
      observeOperations(operationLabels(), options.metrics),
      // The key first: a keyless request learns nothing, not even what its query costs.
      requireKey,
      // Then the request's variables, which the next two decide with: a malformed
      // request is BAD_USER_INPUT whatever the key may do.
      variablesCheckedFirst,
      wellFormedVariables,
      // Then what the key may do: it learns nothing of a cost it may not run.
      authorizeBeforeExecution,
      ...queryLimitPlugins({ introspection, metrics: options.metrics }),
      // A change seen by many streams executes once per distinct operation.
      sharedEventExecution,
      // Client operations run as graphql-jit functions compiled once per document (the
      // same document object Yoga's parse cache hands back for the same text), like the
      // REST adapters' operations (src/rest/runOperation.ts); docs/PERFORMANCE.md.
      useGraphQlJit(
        {},
        {
          // Subscriptions run on graphql-js: each event executes once, nothing to compile for.
          enableIf: (args) =>
            getOperationAST(args.document, args.operationName)?.operation !== 'subscription',
        },
      ),
    ],
    // GraphiQL's page is the edge's (src/http/graphiql.ts), with its own assets and policy.
    graphiql: false,
  });
}

export const DEFAULT_QUERY = `# The facts live now in the demo dataset, with their entities: three until
# 15 January 2035, when the planned test drive becomes live too. Add asOf: "2026-06-01"
# to facts(...) to see what was believed true on that day instead.
query CurrentFacts {
  viewer { workspace scopes }
  dataset(name: "user_42") {
    facts(first: 10) {
      totalCount
      edges {
        node {
          subject
          predicate
          object
          validAt
          state
          objectEntity { name type }
        }
      }
    }
  }
}
`;
