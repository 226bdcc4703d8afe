import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { systemClock } from '../clock.js';
import { importJsonl } from '../transfer/importJsonl.js';
import { runCommand, UsageError } from './run.js';

const USAGE = 'Usage: npm run import -- FILE.jsonl --workspace NAME [--dataset NAME]';

await runCommand(async ({ database }) => {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: { workspace: { type: 'string' }, dataset: { type: 'string' } },
  });
  const [file] = positionals;
  if (!file || !values.workspace) throw new UsageError(USAGE);
  let content: string;
  try {
    content = await readFile(file, 'utf8');
  } catch (error) {
    throw new UsageError(`Cannot read ${file}: ${(error as Error).message}`);
  }
  const c = database.collections;
  // One instant for the whole import: every record written carries it.
  const now = systemClock();
  const tty = process.stderr.isTTY;
  const outcome = await importJsonl(c, {
    workspace: values.workspace,
    content,
    defaultDataset: values.dataset ?? null,
    now,
    ...(tty
      ? {
          onProgress: (done: number, total: number) =>
            process.stderr.write(`\rImporting ${done}/${total}...`),
        }
      : {}),
  });
  if (tty) process.stderr.write('\n');
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
    `Imported into workspace "${values.workspace}": ${counts.entities} new entities, ${counts.episodes} new episodes, ${counts.facts} new facts, ${counts.memories} new memories (${outcome.records} records read).\n`,
  );
});
