import { randomBytes } from 'node:crypto';
import type { MongoClientOptions } from 'mongodb';
import { afterAll, inject } from 'vitest';
import { type Database, openDatabase } from '../../src/store/database.js';

/** The test run's database server (FerretDB, or MONGODB_URI when set). */
export function testServerUri(): string {
  return inject('mongodbUri');
}

/**
 * A fresh database of this test file's own, with the store's indexes; dropped when the
 * file's tests finish.
 */
export async function openTestDatabase(options: MongoClientOptions = {}): Promise<Database> {
  const name = `test_${randomBytes(6).toString('hex')}`;
  const database = await openDatabase(testServerUri(), name, options);
  afterAll(async () => {
    await database.db.dropDatabase().catch(() => {});
    await database.close();
  });
  return database;
}
