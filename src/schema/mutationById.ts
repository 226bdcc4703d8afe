import type { ObjectRef } from '@pothos/core';
import { type AuthenticatedContext, tenantOf } from '../context.js';
import type { Collections } from '../store/collections.js';
import type { Tenant } from '../store/tenant.js';
import {
  datasetArg,
  deprecatedIdArg,
  type RenamedId,
  renamedIdArg,
  renamedIdSchema,
  renamedIdValue,
} from './args.js';
import { builder } from './builder.js';
import { OWN_QUERY_OBJECT_COST } from './cost.js';
import { runStoreWrite } from './storeErrors.js';

/** What a mutation on one fact or episode declares (mutationById). */
interface MutationById<Answer> {
  /** The scope it needs: write, or admin for what only an administrator may undo or erase. */
  scope: 'write' | 'admin';
  type: ObjectRef<typeof builder.$inferSchemaTypes, Answer>;
  description: string;
  /** Its id argument (`factId`, `episodeId`, with the deprecated `id`) and what it names. */
  id: RenamedId;
  idDescription: string;
  /** The store write, on the dataset's tenant and the id given. */
  write: (
    store: Collections,
    tenant: Tenant,
    id: string,
    ctx: AuthenticatedContext,
  ) => Promise<Answer>;
}

/**
 * A root mutation on one fact or episode of a dataset, named by its id: `dataset`, the id
 * under its name and its deprecated one (exactly one given), the scope, the cost of a write
 * answering one object, and the store write, watched (runStoreWrite).
 */
export function mutationById<Answer>(name: string, declared: MutationById<Answer>) {
  const { scope, type, description, id, idDescription, write } = declared;
  builder.mutationField(name, (t) =>
    t.withAuth(scope === 'admin' ? { admin: true } : { write: true }).field({
      type,
      description,
      args: {
        [id.name]: t.arg.id(renamedIdArg(id, idDescription)),
        [id.oldName]: t.arg.id(deprecatedIdArg(id)),
        dataset: t.arg.string(datasetArg),
      },
      validate: renamedIdSchema(id),
      complexity: OWN_QUERY_OBJECT_COST,
      resolve: (_root, args, ctx) => {
        const given = renamedIdValue(id, args);
        // Required (datasetArg); the id's computed names widen the arguments' type.
        const tenant = tenantOf(ctx, args.dataset as string);
        // `type` and `write` agree on Answer (MutationById); Pothos cannot check a generic one.
        return runStoreWrite(ctx.store, (store) => write(store, tenant, given, ctx)) as never;
      },
    }),
  );
}
