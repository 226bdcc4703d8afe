import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * `--help` (or `-h`) for every command and bench script: prints its usage and exits 0,
 * before it opens a store or starts anything. The usage is the one given, or the script's
 * own leading doc comment (where each bench script describes itself and its options).
 */
export function exitOnHelp(moduleUrl: string, usage?: string): void {
  const args = process.argv.slice(2);
  if (!args.includes('--help') && !args.includes('-h')) return;
  process.stdout.write(`${usage ?? docCommentOf(moduleUrl)}\n`);
  process.exit(0);
}

/** The first doc comment of a source file that names its npm command, as plain text. */
function docCommentOf(moduleUrl: string): string {
  const source = readFileSync(fileURLToPath(moduleUrl), 'utf8');
  const comments = [...source.matchAll(/\/\*\*([\s\S]*?)\*\//g)].map((m) =>
    m[1]!
      .split('\n')
      .map((line) => line.replace(/^\s*\* ?/, ''))
      .join('\n')
      .trim(),
  );
  return comments.find((c) => c.includes('npm run')) ?? comments[0] ?? 'No usage written.';
}
