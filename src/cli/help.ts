import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type ParseArgsConfig, parseArgs } from 'node:util';

/**
 * `--help` (or `-h`) for every command and bench script: prints its usage and exits 0,
 * before it opens a store or starts anything. The usage is the one given, or the script's
 * own leading doc comment (where each bench script describes itself and its options).
 */
function exitOnHelp(moduleUrl: string, usage?: string): void {
  const args = process.argv.slice(2);
  if (!args.includes('--help') && !args.includes('-h')) return;
  process.stdout.write(`${usage ?? docCommentOf(moduleUrl)}\n`);
  process.exit(0);
}

/** What a command line a script cannot run with gets: exit code 2, as the CLIs' UsageError. */
export const USAGE_EXIT_CODE = 2;

/**
 * Refuses a command line: one line naming what is wrong, then the usage, on stderr, and
 * exit code 2. Only for before a command has opened anything.
 */
export function exitWithUsage(problem: string, moduleUrl: string, usage?: string): never {
  process.stderr.write(`${problem}\n${usage ?? docCommentOf(moduleUrl)}\n`);
  process.exit(USAGE_EXIT_CODE);
}

/**
 * A command configured by environment variables (`npm start`): its name and the variables,
 * so an option named after one (`--port 5000`) is answered with the line that sets it.
 */
interface EnvironmentSettings {
  command: string;
  variables: readonly string[];
}

/**
 * The command line every script reads: `--help` first (exitOnHelp), then node:util
 * parseArgs, strictly. A command line it cannot read (an unknown option, an option without
 * its value, an argument the script takes none of) exits through exitWithUsage, with the
 * line naming it instead of parseArgs' own message.
 */
export function parseCommandLine<T extends ParseArgsConfig & { strict?: true }>(
  moduleUrl: string,
  config: T,
  usage?: string,
  settings?: EnvironmentSettings,
): ReturnType<typeof parseArgs<T>> {
  exitOnHelp(moduleUrl, usage);
  try {
    return parseArgs(config);
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    if (typeof code !== 'string' || !code.startsWith('ERR_PARSE_ARGS_')) throw error;
    exitWithUsage(commandLineProblem(config, (error as Error).message, settings), moduleUrl, usage);
  }
}

/**
 * The first thing parseArgs refused, in one line. Read again from parseArgs' tokens (not
 * its message, whose wording differs between Node versions and, for an unknown option,
 * carries a hint about `--` with unbalanced quotes).
 */
function commandLineProblem(
  config: ParseArgsConfig,
  fallback: string,
  settings: EnvironmentSettings | undefined,
): string {
  const options = config.options ?? {};
  const { tokens } = parseArgs({ ...config, strict: false, tokens: true, allowPositionals: true });
  for (const [at, token] of tokens.entries()) {
    if (token.kind === 'positional') {
      if (!config.allowPositionals) return `Unexpected argument '${token.value}'.`;
      continue;
    }
    if (token.kind !== 'option') continue;
    const declared = Object.hasOwn(options, token.name) ? options[token.name] : undefined;
    if (!declared) {
      const variable = token.name.toUpperCase().replaceAll('-', '_');
      if (!settings?.variables.includes(variable)) return `Unknown option '${token.rawName}'.`;
      // Undeclared, `--port 5000` reads as a flag and an argument: the argument is its value.
      const next = tokens[at + 1];
      const value = token.value ?? (next?.kind === 'positional' ? next.value : undefined);
      const setting = `${variable}=${value === undefined ? `<${token.name}>` : shellWord(value)}`;
      return `Unknown option '${token.rawName}': ${settings.command} takes its settings from the environment, as in ${setting} ${settings.command}`;
    }
    if (declared.type === 'boolean' && token.value !== undefined) {
      return `Option '${token.rawName}' takes no value.`;
    }
    if (declared.type === 'string') {
      if (token.value === undefined) return `Option '${token.rawName}' needs a value.`;
      // parseArgs does not take `--workspace --json` as a value; `--workspace=--json` it does.
      if (!token.inlineValue && token.value.startsWith('-')) {
        return `Option '${token.rawName}' needs a value (one starting with '-' is written ${token.rawName}=${token.value}).`;
      }
    }
  }
  return fallback.split('\n')[0]!;
}

/** A value as a shell reads it back: quoted unless every character is plain. */
function shellWord(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replaceAll("'", `'\\''`)}'`;
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
