import { parseArgs } from 'node:util';
import { exportDocuments } from '../store/bulk.js';
import { findWorkspaceByName } from '../store/workspaces.js';
import { entityToLine, episodeToLine, factToLine, memoryToLine } from '../transfer/format.js';
import { runCommand, UsageError } from './run.js';

const USAGE = 'Usage: npm run export -- --workspace NAME [--dataset NAME] > FILE.jsonl';

await runCommand(async ({ database }) => {
  const { values } = parseArgs({
    options: { workspace: { type: 'string' }, dataset: { type: 'string' } },
  });
  if (!values.workspace) throw new UsageError(USAGE);
  const workspace = await findWorkspaceByName(database.collections, values.workspace);
  if (!workspace) throw new UsageError(`No workspace named "${values.workspace}".`);
  for await (const item of exportDocuments(database.collections, workspace._id, values.dataset)) {
    const line =
      item.kind === 'entity'
        ? entityToLine(item.doc)
        : item.kind === 'episode'
          ? episodeToLine(item.doc)
          : item.kind === 'fact'
            ? factToLine(item.doc)
            : memoryToLine(item.doc);
    if (!process.stdout.write(`${JSON.stringify(line)}\n`)) {
      await new Promise((r) => process.stdout.once('drain', r));
    }
  }
});
