import { parseArgs } from 'node:util';
import { exportDocuments } from '../store/exportDocuments.js';
import { findWorkspaceByName } from '../store/workspaces.js';
import { exportLine } from '../transfer/format.js';
import { exitOnHelp } from './help.js';
import { runCommand, UsageError } from './run.js';

const USAGE = 'Usage: npm run export -- --workspace NAME [--dataset NAME] > FILE.jsonl';

exitOnHelp(import.meta.url, USAGE);

await runCommand(async ({ database }) => {
  const { values } = parseArgs({
    options: { workspace: { type: 'string' }, dataset: { type: 'string' } },
  });
  if (!values.workspace) throw new UsageError(USAGE);
  const workspace = await findWorkspaceByName(database.collections, values.workspace);
  if (!workspace) throw new UsageError(`No workspace named "${values.workspace}".`);
  for await (const item of exportDocuments(database.collections, workspace._id, values.dataset)) {
    if (!process.stdout.write(`${JSON.stringify(exportLine(item))}\n`)) {
      await new Promise((r) => process.stdout.once('drain', r));
    }
  }
});
