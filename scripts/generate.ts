import { spawnSync } from 'node:child_process';
import { parseCommandLine } from '../src/cli/help.js';

/**
 * `npm run generate`: `npm run schema` (prints schema.graphql sorted), then `npm run codegen`
 * (the typed operation documents), in that order: codegen reads the printed schema. Its
 * own script so that `--help` and a wrong option stop it before either step writes.
 */
parseCommandLine(import.meta.url, { options: {} });

for (const script of ['scripts/print-schema.ts', 'scripts/codegen.ts']) {
  const run = spawnSync(process.execPath, ['--import', 'tsx', script], { stdio: 'inherit' });
  if (run.status !== 0) process.exit(run.status ?? 1);
}
