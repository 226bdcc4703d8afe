import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDemoDataset } from '../../src/demo/seed.js';
import { type RunningFerretDb, startFerretDb } from '../../src/embedded/ferretdb.js';
import { createGateway } from '../../src/http/app.js';
import { type Database, databaseTimeouts, openDatabase } from '../../src/store/database.js';
import { createApiKey } from '../../src/store/workspaces.js';
import { testServerUri } from '../helpers/database.js';
import { spawnGateway } from '../helpers/spawnGateway.js';

/**
 * Rate limits shared through the database every replica uses (RATE_LIMIT_STORE=database):
 * two gateway processes on one database allow the configured rate together, where
 * per-process limits allow it each. While the database does not answer, each process
 * counts alone at the same rate (the limit holds per process; no request is refused for
 * the outage alone, none escapes a limit).
 */

const children: ChildProcess[] = [];

afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
});

async function twoGateways(store: 'database' | 'process', dbName: string) {
  const env = {
    MONGODB_URI: testServerUri(),
    MONGODB_DB: dbName,
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    RATE_LIMIT_PER_MINUTE: '6',
    RATE_LIMIT_PER_ADDRESS_PER_MINUTE: '0',
    RATE_LIMIT_STORE: store,
    // A count the database answers later than this is counted by the process alone, which
    // would shift the shared counts below: generous, as a loaded machine can be slow.
    RATE_LIMIT_STORE_TIMEOUT_MS: '5000',
  };
  const [a, b] = await Promise.all([spawnGateway(env), spawnGateway(env)]);
  children.push(a.child, b.child);
  return [a.port, b.port];
}

describe('rate limits across replicas', () => {
  it('two processes on one database share one limit per key (and per-process limits do not)', async () => {
    const dbName = `limits_${randomUUID().replaceAll('-', '')}`;
    const database = await openDatabase(testServerUri(), dbName);
    await loadDemoDataset(database.collections, 'acme', new Date());
    const { key } = await createApiKey(database.collections, 'acme', ['read']);
    const { key: other } = await createApiKey(database.collections, 'acme', ['read']);
    await database.close();
    const statuses = async (ports: number[], key: string) => {
      const out: number[] = [];
      // One at a time, alternating between the processes.
      for (let i = 0; i < 10; i++) {
        const response = await fetch(
          `http://127.0.0.1:${ports[i % 2]}/v1/memory/semantic/datasets/user_42/facts?limit=1`,
          { headers: { authorization: `Bearer ${key}` } },
        );
        await response.text();
        out.push(response.status);
      }
      return out;
    };
    const shared = await statuses(await twoGateways('database', dbName), key);
    expect(shared).toEqual([200, 200, 200, 200, 200, 200, 429, 429, 429, 429]);
    // The same requests against per-process limits: five to each, under each one's six.
    const separate = await statuses(await twoGateways('process', dbName), other);
    expect(separate).toEqual(Array(10).fill(200));
  }, 240_000);
});

describe('when the database does not answer', () => {
  /**
   * The database's bounds here: the driver's (DB_TIMEOUT_MS), the request's database time,
   * and the shared limit's wait for its count. Short enough that the outage is met fast;
   * not so short that a loaded machine misses one before the outage (the first request,
   * counted by the process instead of the database, would shift every count after it).
   */
  const DB_TIMEOUT_MS = 1000;
  const dir = mkdtempSync(join(tmpdir(), 'memory-gateway-limits-'));
  let ferret: RunningFerretDb;
  let database: Database;

  beforeAll(async () => {
    ferret = await startFerretDb(dir);
    database = await openDatabase(ferret.uri, 'limits', databaseTimeouts(DB_TIMEOUT_MS));
  });

  afterAll(async () => {
    await database?.close();
    await ferret?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('each process counts alone, at the same rate: the limit holds, nothing is refused for the outage alone', async () => {
    await loadDemoDataset(database.collections, 'acme', new Date());
    const { key } = await createApiKey(database.collections, 'acme', ['read']);
    const gateway = createGateway({
      database,
      rateLimitPerMinute: 3,
      rateLimitStore: 'database',
      rateLimitStoreTimeoutMs: DB_TIMEOUT_MS,
      // The key stays verified without the database.
      readCacheTtlMs: 60_000,
      dbTimeoutMs: DB_TIMEOUT_MS,
      keyUseFlushMs: 0,
    });
    const get = async () => {
      const response = await gateway.fetch(
        new Request('http://gateway.test/v1/memory/semantic/datasets/user_42/facts', {
          headers: { authorization: `Bearer ${key}` },
          signal: AbortSignal.timeout(15_000),
        }),
      );
      return { status: response.status, retryAfter: response.headers.get('retry-after') };
    };
    // Counted in the database: one of three.
    expect((await get()).status).toBe(200);
    expect(await database.collections.rateLimits.countDocuments({})).toBe(1);
    process.kill(ferret.pid, 'SIGSTOP');
    try {
      const during: { status: number; retryAfter: string | null }[] = [];
      for (let i = 0; i < 4; i++) during.push(await get());
      // Three pass the process's own limit (and meet the database's silence: 503); the
      // fourth is refused by it, as the shared limit would have refused it.
      expect(during.map((d) => d.status)).toEqual([503, 503, 503, 429]);
      expect(Number(during[3]!.retryAfter)).toBeGreaterThan(0);
    } finally {
      process.kill(ferret.pid, 'SIGCONT');
    }
  }, 120_000);
});
