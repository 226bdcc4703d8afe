import {
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLObjectType,
  type GraphQLSchema,
  getOperationAST,
  isObjectType,
  Kind,
  type OperationDefinitionNode,
  visit,
} from 'graphql';
import { GatewayError } from '../errors.js';
import { walkSelections } from './selectionWalk.js';

/**
 * Authorization decided before execution: from the parsed operation, the request's
 * variables and the scopes declared on the schema, whether the key may run the whole
 * operation. If not, the operation is refused whole (FORBIDDEN, naming every field that
 * needs a scope the key lacks) and no resolver runs, so a write is never done and then
 * answered as a failure because of what its selection asked to read back. This is Apollo
 * Router's `@requiresScopes` with unauthorized operations rejected.
 *
 * The declarations are scope-auth's (`authScopes` and `skipTypeScopes` on types and
 * fields; src/schema/authScopes.ts says which need what), read from the built schema,
 * where Pothos keeps each type's and field's options (`extensions.pothosOptions`). They
 * are evaluated as scope-auth evaluates them: a type's rule applies to each of its
 * fields (unless the field skips it), so do its interfaces' rules, then the field's own;
 * a rule is satisfied by any one of its scopes, `$all` / `$any` nest. Every rule of this
 * schema is a static map, so the check decides every field and the schema is built with
 * scope-auth's run-time checks off (src/schema/index.ts): no per-field wrapper runs. A rule
 * that only run time could decide (a function of the parent or the arguments, `$granted`)
 * is refused when the rules are read, so adding one fails the schema walk
 * (test/graphql/authorization.test.ts) instead of passing unchecked.
 */

/** A declared rule, as scope-auth takes it: any one of its scopes (`$all` / `$any` nest). */
export type ScopeMap = { [scope: string]: unknown; $all?: ScopeMap; $any?: ScopeMap };

/** The scopes a request holds (src/schema/authScopes.ts `scopesOf`). */
export type GrantedScopes = Readonly<Record<string, boolean>>;

/** Every rule a field must pass, in scope-auth's order: type, interfaces, field. */
interface FieldRules {
  /** `Type.field` */
  coordinate: string;
  rules: ScopeMap[];
}

export interface DeclaredRules {
  /** Rules by type name and field name (object types only: fields run on them). */
  fields: Map<string, Map<string, FieldRules>>;
  /** Object types' own rules (absent: none declared). */
  types: Map<string, ScopeMap | undefined>;
  /** Declarations missing where the schema's rules require one. */
  gaps: string[];
}

interface PothosAuthOptions {
  authScopes?: unknown;
  skipTypeScopes?: boolean;
  skipInterfaceScopes?: boolean;
}

const optionsOf = (extensions: unknown): PothosAuthOptions =>
  (extensions as { pothosOptions?: PothosAuthOptions } | undefined)?.pothosOptions ?? {};

const ROOT_TYPES = new Set(['Query', 'Mutation', 'Subscription']);

/** A declared rule, or a thrown error if only run time could decide it. */
function staticRule(where: string, rule: unknown): ScopeMap | undefined {
  if (rule === undefined) return undefined;
  if (typeof rule !== 'object' || rule === null) {
    throw new Error(
      `${where}: authScopes must be a scope map the gateway can check before execution, not ${typeof rule}`,
    );
  }
  const map = rule as ScopeMap;
  if ('$granted' in map) {
    throw new Error(`${where}: $granted scopes can only be checked at run time`);
  }
  for (const nested of [map.$all, map.$any]) if (nested) staticRule(where, nested);
  return map;
}

const rulesCache = new WeakMap<GraphQLSchema, DeclaredRules>();

/** Every object type's and field's declared rules, read once per schema. */
export function declaredRules(schema: GraphQLSchema): DeclaredRules {
  const cached = rulesCache.get(schema);
  if (cached) return cached;
  const fields = new Map<string, Map<string, FieldRules>>();
  const types = new Map<string, ScopeMap | undefined>();
  const gaps: string[] = [];
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue;
    const root = ROOT_TYPES.has(type.name);
    const typeOptions = optionsOf(type.extensions);
    const typeRule = staticRule(`type ${type.name}`, typeOptions.authScopes);
    if (!root) {
      types.set(type.name, typeRule);
      if (!typeRule) gaps.push(`type ${type.name} declares no authScopes`);
    }
    const interfaceRules = type
      .getInterfaces()
      .map((i) => staticRule(`interface ${i.name}`, optionsOf(i.extensions).authScopes))
      .filter((r): r is ScopeMap => r !== undefined);
    const byField = new Map<string, FieldRules>();
    for (const field of Object.values(type.getFields()) as GraphQLField<unknown, unknown>[]) {
      const coordinate = `${type.name}.${field.name}`;
      const own = optionsOf(field.extensions);
      const fieldRule = staticRule(coordinate, own.authScopes);
      if (root && !fieldRule) gaps.push(`root field ${coordinate} declares no authScopes`);
      if (own.skipTypeScopes && !fieldRule) {
        gaps.push(`${coordinate} skips its type's rule and declares none of its own`);
      }
      const rules: ScopeMap[] = [];
      if (typeRule && !own.skipTypeScopes) rules.push(typeRule);
      if (!own.skipInterfaceScopes && !typeOptions.skipInterfaceScopes) {
        rules.push(...interfaceRules);
      }
      if (fieldRule) rules.push(fieldRule);
      byField.set(field.name, { coordinate, rules });
    }
    fields.set(type.name, byField);
  }
  const declared = { fields, types, gaps };
  rulesCache.set(schema, declared);
  return declared;
}

/** scope-auth's evaluation of one map: any of its scopes, or all of them under `$all`. */
function passes(map: ScopeMap, granted: GrantedScopes, all = false): boolean {
  const checks: boolean[] = [];
  for (const [name, value] of Object.entries(map)) {
    if (name === '$all') checks.push(passes(value as ScopeMap, granted, true));
    else if (name === '$any') checks.push(passes(value as ScopeMap, granted, false));
    else checks.push(granted[name] === true);
  }
  return all ? checks.every(Boolean) : checks.some(Boolean);
}

/** What a rule asks for, in words: `read`, `read or write`, `all of (read, admin)`. */
function describeRule(map: ScopeMap, all = false): string {
  const parts = Object.entries(map).map(([name, value]) =>
    name === '$all'
      ? describeRule(value as ScopeMap, true)
      : name === '$any'
        ? describeRule(value as ScopeMap, false)
        : name,
  );
  if (parts.length === 1) return parts[0]!;
  return all ? `all of (${parts.join(', ')})` : parts.join(' or ');
}

/** The scopes a rule names outright (its own keys and nested ones). */
export function scopesNamed(map: ScopeMap): string[] {
  return [
    ...new Set(
      Object.entries(map).flatMap(([name, value]) =>
        name.startsWith('$') ? scopesNamed(value as ScopeMap) : [name],
      ),
    ),
  ];
}

/** Which operation of the document a request runs, and with which variables. */
interface OperationRequest {
  operationName?: string | null | undefined;
  variables?: Readonly<Record<string, unknown>> | null | undefined;
}

/** A field of the operation that the key may not run, and what it needs. */
export interface MissingScope {
  /** `Type.field` */
  field: string;
  /** The rule it fails, in words (`"read"`). */
  needs: string;
}

function rootTypeOf(
  schema: GraphQLSchema,
  operation: OperationDefinitionNode,
): GraphQLObjectType | null | undefined {
  switch (operation.operation) {
    case 'query':
      return schema.getQueryType();
    case 'mutation':
      return schema.getMutationType();
    case 'subscription':
      return schema.getSubscriptionType();
  }
}

/**
 * Every field of the operation that the granted scopes do not allow, each once, in the
 * order the operation names them. Fragments (named and inline, on object types and on
 * interfaces: a field under `node(id:)` counts for every type the fragment can apply to)
 * and @skip / @include (with the request's variables) are followed; introspection fields
 * need nothing. An operation the document does not hold needs nothing here: execution
 * answers it with its own error.
 */
export function missingScopes(
  schema: GraphQLSchema,
  document: DocumentNode,
  request: OperationRequest,
  granted: GrantedScopes,
): MissingScope[] {
  // The named operation, or the document's only one (graphql-js's rule).
  const operation = getOperationAST(document, request.operationName);
  const root = operation && rootTypeOf(schema, operation);
  if (!operation || !root) return [];
  const rules = declaredRules(schema).fields;
  const variables = request.variables ?? {};
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of document.definitions) {
    if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
  }
  const missing = new Map<string, MissingScope>();
  walkSelections(
    {
      schema,
      fragment: (name) => fragments.get(name),
      variables,
      visit: (type, field) => {
        for (const rule of rules.get(type.name)?.get(field.name)?.rules ?? []) {
          if (passes(rule, granted)) continue;
          const coordinate = `${type.name}.${field.name}`;
          if (!missing.has(coordinate)) {
            missing.set(coordinate, { field: coordinate, needs: describeRule(rule) });
          }
          break;
        }
        return true;
      },
    },
    operation.selectionSet,
    [root],
  );
  return [...missing.values()];
}

/** How many fields a refusal's message names before "and N more" (the details list all). */
const NAMED_IN_MESSAGE = 10;

/**
 * The refusal of an operation the key may not run whole: FORBIDDEN (HTTP 403), naming the
 * scopes it lacks and the fields that need them; `details.missing` lists every field.
 * With `fields: false` (the REST routes, whose clients know no GraphQL fields) the message
 * names the scopes only.
 */
function operationForbidden(
  missing: readonly MissingScope[],
  options: { fields: boolean } = { fields: true },
): GatewayError {
  const byNeed = new Map<string, string[]>();
  for (const m of missing) byNeed.set(m.needs, [...(byNeed.get(m.needs) ?? []), m.field]);
  const needs = [...byNeed.entries()].map(([need, fields]) => {
    if (!options.fields) return `the ${need} scope`;
    const named = fields.slice(0, NAMED_IN_MESSAGE).join(', ');
    const more =
      fields.length > NAMED_IN_MESSAGE ? ` and ${fields.length - NAMED_IN_MESSAGE} more` : '';
    return `the ${need} scope (for ${named}${more})`;
  });
  return new GatewayError(
    'FORBIDDEN',
    `This operation needs ${needs.join(' and ')}${options.fields ? '; nothing was run' : ''}`,
    { missing: missing.map((m) => ({ ...m })) },
    'request',
  );
}

interface CachedDecisions {
  variables: string[];
  /** By operation name, scopes and the directive variables' values. */
  decisions: Map<string, MissingScope[]>;
}

const decisionCache = new WeakMap<DocumentNode, CachedDecisions>();

/**
 * `missingScopes`, remembered per document (Yoga hands back the same document object for
 * the same text; the REST operations are fixed): the same operation, scopes and @skip /
 * @include values always get the same answer. Returns the refusal, or null.
 */
export function authorizeOperation(
  schema: GraphQLSchema,
  document: DocumentNode,
  request: OperationRequest,
  granted: GrantedScopes,
  options: { fields: boolean } = { fields: true },
): GatewayError | null {
  let cached = decisionCache.get(document);
  if (!cached) {
    cached = { variables: directiveVariables(document), decisions: new Map() };
    decisionCache.set(document, cached);
  }
  const values = cached.variables.map((name) => request.variables?.[name]);
  const scopes = Object.keys(granted)
    .filter((s) => granted[s])
    .sort();
  const key = JSON.stringify([request.operationName ?? null, scopes, values]);
  let missing = cached.decisions.get(key);
  if (!missing) {
    missing = missingScopes(schema, document, request, granted);
    // Bounded: a document's keys are its operations × scope sets × directive values.
    if (cached.decisions.size < 64) cached.decisions.set(key, missing);
  }
  return missing.length === 0 ? null : operationForbidden(missing, options);
}

/**
 * The variables @skip and @include read anywhere in a document: what a cached decision
 * for the document depends on besides the key's scopes.
 */
export function directiveVariables(document: DocumentNode): string[] {
  const names = new Set<string>();
  visit(document, {
    Directive(node) {
      if (node.name.value !== 'skip' && node.name.value !== 'include') return;
      for (const arg of node.arguments ?? []) {
        if (arg.value.kind === Kind.VARIABLE) names.add(arg.value.name.value);
      }
    },
  });
  return [...names].sort();
}
