/**
 * Who a store call acts for. Every query the store issues filters on the workspace, and on
 * the dataset where there is one; nothing in the store runs without a Tenant.
 */
export interface Tenant {
  workspaceId: string;
  dataset: string;
}
