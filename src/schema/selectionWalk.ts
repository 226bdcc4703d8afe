import {
  type FieldNode,
  type FragmentDefinitionNode,
  type FragmentSpreadNode,
  type GraphQLField,
  type GraphQLNamedType,
  type GraphQLObjectType,
  type GraphQLSchema,
  getNamedType,
  type InlineFragmentNode,
  isAbstractType,
  isObjectType,
  Kind,
  type SelectionSetNode,
  type ValueNode,
} from 'graphql';

/**
 * The walk over an operation's selections that decisions made before execution share:
 * which scopes an operation needs (operationScopes.ts) and which fields of its documents a
 * field's selection reads (selectedReads.ts). It follows fragments (named and inline, on
 * object types and on interfaces: a field under `node(id:)` counts for every type the
 * fragment can apply to) and @skip / @include with the given variables.
 */

/** The object types a value of `type` can be at run time. */
export function concreteTypes(
  schema: GraphQLSchema,
  type: GraphQLNamedType,
): readonly GraphQLObjectType[] {
  if (isObjectType(type)) return [type];
  if (isAbstractType(type)) return schema.getPossibleTypes(type);
  return [];
}

/**
 * Whether @skip and @include leave a selection in, with the request's variables. A
 * condition the variables do not decide (absent, or not a boolean) counts as included:
 * nothing is left out on a value execution would refuse, and with no variables at all
 * the walk sees everything the document may select.
 */
function included(
  node: FieldNode | InlineFragmentNode | FragmentSpreadNode,
  variables: Readonly<Record<string, unknown>>,
): boolean {
  for (const directive of node.directives ?? []) {
    const name = directive.name.value;
    if (name !== 'skip' && name !== 'include') continue;
    const condition = booleanOf(
      directive.arguments?.find((a) => a.name.value === 'if')?.value,
      variables,
    );
    if (condition === undefined) continue;
    if (name === 'skip' && condition) return false;
    if (name === 'include' && !condition) return false;
  }
  return true;
}

function booleanOf(
  value: ValueNode | undefined,
  variables: Readonly<Record<string, unknown>>,
): boolean | undefined {
  if (!value) return undefined;
  if (value.kind === Kind.BOOLEAN) return value.value;
  if (value.kind === Kind.VARIABLE) {
    const v = variables[value.name.value];
    return typeof v === 'boolean' ? v : undefined;
  }
  return undefined;
}

/** What a walk reads besides the selections: the schema, the fragments, the variables. */
export interface SelectionWalk {
  schema: GraphQLSchema;
  fragment: (name: string) => FragmentDefinitionNode | undefined;
  variables: Readonly<Record<string, unknown>>;
  /**
   * Each field selected on each object type it can apply to (introspection fields are not
   * visited); returns whether to walk on into the field's own selection.
   */
  visit: (
    type: GraphQLObjectType,
    field: GraphQLField<unknown, unknown>,
    node: FieldNode,
  ) => boolean;
}

/**
 * Walks `selectionSet` as selected on `types`. A selection set is walked once per set of
 * types it can apply to: what it selects does not change, and a fragment spread many
 * times costs one walk.
 */
export function walkSelections(
  walk: SelectionWalk,
  selectionSet: SelectionSetNode,
  types: readonly GraphQLObjectType[],
): void {
  const { schema, fragment, variables, visit } = walk;
  const walked = new Map<SelectionSetNode, Set<string>>();
  const narrow = (within: readonly GraphQLObjectType[], condition: string | undefined) => {
    if (!condition) return within;
    const target = schema.getType(condition);
    if (!target) return [];
    const allowed = new Set(concreteTypes(schema, target));
    return within.filter((t) => allowed.has(t));
  };
  const step = (set: SelectionSetNode, on: readonly GraphQLObjectType[]) => {
    if (on.length === 0) return;
    const key = on.map((t) => t.name).join(',');
    const seen = walked.get(set) ?? new Set<string>();
    if (seen.has(key)) return;
    seen.add(key);
    walked.set(set, seen);
    for (const selection of set.selections) {
      if (!included(selection, variables)) continue;
      if (selection.kind === Kind.INLINE_FRAGMENT) {
        step(selection.selectionSet, narrow(on, selection.typeCondition?.name.value));
        continue;
      }
      if (selection.kind === Kind.FRAGMENT_SPREAD) {
        const definition = fragment(selection.name.value);
        if (definition) {
          step(definition.selectionSet, narrow(on, definition.typeCondition.name.value));
        }
        continue;
      }
      if (selection.name.value.startsWith('__')) continue;
      for (const type of on) {
        const field = type.getFields()[selection.name.value];
        if (!field) continue;
        if (visit(type, field, selection) && selection.selectionSet) {
          step(selection.selectionSet, concreteTypes(schema, getNamedType(field.type)));
        }
      }
    }
  };
  step(selectionSet, types);
}
