import { getOperationAST, Kind, type OperationDefinitionNode, parse } from 'graphql';
import { shouldRenderGraphiQL } from 'graphql-yoga';
import type { MiddlewareHandler } from 'hono';
import type { TrustedDocumentMode } from '../config.js';
import { type GatewayEnv, unauthenticated } from '../context.js';
import { isJsonMediaType, jsonBodyProblem } from '../domain/jsonBodies.js';
import { errorResponse } from '../rest/errorBodies.js';
import { errorShapeOf } from '../rest/surfaces.js';
import type { Metrics } from './observability.js';
import { nestingDepth, QUERY_LIMITS } from './queryLimits.js';

/**
 * Authentication first (docs/OPERATIONS.md, "Authentication first"): on every route that
 * reads or writes memory (GraphQL, REST, MCP), a request without a valid key is answered
 * 401 with `WWW-Authenticate` (src/http/app.ts adds it to every 401) before any rule about
 * its operation answers: its body, its media type, its method, its document (parse,
 * validation, the query limits), trusted documents. Only the edge's cheap guards, which
 * read no operation, come before it. Two requests without a key pass, so that the GraphQL
 * endpoint can be explored before a key is typed: GraphiQL's page (not an operation), and,
 * while introspection is on and text may run (TRUSTED_DOCUMENTS is not `only`), an operation
 * that selects introspection alone. A key that was sent and refused never passes.
 */

const INTROSPECTION_FIELDS = new Set(['__schema', '__type', '__typename']);

/** Whether an operation selects introspection fields alone (at its root). */
export function isIntrospectionOnly(
  operation: OperationDefinitionNode | null | undefined,
): boolean {
  if (!operation) return false;
  return operation.selectionSet.selections.every(
    (s) => s.kind === Kind.FIELD && INTROSPECTION_FIELDS.has(s.name.value),
  );
}

/** GraphQL's request as sent, text only (a hash is never introspection here), or null. */
async function graphqlText(
  request: Request,
): Promise<{ query: string; operationName: string | null } | null> {
  if (request.method === 'GET') {
    const params = new URL(request.url).searchParams;
    const query = params.get('query');
    if (!query || params.has('documentId') || params.has('extensions')) return null;
    return { query, operationName: params.get('operationName') };
  }
  const contentType = request.headers.get('content-type');
  if (request.method !== 'POST' || !isJsonMediaType(contentType)) return null;
  // The body is bounded already (BODY_LIMIT_BYTES), and checked as JSON's readers need.
  const bytes = await request.clone().arrayBuffer();
  if (jsonBodyProblem(contentType, bytes, true)) return null;
  let body: unknown;
  try {
    body = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    return null;
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return null;
  const { query, operationName, documentId, extensions } = body as Record<string, unknown>;
  const hashed =
    documentId !== undefined ||
    (typeof extensions === 'object' && extensions !== null && 'persistedQuery' in extensions);
  if (typeof query !== 'string' || hashed) return null;
  return { query, operationName: typeof operationName === 'string' ? operationName : null };
}

/** Whether a request is an operation of introspection alone, read within the query limits. */
async function introspectionAlone(request: Request): Promise<boolean> {
  const sent = await graphqlText(request);
  if (!sent || nestingDepth(sent.query) > QUERY_LIMITS.maxNesting) return false;
  try {
    const document = parse(sent.query, { maxTokens: QUERY_LIMITS.maxTokens, noLocation: true });
    return isIntrospectionOnly(getOperationAST(document, sent.operationName));
  } catch {
    return false;
  }
}

/** The rule, for the routes that carry operations (src/http/app.ts `guardApiRoutes`). */
export function authenticateFirst(options: {
  graphiql?: boolean | undefined;
  introspection?: boolean | undefined;
  trustedDocuments?: TrustedDocumentMode | undefined;
  metrics?: Metrics | undefined;
}): MiddlewareHandler<GatewayEnv> {
  const explorable = options.introspection !== false && options.trustedDocuments !== 'only';
  return async (c, next) => {
    const { auth, authProblem } = c.get('requestContext');
    const graphqlPath = c.req.path === '/graphql';
    if (
      auth ||
      (graphqlPath && options.graphiql !== false && shouldRenderGraphiQL(c.req.raw)) ||
      (graphqlPath &&
        explorable &&
        authProblem === 'missing' &&
        (await introspectionAlone(c.req.raw)))
    ) {
      return next();
    }
    options.metrics?.errors.inc({ code: 'UNAUTHENTICATED' });
    return errorResponse(
      c,
      errorShapeOf(c.req.path),
      'UNAUTHENTICATED',
      unauthenticated(authProblem).message,
    );
  };
}
