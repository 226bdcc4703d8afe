import { type BulkCounts, writeBulk } from '../store/bulk.js';
import type { Collections } from '../store/database.js';
import { ensureWorkspace, workspaceIdFor } from '../store/workspaces.js';
import { type LineError, parseImportFile } from './format.js';

export type ImportOutcome =
  | { ok: true; counts: BulkCounts; records: number; workspaceId: string }
  | { ok: false; errors: LineError[] };

/**
 * The import path: validates the whole JSONL text, then (only if every line is good)
 * writes it in unordered batches. Used by `npm run import`, the demo data and the bench.
 */
export async function importJsonl(
  c: Collections,
  input: {
    /** The target workspace's name; created (after validation) if it does not exist. */
    workspace: string;
    content: string;
    defaultDataset?: string | null;
    now: Date;
    onProgress?: (done: number, total: number) => void;
  },
): Promise<ImportOutcome> {
  const { now } = input;
  const workspaceId = workspaceIdFor(input.workspace);
  const parsed = parseImportFile(input.content, {
    workspaceId,
    defaultDataset: input.defaultDataset ?? null,
    now,
  });
  if (!parsed.ok) return parsed;
  await ensureWorkspace(c, input.workspace, now);
  const counts = await writeBulk(
    c,
    {
      workspaceId,
      datasets: parsed.datasets,
      entities: parsed.records.flatMap((r) => (r.kind === 'entity' ? [r] : [])),
      episodes: parsed.records.flatMap((r) => (r.kind === 'episode' ? [r.doc] : [])),
      facts: parsed.records.flatMap((r) => (r.kind === 'fact' ? [r.doc] : [])),
      memories: parsed.records.flatMap((r) => (r.kind === 'memory' ? [r.doc] : [])),
      now,
    },
    input.onProgress,
  );
  return { ok: true, counts, records: parsed.records.length, workspaceId };
}
