import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDemoDataset } from '../../src/demo/seed.js';
import { type RunningFerretDb, startFerretDb } from '../../src/embedded/ferretdb.js';
import { createGateway } from '../../src/http/app.js';
import { type Database, databaseTimeouts, openDatabase } from '../../src/store/database.js';
import { createApiKey } from '../../src/store/workspaces.js';
import { clockFrom } from '../helpers/gateway.js';
import { until } from '../helpers/until.js';

/**
 * The database goes away under a steady load and comes back: requests fail fast with
 * 503 in each surface's shape (bounded by the driver's server-selection timeout, never
 * hanging), the process keeps serving /healthz, /readyz reports the outage, and requests
 * succeed again by themselves once the database is back on the same address.
 */
/** DB_TIMEOUT_MS as `npm start` hands it to the driver (databaseTimeouts), short. */
const DB_TIMEOUT_MS = 1000;
/**
 * How long one request may take while the database is gone or hung: it meets the driver's
 * bounds (server selection, the socket's: each DB_TIMEOUT_MS, plus a second for the
 * socket), a few times over for a loaded machine. Not a speed: a request that had no bound
 * would take until the database came back.
 */
const BOUNDED_MS = 15 * DB_TIMEOUT_MS;
/** Each test's own limit on a request, past any bound: one that hangs fails the test. */
const ABORT_MS = 2 * BOUNDED_MS;
/** How long the database may take to be usable again once it is back: generous. */
const RECOVERY_MS = 60_000;

const dir = mkdtempSync(join(tmpdir(), 'memory-gateway-outage-'));
let ferret: RunningFerretDb;
let database: Database;
let gateway: ReturnType<typeof createGateway>;
let key: string;

beforeAll(async () => {
  ferret = await startFerretDb(dir);
  // As `npm start` configures it (DB_TIMEOUT_MS), with a short bound.
  database = await openDatabase(ferret.uri, 'outage', databaseTimeouts(DB_TIMEOUT_MS));
  await loadDemoDataset(database.collections, 'acme', new Date());
  key = (await createApiKey(database.collections, 'acme', ['read'])).key;
  // The answers counted below are the demo's live facts on this date.
  gateway = createGateway({ database, clock: clockFrom('2026-12-01T00:00:00Z') });
});

afterAll(async () => {
  await database?.close();
  await ferret?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const request = (path: string, init: RequestInit = {}) =>
  gateway.fetch(
    new Request(`http://gateway.test${path}`, {
      ...init,
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        ...init.headers,
      },
      // A request that hangs fails the test instead of passing slowly.
      signal: AbortSignal.timeout(ABORT_MS),
    }),
  );

const rest = () => request('/v1/memory/semantic/datasets/user_42/facts');
const graphql = () =>
  request('/graphql', {
    method: 'POST',
    body: JSON.stringify({ query: '{ viewer { workspace } }' }),
  });
const supa = () => request('/api/memories');

/** Waits until a request is answered 200 again (the database back), then says so. */
async function recovered(): Promise<void> {
  await until(async () => (await rest()).status === 200, 'a request answered 200 again', {
    withinMs: RECOVERY_MS,
    everyMs: 500,
  });
}

describe('database outage', () => {
  it('fails fast with 503 while the database is gone, and recovers by itself', {
    timeout: 3 * RECOVERY_MS,
  }, async () => {
    // Steady load before: all fine.
    for (let i = 0; i < 5; i++) expect((await rest()).status).toBe(200);
    const port = new URL(ferret.uri).port;

    // Under load, the database goes away.
    const load = Array.from({ length: 4 }, async () => {
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) statuses.push((await rest()).status);
      return statuses;
    });
    // A crash: the process is gone at once, its connections reset.
    process.kill(ferret.pid, 'SIGKILL');
    await ferret.exited;
    const during = (await Promise.all(load)).flat();
    expect(during.every((s) => s === 200 || s === 503)).toBe(true);

    const soda = await rest();
    expect(soda.status).toBe(503);
    expect(await soda.json()).toEqual({ error: 'The database is unavailable; try again shortly' });
    const supaResponse = await supa();
    expect(supaResponse.status).toBe(503);
    expect(await supaResponse.json()).toMatchObject({ code: 'database_error', details: null });
    const gql = await graphql();
    expect(gql.status).toBe(503);
    expect(await gql.json()).toEqual({
      errors: [
        {
          message: 'The database is unavailable; try again shortly',
          extensions: { code: 'DATABASE_UNAVAILABLE' },
        },
      ],
    });
    expect((await gateway.fetch(new Request('http://gateway.test/healthz'))).status).toBe(200);
    expect((await gateway.fetch(new Request('http://gateway.test/readyz'))).status).toBe(503);

    // The database comes back on the same address with the same files.
    ferret = await startFerretDb(dir, undefined, `127.0.0.1:${port}`);
    await recovered();
    expect((await gateway.fetch(new Request('http://gateway.test/readyz'))).status).toBe(200);
    const body = await (await rest()).json();
    expect(body.total).toBe(3);
    expect((await graphql()).status).toBe(200);
  });

  it('a database that stops answering (a hung process) still gives a bounded 503', {
    timeout: 3 * RECOVERY_MS,
  }, async () => {
    expect((await rest()).status).toBe(200);
    process.kill(ferret.pid, 'SIGSTOP');
    try {
      const started = performance.now();
      const response = await rest();
      expect(response.status).toBe(503);
      // Bounded by the configured timeouts (BOUNDED_MS is several of them), not by the
      // test's own abort (twice that), nor by the database's coming back.
      expect(performance.now() - started).toBeLessThan(BOUNDED_MS);
    } finally {
      process.kill(ferret.pid, 'SIGCONT');
    }
    await recovered();
  });
});
