/**
 * `npm start`: builds dist/ (scripts/build.ts), then serves the gateway from it
 * (dist/main.js) in this same process, so signals reach the server. Plain JavaScript, so
 * it runs on Node alone. The gateway takes no command-line options: with any argument
 * (`--help`, or one it does not know) the gateway's own entry answers it, before anything
 * is built or opened.
 */
import { spawnSync } from 'node:child_process';

const ROOT = new URL('../', import.meta.url);
const node = (...args) =>
  spawnSync(process.execPath, args, { cwd: ROOT, stdio: 'inherit' }).status ?? 1;

const args = process.argv.slice(2);
if (args.length > 0) process.exit(node('--import', 'tsx', 'src/main.ts', ...args));
const built = node('--import', 'tsx', 'scripts/build.ts');
if (built !== 0) process.exit(built);
await import(new URL('dist/main.js', ROOT).href);
