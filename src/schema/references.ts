import type DataLoader from 'dataloader';
import type { RequestContext } from '../context.js';
import type { Loaders } from '../loaders.js';
import { LOADED_OBJECT_COST } from './cost.js';

/**
 * A nullable field naming one object its parent refers to (a fact's episode, a change's
 * memory, the fact that superseded this one): null when the parent names none, else
 * loaded with the request's other lookups of that kind, so a page of parents costs one
 * query per kind; null too if the object is gone.
 */
export function loadedReference<Ref, Parent, Key, Shape>(
  type: Ref,
  description: string,
  loaderOf: (loaders: Loaders) => DataLoader<Key, Shape | null, string>,
  keyOf: (parent: Parent) => Key | null,
) {
  return {
    type,
    nullable: true,
    description,
    complexity: LOADED_OBJECT_COST,
    resolve: (parent: Parent, _args: object, ctx: RequestContext) => {
      const key = keyOf(parent);
      return key === null ? null : loaderOf(ctx.loaders).load(key);
    },
  } as const;
}
