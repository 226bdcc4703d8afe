import { parseArgs } from 'node:util';
import { systemClock } from '../clock.js';
import { parseScopes } from '../domain/apiKey.js';
import { createApiKey, listApiKeys, revokeApiKey } from '../store/workspaces.js';
import { exitOnHelp } from './help.js';
import { runCommand, UsageError } from './run.js';

const USAGE = `Usage:
  npm run keys -- create --workspace NAME --scopes read,write[,admin] [--json]
  npm run keys -- list [--workspace NAME] [--json]
  npm run keys -- revoke KEY_ID_OR_KEY`;

exitOnHelp(import.meta.url, USAGE);

await runCommand(async ({ database }) => {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: {
      workspace: { type: 'string' },
      scopes: { type: 'string' },
      json: { type: 'boolean', default: false },
    },
  });
  const [command, ...rest] = positionals;
  const db = database.collections;
  switch (command) {
    case 'create': {
      if (!values.workspace) throw new UsageError(`--workspace is required.\n${USAGE}`);
      const scopes = parseScopes(values.scopes ?? '');
      if (typeof scopes === 'string') throw new UsageError(`--scopes: ${scopes}.\n${USAGE}`);
      const created = await createApiKey(db, values.workspace, scopes);
      if (values.json) {
        const { workspaceId, workspace, key } = created;
        process.stdout.write(`${JSON.stringify({ workspaceId, workspace, key, scopes })}\n`);
      } else {
        process.stdout.write(
          `Created a key for workspace "${created.workspace}" (${created.workspaceId}) with scopes ${scopes.join(',')}.\n` +
            `Key id: ${created.keyId}\n` +
            `Key (shown once, store it now): ${created.key}\n`,
        );
      }
      return;
    }
    case 'list': {
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
            : 'active';
        const name = k.name ? `  "${k.name}"` : '';
        process.stdout.write(
          `${k.keyId}  ${k.workspace}${name}  ${k.scopes.join(',')}  created ${k.createdAt.toISOString()}  ${status}\n`,
        );
      }
      if (keys.length === 0) process.stdout.write('No keys.\n');
      return;
    }
    case 'revoke': {
      const [id] = rest;
      if (!id) throw new UsageError(`revoke needs a key id.\n${USAGE}`);
      const revoked = await revokeApiKey(db, id);
      if (revoked.outcome === 'not found') throw new UsageError(`No key with id ${id}.`);
      if (revoked.outcome === 'already revoked') {
        throw new UsageError(`Key ${id} was already revoked (${revoked.revokedAt.toISOString()}).`);
      }
      process.stdout.write(`Revoked ${id}.\n`);
      return;
    }
    default:
      throw new UsageError(USAGE);
  }
});
