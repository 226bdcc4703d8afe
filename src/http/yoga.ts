import { renderGraphiQL } from '@graphql-yoga/render-graphiql';
import { type DocumentNode, Kind, type OperationDefinitionNode } from 'graphql';
import { createYoga, type Plugin } from 'graphql-yoga';
import { type RequestContext, unauthenticated } from '../context.js';
import { maskError } from '../errors.js';
import { schema } from '../schema/index.js';

export interface YogaOptions {
  /** Prefilled in GraphiQL's headers editor (the development key in embedded mode). */
  graphiqlHeaders?: Record<string, string>;
}

const INTROSPECTION_FIELDS = new Set(['__schema', '__type', '__typename']);

function isIntrospectionOnly(document: DocumentNode, operationName?: string | null): boolean {
  const operations = document.definitions.filter(
    (d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION,
  );
  const operation = operationName
    ? operations.find((o) => o.name?.value === operationName)
    : operations[0];
  if (!operation) return false;
  return operation.selectionSet.selections.every(
    (s) => s.kind === Kind.FIELD && INTROSPECTION_FIELDS.has(s.name.value),
  );
}

/**
 * Every operation needs a valid key, except introspection alone, so GraphiQL can load
 * the schema before a key is typed in. Checked before execution, so no resolver runs.
 */
const requireKey: Plugin<RequestContext> = {
  onExecute({ args }) {
    const ctx = args.contextValue;
    if (!ctx.auth && !isIntrospectionOnly(args.document, args.operationName)) {
      const error = unauthenticated(ctx.authProblem);
      error.extensions.http = { status: 401 };
      throw error;
    }
  },
};

/**
 * The GraphQL endpoint. The per-request context is built at the HTTP edge and handed in
 * as Yoga's server context, so GraphQL and the REST adapters share one object.
 */
export function createGraphqlYoga(options: YogaOptions = {}) {
  return createYoga<RequestContext>({
    schema,
    graphqlEndpoint: '/graphql',
    landingPage: false,
    maskedErrors: { maskError: (error) => maskError(error) },
    plugins: [requireKey],
    renderGraphiQL,
    graphiql: {
      title: 'Memory gateway GraphiQL',
      headers: options.graphiqlHeaders
        ? JSON.stringify(options.graphiqlHeaders, null, 2)
        : undefined,
      defaultQuery: DEFAULT_QUERY,
    },
  });
}

const DEFAULT_QUERY = `# The facts live now in the demo dataset, with their entities.
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
