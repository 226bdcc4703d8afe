/**
 * SupaCloud's memory object, stated once: each snake_case name in the order its API
 * documents, the memory field that carries it (the stored and the GraphQL name) and the
 * kind of its value. The JSONL memory line (transfer/format.ts: import rules and export)
 * and the SupaCloud route's OpenAPI shape (rest/supaCloud.ts) are built from it; a test
 * checks the aliases of the operation behind that route (rest/supaCloud.graphql) against
 * it. A memory field SupaCloud clients must see is one entry here.
 */
export const SUPACLOUD_MEMORY_FIELDS = {
  archived_at: { field: 'archivedAt', kind: 'instant', nullable: true },
  created_at: { field: 'createdAt', kind: 'instant', nullable: false },
  id: { field: 'memoryId', kind: 'uuid', nullable: false },
  importance: { field: 'importance', kind: 'double', nullable: false },
  last_used_at: { field: 'lastUsedAt', kind: 'instant', nullable: true },
  memory_kind: { field: 'memoryKind', kind: 'string', nullable: false },
  pinned: { field: 'pinned', kind: 'boolean', nullable: false },
  project_id: { field: 'projectId', kind: 'uuid', nullable: true },
  salience: { field: 'salience', kind: 'double', nullable: false },
  scope: { field: 'scope', kind: 'string', nullable: false },
  source_id: { field: 'sourceId', kind: 'uuid', nullable: true },
  source_type: { field: 'sourceType', kind: 'string', nullable: false },
  superseded_by: { field: 'supersededBy', kind: 'uuid', nullable: true },
  text: { field: 'text', kind: 'string', nullable: false },
  updated_at: { field: 'updatedAt', kind: 'instant', nullable: false },
  user_id: { field: 'userId', kind: 'uuid', nullable: true },
  valid_from: { field: 'validFrom', kind: 'instant', nullable: false },
  valid_until: { field: 'validUntil', kind: 'instant', nullable: true },
  version: { field: 'version', kind: 'int32', nullable: false },
  workspace_id: { field: 'workspaceId', kind: 'uuid', nullable: false },
} as const satisfies Record<string, SupaCloudField>;

export type SupaCloudKind = 'instant' | 'uuid' | 'double' | 'int32' | 'string' | 'boolean';

export interface SupaCloudField {
  field: string;
  kind: SupaCloudKind;
  nullable: boolean;
}

export type SupaCloudMemoryName = keyof typeof SUPACLOUD_MEMORY_FIELDS;

/** The entries in SupaCloud's order (an object keeps its keys' insertion order). */
export const supaCloudMemoryEntries = Object.entries(SUPACLOUD_MEMORY_FIELDS) as [
  SupaCloudMemoryName,
  SupaCloudField,
][];

/**
 * A value per SupaCloud name, each built from its entry by `build` (an import rule, an
 * OpenAPI schema): the one loop every consumer of the list shares.
 */
export function perSupaCloudField<T>(
  build: (spec: SupaCloudField, name: SupaCloudMemoryName) => T,
): Record<SupaCloudMemoryName, T> {
  return Object.fromEntries(
    supaCloudMemoryEntries.map(([name, spec]) => [name, build(spec, name)]),
  ) as Record<SupaCloudMemoryName, T>;
}
