import { tenantOf } from '../context.js';
import { forgetDataset } from '../store/datasets.js';
import type { ErasureCounts } from '../store/documents.js';
import { eraseDataset } from '../store/erasure.js';
import { datasetArg } from './args.js';
import { builder } from './builder.js';
import { OWN_QUERY_OBJECT_COST } from './cost.js';
import { runStoreWrite } from './storeErrors.js';

export const ErasureCountsRef = builder.objectRef<ErasureCounts>('ErasureCounts').implement({
  description: 'What an erasure removed (zeros when there was nothing left to remove).',
  authScopes: { authenticated: true },
  fields: (t) => ({
    facts: t.exposeInt('facts'),
    entities: t.exposeInt('entities'),
    episodes: t.exposeInt('episodes'),
    memories: t.exposeInt('memories'),
    restoredFacts: t.exposeInt('restoredFacts', {
      description: 'Facts the erased episode had superseded, live again.',
    }),
  }),
});

builder.mutationField('eraseDataset', (t) =>
  t.withAuth({ admin: true }).field({
    type: ErasureCountsRef,
    description:
      'Physically removes every document of the dataset in every collection (a privacy request). Idempotent; audited (who, when, what, counts; never the content). Needs the admin scope.',
    args: { name: t.arg.string(datasetArg) },
    complexity: OWN_QUERY_OBJECT_COST,
    resolve: async (_root, args, ctx) => {
      const { auth } = ctx;
      const counts = await runStoreWrite(ctx.store, (store) =>
        eraseDataset(store, tenantOf(ctx, args.name), auth, ctx.now),
      );
      forgetDataset(ctx.readCache, auth.workspaceId, args.name);
      return counts;
    },
  }),
);
