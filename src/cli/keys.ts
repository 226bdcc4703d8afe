import { z } from 'zod';
import { systemClock } from '../clock.js';
import { keyNameSchema, parseScopes } from '../domain/apiKey.js';
import { INSTANT_FORMAT, parseInstant } from '../domain/time.js';
import { createApiKey, listApiKeys, revokeApiKey } from '../store/workspaces.js';
import { exitWithUsage, parseCommandLine } from './help.js';
import { runCommand, UsageError } from './run.js';

const USAGE = `Usage:
  npm run keys -- create --workspace NAME --scopes read,write[,admin]
                         [--name NAME] [--expires WHEN] [--json]
  npm run keys -- list [--workspace NAME] [--json]
  npm run keys -- revoke KEY_ID_OR_KEY

WHEN: when the key stops working, ${INSTANT_FORMAT}, in the future.
Without --expires the key never expires.`;

/** The options each command reads: any other is refused rather than silently ignored. */
const COMMANDS: Record<string, { options: string[]; arguments: number }> = {
  create: { options: ['workspace', 'scopes', 'name', 'expires', 'json'], arguments: 0 },
  list: { options: ['workspace', 'json'], arguments: 0 },
  revoke: { options: [], arguments: 1 },
};
// The same rules as createApiKey's in GraphQL: a name by its keyNameSchema, an expiry an
// instant as its DateTime scalar reads one (parseInstant), later than now.
const keyExpiry = (now: Date) =>
  z.string().transform((value, ctx) => {
    const at = parseInstant(value);
    if (!at) {
      ctx.addIssue({ code: 'custom', message: `"${value}" is not ${INSTANT_FORMAT}` });
      return z.NEVER;
    }
    if (at <= now) {
      ctx.addIssue({
        code: 'custom',
        message: `"${value}" is not in the future (now is ${now.toISOString()})`,
      });
      return z.NEVER;
    }
    return at;
  });

function refuse(problem: string): never {
  return exitWithUsage(problem, import.meta.url, USAGE);
}

/** One option's value through its schema, or the command refused naming the option. */
function checked<Out>(option: string, schema: z.ZodType<Out, string>, value: string): Out {
  const result = schema.safeParse(value);
  return result.success ? result.data : refuse(`--${option}: ${result.error.issues[0]!.message}.`);
}

const { positionals, values } = parseCommandLine(
  import.meta.url,
  {
    allowPositionals: true,
    options: {
      workspace: { type: 'string' },
      scopes: { type: 'string' },
      name: { type: 'string' },
      expires: { type: 'string' },
      json: { type: 'boolean' },
    },
  },
  USAGE,
);

// Everything the command line decides is checked here, before a store is opened.
const [command, ...rest] = positionals;
if (command === undefined) refuse('Name a command: create, list or revoke.');
const accepted = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
if (!accepted) refuse(`Unknown command '${command}'.`);
for (const option of Object.keys(values)) {
  if (!accepted.options.includes(option))
    refuse(`The ${command} command takes no option '--${option}'.`);
}
if (rest.length > accepted.arguments) refuse(`Unexpected argument '${rest[accepted.arguments]}'.`);

/** The key `create` makes, read from its options. */
function keyToCreate(now: Date) {
  if (!values.workspace) refuse('--workspace is required.');
  const scopes = parseScopes(values.scopes ?? '');
  if (typeof scopes === 'string') refuse(`--scopes: ${scopes}.`);
  return {
    workspace: values.workspace,
    scopes,
    now,
    name: values.name === undefined ? null : checked('name', keyNameSchema, values.name),
    expiresAt:
      values.expires === undefined ? null : checked('expires', keyExpiry(now), values.expires),
  };
}

const create = command === 'create' ? keyToCreate(systemClock()) : null;
if (command === 'revoke' && !rest[0]) refuse('revoke needs a key id.');

await runCommand(async ({ database }) => {
  const db = database.collections;
  if (create) {
    const { workspace, scopes, now, name, expiresAt } = create;
    const created = await createApiKey(db, workspace, scopes, now, { name, expiresAt });
    if (values.json) {
      const { workspaceId, key } = created;
      const expires = expiresAt?.toISOString() ?? null;
      process.stdout.write(
        `${JSON.stringify({ workspaceId, workspace: created.workspace, key, scopes, name, expiresAt: expires })}\n`,
      );
    } else {
      const named = name === null ? '' : `, named "${name}"`;
      const expiry = expiresAt ? `expiring ${expiresAt.toISOString()}` : 'never expiring';
      process.stdout.write(
        `Created a key for workspace "${created.workspace}" (${created.workspaceId}) with scopes ${scopes.join(',')}${named}, ${expiry}.\n` +
          `Key id: ${created.keyId}\n` +
          `Key (shown once, store it now): ${created.key}\n`,
      );
    }
    return;
  }
  if (command === 'list') {
    const keys = await listApiKeys(db, values.workspace);
    if (values.json) {
      process.stdout.write(`${JSON.stringify(keys)}\n`);
      return;
    }
    const now = systemClock();
    for (const k of keys) {
      const status = k.revokedAt
        ? `revoked ${k.revokedAt.toISOString()}`
        : k.expiresAt && k.expiresAt <= now
          ? `expired ${k.expiresAt.toISOString()}`
          : k.expiresAt
            ? `active, expires ${k.expiresAt.toISOString()}`
            : 'active, never expires';
      const name = k.name ? `  "${k.name}"` : '';
      process.stdout.write(
        `${k.keyId}  ${k.workspace}${name}  ${k.scopes.join(',')}  created ${k.createdAt.toISOString()}  ${status}\n`,
      );
    }
    if (keys.length === 0) process.stdout.write('No keys.\n');
    return;
  }
  const id = rest[0]!;
  const revoked = await revokeApiKey(db, id);
  if (revoked.outcome === 'not found') throw new UsageError(`No key with id ${id}.`);
  if (revoked.outcome === 'already revoked') {
    throw new UsageError(`Key ${id} was already revoked (${revoked.revokedAt.toISOString()}).`);
  }
  process.stdout.write(`Revoked ${id}.\n`);
});
