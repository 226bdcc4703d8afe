import { randomBytes } from 'node:crypto';
import type { MongoClientOptions } from 'mongodb';
import { afterAll, inject } from 'vitest';
import { type Database, openDatabase } from '../../src/store/database.js';

/** The test run's database server (FerretDB, or MONGODB_URI when set). */
export function testServerUri(): string {
  return inject('mongodbUri');
}

/**
 * Databases this test file opened, dropped and closed when its tests finish. The hook is
 * registered here, while the file is collected: one registered later, from inside a
 * beforeAll, would never run.
 */
const opened: Database[] = [];
afterAll(async () => {
  for (const database of opened.splice(0)) {
    await database.db.dropDatabase().catch(() => {});
    await database.close();
  }
});

/**
 * A fresh database of this test file's own, with the store's indexes; dropped when the
 * file's tests finish.
 */
export async function openTestDatabase(options: MongoClientOptions = {}): Promise<Database> {
  const name = `test_${randomBytes(6).toString('hex')}`;
  const database = await openDatabase(testServerUri(), name, options);
  opened.push(database);
  return database;
}
