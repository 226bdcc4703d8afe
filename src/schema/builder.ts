import SchemaBuilder from '@pothos/core';
import RelayPlugin from '@pothos/plugin-relay';
import ValidationPlugin from '@pothos/plugin-validation';
import type { RequestContext } from '../context.js';
import { badInput } from '../errors.js';
import { dateTimeScalar } from './scalars.js';

/**
 * The schema builder: plugins, scalars and empty root types only. Each domain file
 * (fact.ts, entity.ts, ...) defines its types and adds its own root fields.
 *
 * Nullability: fields are non-null by default (`defaultFieldNullability: false`); a field
 * is nullable only where "absent" is a real answer (a fact's validUntil, a lookup that
 * finds nothing). Connection edges and nodes are never null.
 */
export const builder = new SchemaBuilder<{
  Context: RequestContext;
  DefaultFieldNullability: false;
  DefaultEdgesNullability: false;
  DefaultNodeNullability: false;
  Scalars: {
    DateTime: { Input: Date; Output: Date };
    ID: { Input: string; Output: string };
  };
}>({
  plugins: [RelayPlugin, ValidationPlugin],
  defaultFieldNullability: false,
  relay: {
    clientMutationId: 'omit',
    cursorType: 'String',
    edgesFieldOptions: { nullable: false },
    nodeFieldOptions: { nullable: false },
    nodesQueryOptions: false,
  },
  validation: {
    validationError: (result) =>
      badInput(
        result.issues
          .map((issue) => {
            const path = (issue.path ?? [])
              .map((p) => (typeof p === 'object' ? String(p.key) : String(p)))
              .join('.');
            return path ? `${path}: ${issue.message}` : issue.message;
          })
          .join('; '),
        {
          issues: result.issues.map((issue) => ({
            path: (issue.path ?? []).map((p) => (typeof p === 'object' ? p.key : p)),
            message: issue.message,
          })),
        },
      ),
  },
});

builder.addScalarType('DateTime', dateTimeScalar);
builder.queryType({});
builder.mutationType({});
