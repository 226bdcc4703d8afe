import type { GraphQLSchema } from 'graphql';
import { declaredRules, scopesNamed } from '../../src/schema/operationScopes.js';

/**
 * The authorization rules declared on a built schema, as the pre-execution check reads
 * them (src/schema/operationScopes.ts `declaredRules`), flattened for the schema walks:
 * every field with the scopes its rules name, every object type with its own.
 */
export interface FieldRule {
  /** `Type.field` */
  coordinate: string;
  /** The scopes this field's rules name (its type's, its interfaces', its own). */
  scopes: string[];
}

export function authorizationRules(schema: GraphQLSchema): {
  gaps: string[];
  fields: FieldRule[];
  types: Map<string, string[]>;
} {
  const declared = declaredRules(schema);
  const fields = [...declared.fields.values()].flatMap((byField) =>
    [...byField.values()].map((f) => ({
      coordinate: f.coordinate,
      scopes: [...new Set(f.rules.flatMap(scopesNamed))],
    })),
  );
  const types = new Map(
    [...declared.types].map(([name, rule]) => [name, rule ? scopesNamed(rule) : []]),
  );
  return { gaps: declared.gaps, fields, types };
}
