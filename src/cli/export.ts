import { exportDocuments } from '../store/exportDocuments.js';
import { findWorkspaceByName } from '../store/workspaces.js';
import { exportLine } from '../transfer/format.js';
import { exitWithUsage, parseCommandLine } from './help.js';
import { runCommand, UsageError } from './run.js';

const USAGE = 'Usage: npm run export -- --workspace NAME [--dataset NAME] > FILE.jsonl';

const { values } = parseCommandLine(
  import.meta.url,
  { options: { workspace: { type: 'string' }, dataset: { type: 'string' } } },
  USAGE,
);
// Refused before the store is opened (an embedded one would be started for nothing).
if (!values.workspace) exitWithUsage('--workspace is required.', import.meta.url, USAGE);
const name = values.workspace;

await runCommand(async ({ database }) => {
  const workspace = await findWorkspaceByName(database.collections, name);
  if (!workspace) throw new UsageError(`No workspace named "${name}".`);
  for await (const item of exportDocuments(database.collections, workspace._id, values.dataset)) {
    if (!process.stdout.write(`${JSON.stringify(exportLine(item))}\n`)) {
      await new Promise((r) => process.stdout.once('drain', r));
    }
  }
});
