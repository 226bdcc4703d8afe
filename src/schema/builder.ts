import SchemaBuilder from '@pothos/core';
import ComplexityPlugin from '@pothos/plugin-complexity';
import RelayPlugin from '@pothos/plugin-relay';
import ScopeAuthPlugin from '@pothos/plugin-scope-auth';
import ValidationPlugin from '@pothos/plugin-validation';
import type { AuthenticatedContext, RequestContext } from '../context.js';
import { badInput } from '../errors.js';
import { describeIssues, issuePath } from '../validation.js';
import { scopesOf } from './authScopes.js';
import { defaultFieldCost } from './cost.js';
import { dateTimeScalar } from './scalars.js';

/**
 * The schema builder: plugins, scalars and empty root types only. Each domain file
 * (fact.ts, entity.ts, ...) defines its types and adds its own root fields.
 *
 * Nullability: fields are non-null by default (`defaultFieldNullability: false`); a field
 * is nullable only where "absent" is a real answer (a fact's validUntil, a lookup that
 * finds nothing). Connection edges and nodes are never null.
 *
 * Authorization is declared on the schema (scope-auth), never checked in resolvers: every
 * object type carries `authScopes` (workspace data needs `read`), and every root field
 * declares the scope it needs. The rules and their test are described in authScopes.ts;
 * they are checked before execution, for the whole operation (operationScopes.ts).
 *
 * Query cost is declared on the schema too (complexity plugin): every list field states
 * its bound next to its definition; the model is described in cost.ts.
 */
export const builder = new SchemaBuilder<{
  Context: RequestContext;
  /** What `t.withAuth({ <scope>: true })` gives a root field: a context with its key. */
  AuthContexts: {
    authenticated: AuthenticatedContext;
    read: AuthenticatedContext;
    write: AuthenticatedContext;
    admin: AuthenticatedContext;
  };
  AuthScopes: {
    /** Any valid key of the workspace, whatever its scopes. */
    authenticated: boolean;
    read: boolean;
    write: boolean;
    admin: boolean;
  };
  /** What every connection resolver returns beside its edges: the count, run on demand. */
  Connection: { totalCount: () => Promise<number> };
  DefaultFieldNullability: false;
  DefaultEdgesNullability: false;
  DefaultNodeNullability: false;
  Scalars: {
    DateTime: { Input: Date; Output: Date };
    ID: { Input: string; Output: string };
  };
}>({
  plugins: [ScopeAuthPlugin, RelayPlugin, ValidationPlugin, ComplexityPlugin],
  defaultFieldNullability: false,
  scopeAuth: {
    // The key the edge verified. The rules are checked before execution, for the whole
    // operation (operationScopes.ts); the schema is built without the per-field checks.
    authScopes: scopesOf,
  },
  complexity: {
    fieldComplexity: defaultFieldCost,
    // The plugin's own check runs inside root resolvers, after execution has begun; the
    // gateway checks the same costs before execution instead (src/http/queryLimits.ts).
    disabled: true,
  },
  relay: {
    clientMutationId: 'omit',
    cursorType: 'String',
    // The page's `first` is paid by the connection field; edges and pageInfo are wrappers.
    edgesFieldOptions: { nullable: false, complexity: { field: 0, multiplier: 1 } },
    pageInfoFieldOptions: { complexity: 0 },
    nodeFieldOptions: { nullable: false },
    nodesQueryOptions: false,
    nodeQueryOptions: { authScopes: { read: true } },
    pageInfoTypeOptions: { authScopes: { authenticated: true } },
  },
  validation: {
    validationError: (result) =>
      badInput(describeIssues(result.issues), {
        issues: result.issues.map((issue) => ({ path: issuePath(issue), message: issue.message })),
      }),
  },
});

builder.addScalarType('DateTime', dateTimeScalar);
builder.queryType({});
builder.mutationType({});
builder.subscriptionType({});
