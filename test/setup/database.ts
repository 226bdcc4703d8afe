import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { type RunningFerretDb, startFerretDb } from '../../src/embedded/ferretdb.js';

/**
 * One database server per test run: MONGODB_URI when set (a real MongoDB), otherwise a
 * FerretDB on a free loopback port with its files in a temporary folder. Each test file
 * then uses a database of its own (test/helpers/database.ts).
 */
declare module 'vitest' {
  export interface ProvidedContext {
    mongodbUri: string;
  }
}

let ferret: RunningFerretDb | null = null;
let dir: string | null = null;

export async function setup(project: TestProject): Promise<void> {
  if (process.env.MONGODB_URI) {
    project.provide('mongodbUri', process.env.MONGODB_URI);
    return;
  }
  dir = mkdtempSync(join(tmpdir(), 'memory-gateway-test-'));
  ferret = await startFerretDb(dir, (line) => process.stderr.write(`${line}\n`));
  project.provide('mongodbUri', ferret.uri);
}

export async function teardown(): Promise<void> {
  await ferret?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
}
