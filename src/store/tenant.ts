/**
 * Who a store call acts for. Every query the store issues filters on the workspace, and on
 * the dataset where there is one; nothing in the store runs without a Tenant.
 */
export interface Tenant {
  workspaceId: string;
  dataset: string;
}

/**
 * The tenant of a stored dataset or of a document in one: what a nested field acts for.
 * Its parent was read for the request's workspace, so it names that workspace itself.
 */
export function tenantOfDocument(doc: { workspaceId: string; dataset: string }): Tenant {
  return { workspaceId: doc.workspaceId, dataset: doc.dataset };
}

export function tenantOfDataset(ds: { workspaceId: string; name: string }): Tenant {
  return { workspaceId: ds.workspaceId, dataset: ds.name };
}
