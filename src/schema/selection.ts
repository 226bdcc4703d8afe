import {
  GraphQLIncludeDirective,
  type GraphQLResolveInfo,
  GraphQLSkipDirective,
  getDirectiveValues,
  Kind,
  type SelectionNode,
  type SelectionSetNode,
} from 'graphql';

/**
 * Whether the field being resolved selects `name` directly (or through fragments), as
 * this request's variables decide `@include` / `@skip`: a client asking for the count
 * only on its first page (`totalCount @include(if: $first)`) gets no count after it.
 */
export function selects(info: GraphQLResolveInfo, name: string): boolean {
  const included = (node: SelectionNode) =>
    getDirectiveValues(GraphQLSkipDirective, node, info.variableValues)?.if !== true &&
    getDirectiveValues(GraphQLIncludeDirective, node, info.variableValues)?.if !== false;
  const within = (set: SelectionSetNode | undefined): boolean =>
    set?.selections.some(
      (s) =>
        included(s) &&
        (s.kind === Kind.FIELD
          ? s.name.value === name
          : s.kind === Kind.INLINE_FRAGMENT
            ? within(s.selectionSet)
            : within(info.fragments[s.name.value]?.selectionSet)),
    ) ?? false;
  return info.fieldNodes.some((node) => within(node.selectionSet));
}
