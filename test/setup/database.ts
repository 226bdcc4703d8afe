import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { type RunningFerretDb, startFerretDb } from '../../src/embedded/ferretdb.js';

/**
 * One database server per test run: MONGODB_URI when set (a real MongoDB), otherwise a
 * FerretDB on a free loopback port with its files in a temporary folder. Each test file
 * then uses a database of its own (test/helpers/database.ts). Also the run's folder where
 * test processes record the store's commands for the index check (test/indexes/).
 */
declare module 'vitest' {
  export interface ProvidedContext {
    mongodbUri: string;
    storeCommandsDir: string;
  }
}

let ferret: RunningFerretDb | null = null;
const dirs: string[] = [];

export async function setup(project: TestProject): Promise<void> {
  const commands = mkdtempSync(join(tmpdir(), 'memory-gateway-store-commands-'));
  dirs.push(commands);
  project.provide('storeCommandsDir', commands);
  if (process.env.MONGODB_URI) {
    project.provide('mongodbUri', process.env.MONGODB_URI);
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'memory-gateway-test-'));
  dirs.push(dir);
  ferret = await startFerretDb(dir, (line) => process.stderr.write(`${line}\n`));
  project.provide('mongodbUri', ferret.uri);
}

export async function teardown(): Promise<void> {
  await ferret?.stop();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}
