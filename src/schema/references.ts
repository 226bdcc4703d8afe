import type DataLoader from 'dataloader';
import type { GraphQLResolveInfo } from 'graphql';
import type { RequestContext } from '../context.js';
import type { Loaders } from '../loaders.js';
import type { DocumentReads } from '../store/documentReads.js';
import { LOADED_OBJECT_COST } from './cost.js';
import { selectedReads } from './selectedReads.js';

/**
 * A nullable field naming one object its parent refers to (a fact's episode, a change's
 * memory, the fact that superseded this one): null when the parent names none, else
 * loaded with the request's other lookups of that kind, so a page of parents costs one
 * query per kind; null too if the object is gone. The object is read as far as the
 * field's selection asks (selectedReads.ts); `extensions` declares what the field reads of
 * its parent.
 */
export function loadedReference<Ref extends { name: string }, Parent, Key, Shape>(
  type: Ref,
  description: string,
  loaderOf: (
    loaders: Loaders,
  ) => DataLoader<Key & { reads?: DocumentReads | null }, Shape | null, string>,
  keyOf: (parent: Parent) => Key | null,
  extensions?: { extensions: Record<string, unknown> },
) {
  return {
    type,
    nullable: true,
    description,
    complexity: LOADED_OBJECT_COST,
    ...extensions,
    resolve: (parent: Parent, _args: object, ctx: RequestContext, info: GraphQLResolveInfo) => {
      const key = keyOf(parent);
      return key === null
        ? null
        : loaderOf(ctx.loaders).load({ ...key, reads: selectedReads(info, type.name) });
    },
  } as const;
}
