import { readFile } from 'node:fs/promises';
import { systemClock } from '../clock.js';
import { reportEmbeddedSize } from '../embedded/sizeNotice.js';
import { embedWhatIsPending } from '../openStore.js';
import type { BulkCounts } from '../store/bulkWrite.js';
import { vectorsOfTexts } from '../store/embeddings.js';
import { ImportWriteError, importJsonl } from '../transfer/importJsonl.js';
import { exitWithUsage, parseCommandLine } from './help.js';
import { CommandFailedError, runCommand, UsageError } from './run.js';

const USAGE = 'Usage: npm run import -- FILE.jsonl --workspace NAME [--dataset NAME]';

const KINDS: (keyof BulkCounts)[] = ['entities', 'episodes', 'facts', 'memories'];

/** What a failed import wrote and did not, and how to complete it. */
function failureReport(file: string, workspace: string, error: ImportWriteError): string {
  const kinds = KINDS.filter((kind) => error.total[kind] > 0);
  const list = (count: (kind: keyof BulkCounts) => string) =>
    kinds.length > 0 ? kinds.map((kind) => `${count(kind)} ${kind}`).join(', ') : 'none';
  const cause = error.cause instanceof Error ? error.cause.message : String(error.cause);
  return [
    `Import into workspace "${workspace}" FAILED: ${cause}`,
    `${error.records} records read from ${file}: ${list((k) => String(error.total[k]))}.`,
    `Confirmed written before the failure: ${list((k) => `${error.written[k]} of ${error.total[k]}`)}.`,
    `Not written (or not confirmed): ${list((k) => String(error.total[k] - error.written[k]))}.`,
    'Imports are idempotent: run the same import again to complete it.',
  ].join('\n');
}

const { positionals, values } = parseCommandLine(
  import.meta.url,
  {
    allowPositionals: true,
    options: { workspace: { type: 'string' }, dataset: { type: 'string' } },
  },
  USAGE,
);
const [file, extra] = positionals;
// Refused before the store is opened (an embedded one would be started for nothing).
if (!file) exitWithUsage('Name the file to import.', import.meta.url, USAGE);
if (extra !== undefined) exitWithUsage(`Unexpected argument '${extra}'.`, import.meta.url, USAGE);
if (!values.workspace) exitWithUsage('--workspace is required.', import.meta.url, USAGE);
const workspace = values.workspace;

await runCommand(
  async ({ database, embedded, embedder }) => {
    let content: string;
    try {
      content = await readFile(file, 'utf8');
    } catch (error) {
      throw new UsageError(`Cannot read ${file}: ${(error as Error).message}`);
    }
    const db = database.collections;
    // One instant for the whole import: every record written carries it.
    const now = systemClock();
    const tty = process.stderr.isTTY;
    let outcome: Awaited<ReturnType<typeof importJsonl>>;
    try {
      outcome = await importJsonl(db, {
        workspace,
        content,
        defaultDataset: values.dataset ?? null,
        now,
        // Recall by meaning on: each batch's vectors computed before it is written.
        ...(embedder
          ? { embed: (texts: readonly string[]) => vectorsOfTexts(embedder, texts) }
          : {}),
        ...(tty
          ? {
              onProgress: (done: number, total: number) =>
                process.stderr.write(`\rImporting ${done}/${total}...`),
            }
          : {}),
      });
    } catch (error) {
      if (error instanceof ImportWriteError) {
        throw new CommandFailedError(failureReport(file, workspace, error));
      }
      throw error;
    } finally {
      if (tty) process.stderr.write('\n');
    }
    if (!outcome.ok) {
      const shown = outcome.errors.slice(0, 50).map((e) => `line ${e.line}: ${e.message}`);
      const more = outcome.errors.length > 50 ? [`... and ${outcome.errors.length - 50} more`] : [];
      throw new UsageError(
        [
          `${file} has ${outcome.errors.length} bad line(s); nothing was imported.`,
          ...shown,
          ...more,
        ].join('\n'),
      );
    }
    const { counts } = outcome;
    process.stdout.write(
      `Imported into workspace "${workspace}": ${counts.entities} new entities, ${counts.episodes} new episodes, ${counts.facts} new facts, ${counts.memories} new memories (${outcome.records} records read).\n`,
    );
    if (outcome.rederived > 0) {
      process.stdout.write(
        `Facts stored as their records derive, not as the file states them: ${outcome.rederived} (their invalidAt, supersededBy, validUntil or version fields disagreed with the history their records give; docs/IMPORT_EXPORT.md, "Facts are imported as records").\n`,
      );
    }
    // The vectors of what was imported (recall by meaning), with progress.
    if (embedder)
      await embedWhatIsPending(database, embedder, (line) => process.stderr.write(`${line}\n`));
    if (embedded) await reportEmbeddedSize(db, (line) => process.stdout.write(`${line}\n`));
  },
  { embeddings: true },
);
