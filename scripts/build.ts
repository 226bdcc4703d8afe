import { cpSync, rmSync } from 'node:fs';
import { build } from 'esbuild';
import { parseCommandLine } from '../src/cli/help.js';
import { buildExplorer } from './buildExplorer.ts';

/**
 * `npm run build` (and `npm start`, before it runs): compiles src/ to plain JavaScript in
 * dist/, file by file, so the server runs on Node alone. Running the TypeScript through
 * tsx's loader instead costs a loader thread and about 37 MB of resident memory. dist/
 * sits beside src/ at the same depth, so paths relative to the repository (embedded-db/)
 * stay the same; the demo data file is copied along. The memory explorer's browser bundle
 * is built beside it (scripts/buildExplorer.ts). It takes no options.
 */
parseCommandLine(import.meta.url, { options: {} });
const ROOT = new URL('../', import.meta.url);
const at = (path: string) => new URL(path, ROOT).pathname;

rmSync(at('dist'), { recursive: true, force: true });
await build({
  entryPoints: [at('src/**/*.ts')],
  outdir: at('dist'),
  outbase: at('src'),
  platform: 'node',
  format: 'esm',
  target: 'node20',
  logLevel: 'warning',
});
cpSync(at('src/demo/user_42.jsonl'), at('dist/demo/user_42.jsonl'));
await buildExplorer();
