import { type GraphQLField, type GraphQLSchema, isObjectType } from 'graphql';

/**
 * Reads the authorization rules declared on a built Pothos schema (scope-auth keeps each
 * type's and field's options in `extensions.pothosOptions`), so tests can check every type
 * and field without a list of them.
 */
type AuthScopes = Record<string, unknown>;

interface PothosOptions {
  authScopes?: AuthScopes | ((...args: unknown[]) => unknown);
  skipTypeScopes?: boolean;
}

const optionsOf = (extensions: unknown): PothosOptions =>
  ((extensions as { pothosOptions?: PothosOptions } | undefined)?.pothosOptions ??
    {}) as PothosOptions;

const ROOTS = new Set(['Query', 'Mutation', 'Subscription']);

/** The scopes a rule requires outright (a plain map: every key set to true). */
function required(scopes: PothosOptions['authScopes']): string[] {
  if (!scopes || typeof scopes === 'function') return [];
  return Object.entries(scopes)
    .filter(([name, value]) => value === true && !name.startsWith('$'))
    .map(([name]) => name);
}

export interface FieldRule {
  /** `Type.field` */
  coordinate: string;
  /** The scopes this field needs, from its type's rule and its own. */
  scopes: string[];
}

/** Every object type and field of the schema with the scopes it needs, or a gap. */
export function authorizationRules(schema: GraphQLSchema): {
  gaps: string[];
  fields: FieldRule[];
  types: Map<string, string[]>;
} {
  const gaps: string[] = [];
  const fields: FieldRule[] = [];
  const types = new Map<string, string[]>();
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue;
    const root = ROOTS.has(type.name);
    const typeRule = optionsOf(type.extensions).authScopes;
    if (!root) {
      if (!typeRule) gaps.push(`type ${type.name} declares no authScopes`);
      types.set(type.name, required(typeRule));
    }
    for (const field of Object.values(type.getFields()) as GraphQLField<unknown, unknown>[]) {
      const coordinate = `${type.name}.${field.name}`;
      const own = optionsOf(field.extensions);
      if (root && !own.authScopes) gaps.push(`root field ${coordinate} declares no authScopes`);
      if (own.skipTypeScopes && !own.authScopes) {
        gaps.push(`${coordinate} skips its type's rule and declares none of its own`);
      }
      const inherited = root || own.skipTypeScopes ? [] : required(typeRule);
      fields.push({
        coordinate,
        scopes: [...new Set([...inherited, ...required(own.authScopes)])],
      });
    }
  }
  return { gaps, fields, types };
}
