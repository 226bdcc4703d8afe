import { type GraphQLResolveInfo, getNamedType } from 'graphql';
import { concreteTypes, walkSelections } from './selectionWalk.js';

/**
 * Whether the field being resolved selects `name` directly (or through fragments), as
 * this request's variables decide `@include` / `@skip`: a client asking for the count
 * only on its first page (`totalCount @include(if: $first)`) gets no count after it.
 */
export function selects(info: GraphQLResolveInfo, name: string): boolean {
  let found = false;
  const walk = {
    schema: info.schema,
    fragment: (fragment: string) => info.fragments[fragment],
    variables: info.variableValues,
    visit: (_type: unknown, field: { name: string }) => {
      if (field.name === name) found = true;
      // The field's own selection only, not what its fields select.
      return false;
    },
  };
  const returned = concreteTypes(info.schema, getNamedType(info.returnType));
  for (const node of info.fieldNodes) {
    if (node.selectionSet) walkSelections(walk, node.selectionSet, returned);
  }
  return found;
}
