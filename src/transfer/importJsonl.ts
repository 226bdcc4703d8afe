import {
  type BulkCounts,
  BulkWriteFailedError,
  type BulkWritten,
  writeBulk,
} from '../store/bulkWrite.js';
import type { Collections } from '../store/collections.js';
import type { StatementVectors } from '../store/embeddings.js';
import { ensureWorkspace, workspaceIdFor } from '../store/workspaces.js';
import { type LineError, parseImportFile } from './format.js';

export type ImportOutcome =
  | {
      ok: true;
      counts: BulkCounts;
      records: number;
      workspaceId: string;
      /** Fact lines stored as their records derive, not as they state (docs/IMPORT_EXPORT.md). */
      rederived: number;
    }
  | { ok: false; errors: LineError[] };

/**
 * A valid file whose writing failed part-way (the database went away, say): nothing of it
 * may be taken as imported. `written` counts, per kind, the records confirmed stored
 * before the failure (`total` is what the file holds); the others were not written, or
 * not confirmed. Importing the same file again completes it, since an import is
 * idempotent. `cause` is the database's error.
 */
export class ImportWriteError extends Error {
  override name = 'ImportWriteError';
  constructor(
    /** Records read (and validated) from the file. */
    readonly records: number,
    readonly written: BulkCounts,
    readonly total: BulkCounts,
    cause: unknown,
  ) {
    super(`The import failed while writing: ${cause instanceof Error ? cause.message : cause}`, {
      cause,
    });
  }
}

/**
 * The import path: validates the whole JSONL text, then (only if every line is good)
 * writes it in unordered batches. Used by `npm run import`, the demo data and the bench.
 * A failed write throws an `ImportWriteError`; it never returns as a success.
 */
export async function importJsonl(
  db: Collections,
  input: {
    /** The target workspace's name; created (after validation) if it does not exist. */
    workspace: string;
    content: string;
    defaultDataset?: string | null;
    now: Date;
    onProgress?: (done: number, total: number) => void;
    /** The vectors of texts (recall by meaning on): the documents are stored with them. */
    embed?: (texts: readonly string[]) => Promise<StatementVectors>;
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
  const entities = parsed.records.flatMap((r) => (r.kind === 'entity' ? [r] : []));
  const episodes = parsed.records.flatMap((r) => (r.kind === 'episode' ? [r.doc] : []));
  const facts = parsed.records.flatMap((r) => (r.kind === 'fact' ? [r.doc] : []));
  const memories = parsed.records.flatMap((r) => (r.kind === 'memory' ? [r.doc] : []));
  const total: BulkCounts = {
    entities: entities.length,
    episodes: episodes.length,
    facts: facts.length,
    memories: memories.length,
  };
  const records = parsed.records.length;
  let written: BulkWritten;
  try {
    await ensureWorkspace(db, input.workspace, now);
    written = await writeBulk(
      db,
      {
        workspaceId,
        datasets: parsed.datasets,
        entities,
        episodes,
        facts,
        memories,
        now,
        ...(input.embed ? { embed: input.embed } : {}),
      },
      input.onProgress,
    );
  } catch (error) {
    if (error instanceof BulkWriteFailedError) {
      throw new ImportWriteError(records, error.written, error.total, error.cause);
    }
    // The workspace record could not be written: nothing else was.
    throw new ImportWriteError(
      records,
      { entities: 0, episodes: 0, facts: 0, memories: 0 },
      total,
      error,
    );
  }
  return { ok: true, counts: written.counts, records, workspaceId, rederived: written.rederived };
}
