import { countDatasets, listDatasets } from '../store/datasets.js';
import type { DatasetDoc } from '../store/documents.js';
import { datasetArg } from './args.js';
import { builder } from './builder.js';
import { connectionType, pageArgs, resolvePage } from './connections.js';
import { LOADED_OBJECT_COST, pageComplexity } from './cost.js';
import type { CursorKey } from './cursors.js';

export const DatasetRef = builder.objectRef<DatasetDoc>('Dataset');

builder.node(DatasetRef, {
  description:
    'A named collection of facts, entities, episodes and memories inside the workspace (e.g. user_42).',
  id: { resolve: (d) => d.name },
  isTypeOf: (value) =>
    typeof value === 'object' &&
    value !== null &&
    'name' in value &&
    'createdAt' in value &&
    !('type' in value),
  authScopes: { read: true },
  loadOne: (name, ctx) => ctx.loaders.datasetByName.load(name),
  fields: (t) => ({
    name: t.exposeString('name'),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

const DatasetConnection = connectionType(DatasetRef, 'Dataset');

const DATASET_CURSOR: CursorKey<DatasetDoc, string> = {
  kind: 'dataset',
  shape: ['string'],
  of: (d) => [d.name],
  position: (parts) => String(parts[0]),
};

builder.queryFields((t) => ({
  datasets: t.withAuth({ read: true }).field({
    type: DatasetConnection,
    description: "The workspace's datasets, by name.",
    complexity: pageComplexity,
    args: pageArgs,
    resolve: (_root, args, ctx, info) => {
      const { workspaceId } = ctx.auth;
      return resolvePage({
        cursor: DATASET_CURSOR,
        args,
        info,
        count: () => countDatasets(ctx.store, workspaceId),
        list: (page) => listDatasets(ctx.store, workspaceId, page),
        nodes: (page) => page.datasets,
      });
    },
  }),
  dataset: t.withAuth({ read: true }).field({
    type: DatasetRef,
    nullable: true,
    description:
      'One dataset by name (any string, exact). Null when the workspace has no such dataset; a dataset of another workspace looks exactly the same.',
    args: { name: t.arg.string(datasetArg) },
    complexity: LOADED_OBJECT_COST,
    resolve: (_root, args, ctx) => ctx.loaders.datasetByName.load(args.name),
  }),
}));
