import { randomBytes } from 'node:crypto';
import type { Db, Document, MongoClientOptions } from 'mongodb';
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

/** Every document of every collection of a database, in `_id` order: for "nothing changed". */
export async function everyDocument(db: Db): Promise<Record<string, Document[]>> {
  const names = (await db.listCollections({}, { nameOnly: true }).toArray())
    .map((c) => c.name)
    .sort();
  const out: Record<string, Document[]> = {};
  for (const name of names) {
    out[name] = await db.collection(name).find({}).sort({ _id: 1 }).toArray();
  }
  return out;
}
