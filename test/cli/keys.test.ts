import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseApiKey } from '../../src/domain/apiKey.js';
import { type Database, openDatabase } from '../../src/store/database.js';
import { authenticateApiKey, workspaceIdFor } from '../../src/store/workspaces.js';
import { testServerUri } from '../helpers/database.js';

/**
 * `npm run keys` as a user runs it: a child process (tsx) against the test server, with
 * MONGODB_URI and this file's own MONGODB_DB. Results are checked in that same database.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
// As the npm scripts run them: one Node process with tsx's loader.
const TSX = ['--import', 'tsx'];
const DB_NAME = `test_cli_keys_${randomBytes(6).toString('hex')}`;

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

let dataDir: string;
let database: Database;

function keys(...args: string[]): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [...TSX, 'src/cli/keys.ts', ...args],
      {
        cwd: ROOT,
        encoding: 'utf8',
        timeout: 60_000,
        env: {
          ...process.env,
          MONGODB_URI: testServerUri(),
          MONGODB_DB: DB_NAME,
          DATA_DIR: dataDir,
          PORT: '',
          HOST: '',
          LOG_LEVEL: '',
        },
      },
      (error, stdout, stderr) => {
        if (error && typeof error.code !== 'number') reject(error);
        // Every command says first which store it opened (checked in keys.test.ts).
        else
          resolve({
            code: error ? (error.code as number) : 0,
            stdout,
            stderr: stderr.replace(/^Store: .*\n/, ''),
          });
      },
    );
  });
}

/** An expected failure: one message (no stack trace), nothing on stdout. */
function expectOneMessage(result: CliResult, code: number, message: string | RegExp): void {
  expect(result.code, result.stderr).toBe(code);
  expect(result.stdout).toBe('');
  if (typeof message === 'string') expect(result.stderr).toContain(message);
  else expect(result.stderr).toMatch(message);
  expect(result.stderr).not.toMatch(/^\s+at /m);
  expect(result.stderr).not.toMatch(/Error[:\s[]/);
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'keys-cli-test-'));
  database = await openDatabase(testServerUri(), DB_NAME);
});

afterAll(async () => {
  await database?.db.dropDatabase().catch(() => {});
  await database?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe('npm run keys', () => {
  let created: { workspaceId: string; workspace: string; key: string; scopes: string[] };

  it('create --json prints exactly one JSON object, and the key authenticates', async () => {
    const result = await keys(
      'create',
      '--workspace',
      'team ü/1',
      '--scopes',
      'read, write,read',
      '--json',
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toBe('');
    expect(result.stdout.endsWith('\n')).toBe(true);
    expect(result.stdout.trimEnd().split('\n')).toHaveLength(1);
    created = JSON.parse(result.stdout);
    expect(Object.keys(created)).toEqual([
      'workspaceId',
      'workspace',
      'key',
      'scopes',
      'name',
      'expiresAt',
    ]);
    expect(created).toEqual({
      workspaceId: workspaceIdFor('team ü/1'),
      workspace: 'team ü/1',
      key: expect.stringMatching(/^mk_[0-9a-f]{24}_[A-Za-z0-9_-]{43}$/),
      scopes: ['read', 'write'],
      name: null,
      expiresAt: null,
    });

    const db = database.collections;
    expect(await authenticateApiKey(db, created.key)).toEqual({
      keyId: parseApiKey(created.key)!.keyId,
      workspaceId: created.workspaceId,
      workspace: 'team ü/1',
      scopes: ['read', 'write'],
      expiresAt: null,
    });
    expect(await db.workspaces.countDocuments({})).toBe(1);
    const stored = JSON.stringify(await db.apiKeys.find({}).toArray());
    expect(stored).not.toContain(parseApiKey(created.key)!.secret);
  });

  it('list --json shows the key without its secret', async () => {
    const { keyId, secret } = parseApiKey(created.key)!;
    const result = await keys('list', '--workspace', 'team ü/1', '--json');
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.trimEnd().split('\n')).toHaveLength(1);
    const listed = JSON.parse(result.stdout) as Record<string, unknown>[];
    expect(listed).toHaveLength(1);
    expect(listed[0]).toEqual({
      keyId,
      workspace: 'team ü/1',
      workspaceId: created.workspaceId,
      name: null,
      scopes: ['read', 'write'],
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      expiresAt: null,
      revokedAt: null,
      lastUsedAt: null,
      createdBy: null,
    });
    expect(result.stdout).not.toContain(secret);
    expect(result.stdout).not.toContain(created.key);
    expect(result.stdout).not.toMatch(/secret|hash/i);
  });

  it('revoke KEY_ID revokes the key; revoking it again fails with one message', async () => {
    const { keyId } = parseApiKey(created.key)!;
    const result = await keys('revoke', keyId);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe(`Revoked ${keyId}.\n`);
    expect(await authenticateApiKey(database.collections, created.key)).toBeNull();
    const stored = await database.collections.apiKeys.findOne({ _id: keyId });
    expect(stored?.revokedAt).toBeInstanceOf(Date);

    expectOneMessage(
      await keys('revoke', keyId),
      2,
      `Key ${keyId} was already revoked (${stored!.revokedAt!.toISOString()}).`,
    );
    expect((await database.collections.apiKeys.findOne({ _id: keyId }))?.revokedAt).toEqual(
      stored!.revokedAt,
    );
  });

  it('bad input exits non-zero with one clear message and writes nothing', async () => {
    const before = {
      workspaces: await database.collections.workspaces.countDocuments({}),
      apiKeys: await database.collections.apiKeys.countDocuments({}),
    };
    const [badScope, noWorkspace, noValue] = await Promise.all([
      keys('create', '--workspace', 'other', '--scopes', 'read,fly', '--json'),
      keys('create', '--scopes', 'read', '--json'),
      keys('create', '--scopes', 'read', '--workspace'),
    ]);
    expectOneMessage(badScope!, 2, '--scopes: unknown scope fly (known: read, write, admin).');
    expectOneMessage(noWorkspace!, 2, '--workspace is required.');
    expect(noWorkspace!.stderr).toContain('Usage:');
    expect(noWorkspace!.stderr).toContain('create --workspace NAME --scopes read,write[,admin]');
    // A flag without its value is a usage problem too, not a stack trace.
    expectOneMessage(noValue!, 2, "Option '--workspace' needs a value.");

    expect(await database.collections.workspaces.countDocuments({})).toBe(before.workspaces);
    expect(await database.collections.apiKeys.countDocuments({})).toBe(before.apiKeys);
    expect(await database.collections.workspaces.findOne({ name: 'other' })).toBeNull();
  });
});

describe('npm run keys -- create --name --expires', () => {
  it('makes a named key that expires, as createApiKey in GraphQL does; list shows both', async () => {
    const made = await keys(
      'create',
      '--workspace',
      'expiring',
      '--scopes',
      'read',
      '--name',
      '  deploy bot ',
      '--expires',
      '2031-06-01T12:00:00+02:00',
      '--json',
    );
    expect(made.code, made.stderr).toBe(0);
    const created = JSON.parse(made.stdout);
    expect(created).toMatchObject({
      workspace: 'expiring',
      scopes: ['read'],
      name: 'deploy bot',
      expiresAt: '2031-06-01T10:00:00.000Z',
    });
    const { keyId } = parseApiKey(created.key)!;
    const stored = await database.collections.apiKeys.findOne({ _id: keyId });
    expect(stored).toMatchObject({
      name: 'deploy bot',
      expiresAt: new Date('2031-06-01T10:00:00.000Z'),
      createdBy: null,
    });
    // The audit log has it as the API's keys have theirs.
    expect(await database.collections.keyEvents.findOne({ _id: `created:${keyId}` })).toMatchObject(
      { action: 'created', name: 'deploy bot', expiresAt: new Date('2031-06-01T10:00:00.000Z') },
    );
    expect((await authenticateApiKey(database.collections, created.key))?.expiresAt).toEqual(
      new Date('2031-06-01T10:00:00.000Z'),
    );

    // A date alone is 00:00:00Z of that day; without --json the answer says both.
    const dated = await keys(
      'create',
      '--workspace',
      'expiring',
      '--scopes',
      'read,write',
      '--name',
      'nightly',
      '--expires',
      '2030-01-01',
    );
    expect(dated.code, dated.stderr).toBe(0);
    expect(dated.stdout.split('\n')[0]).toBe(
      `Created a key for workspace "expiring" (${workspaceIdFor('expiring')}) with scopes read,write, named "nightly", expiring 2030-01-01T00:00:00.000Z.`,
    );

    const listed = await keys('list', '--workspace', 'expiring');
    expect(listed.code, listed.stderr).toBe(0);
    const lines = listed.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines.find((l) => l.startsWith(keyId))).toMatch(
      /^[0-9a-f]{24} {2}expiring {2}"deploy bot" {2}read {2}created \S+ {2}active, expires 2031-06-01T10:00:00\.000Z$/,
    );
    expect(lines.find((l) => !l.startsWith(keyId))).toMatch(
      /"nightly" {2}read,write {2}created \S+ {2}active, expires 2030-01-01T00:00:00\.000Z$/,
    );
    const json = JSON.parse((await keys('list', '--workspace', 'expiring', '--json')).stdout);
    expect(json.find((k: { keyId: string }) => k.keyId === keyId)).toMatchObject({
      name: 'deploy bot',
      expiresAt: '2031-06-01T10:00:00.000Z',
    });
  });

  it('refuses an expiry that is not an instant or not in the future, and an empty name, writing nothing', async () => {
    const before = await database.collections.apiKeys.countDocuments({});
    const create = (...more: string[]) =>
      keys('create', '--workspace', 'refused', '--scopes', 'read', ...more);
    const [year, past, impossible, noZone, blank] = await Promise.all([
      create('--expires', '2030'),
      create('--expires', '2020-01-01'),
      create('--expires', '2030-02-30'),
      create('--expires', '2030-01-01T12:00:00'),
      create('--name', '   '),
    ]);
    const allowed =
      'an ISO 8601 date (2026-06-01, meaning 00:00:00Z) or date-time with a zone (2026-06-01T12:00:00Z)';
    for (const [result, line] of [
      [year, `--expires: "2030" is not ${allowed}.`],
      [impossible, `--expires: "2030-02-30" is not ${allowed}.`],
      [noZone, `--expires: "2030-01-01T12:00:00" is not ${allowed}.`],
      [past, /^--expires: "2020-01-01" is not in the future \(now is \S+Z\)\.$/],
      [blank, '--name: must not be empty.'],
    ] as const) {
      expectOneMessage(result!, 2, 'Usage:');
      const first = result!.stderr.split('\n')[0]!;
      if (typeof line === 'string') expect(first).toBe(line);
      else expect(first).toMatch(line);
    }
    expect(await database.collections.apiKeys.countDocuments({})).toBe(before);
    expect(await database.collections.workspaces.findOne({ name: 'refused' })).toBeNull();
  });
});

describe('what every command says', () => {
  it('names the store it opened, first, on stderr (stdout stays the answer)', async () => {
    const result = await new Promise<{ stdout: string; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        [...TSX, 'src/cli/keys.ts', 'list', '--json'],
        {
          cwd: ROOT,
          encoding: 'utf8',
          env: {
            ...process.env,
            MONGODB_URI: testServerUri(),
            MONGODB_DB: DB_NAME,
            DATA_DIR: dataDir,
          },
        },
        (_error, stdout, stderr) => resolve({ stdout, stderr }),
      );
    });
    expect(result.stderr.split('\n')[0]).toBe(
      `Store: MongoDB (MONGODB_URI), database "${DB_NAME}".`,
    );
    expect(() => JSON.parse(result.stdout)).not.toThrow();
  });

  // The npm scripts' own files are checked in test/cli/help.test.ts; these run unlisted.
  it.each(['bench/baseline.ts', 'bench/generate.ts', 'scripts/buildExplorer.ts'])(
    '%s --help prints its usage and exits 0, opening nothing',
    async (script) => {
      for (const flag of ['--help', '-h']) {
        const result = await new Promise<{ code: number; stdout: string; stderr: string }>(
          (resolve) => {
            execFile(
              process.execPath,
              [...TSX, script, flag],
              {
                cwd: ROOT,
                encoding: 'utf8',
                timeout: 30_000,
                env: { ...process.env, DATA_DIR: dataDir },
              },
              (error, stdout, stderr) =>
                resolve({ code: error ? (error.code as number) : 0, stdout, stderr }),
            );
          },
        );
        expect(result.code, result.stderr).toBe(0);
        expect(result.stdout).toMatch(/npm run|Usage|baseline/);
        expect(result.stderr).not.toMatch(/^Store:/m);
      }
    },
  );
});
