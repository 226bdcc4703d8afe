import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { type ClientRequest, request } from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { loadDemoDataset } from '../../src/demo/seed.js';
import { openDatabase } from '../../src/store/database.js';
import { createApiKey } from '../../src/store/workspaces.js';
import { testServerUri } from '../helpers/database.js';
import { spawnGateway } from '../helpers/spawnGateway.js';
import { until } from '../helpers/until.js';

/**
 * SIGTERM during a steady load: the server stops accepting connections, lets every
 * request it accepted finish, closes the database client and exits 0. No request in
 * flight is cut: every request the server started on (its access log names it by its
 * x-request-id) reached the client whole. A client can still see a connection refused,
 * or reset while it waited in the kernel's accept queue when the listener closed; the
 * server never saw those requests, so they are safe to retry.
 */
const dbName = `shutdown_${randomBytes(4).toString('hex')}`;
let child: ChildProcess | null = null;

afterAll(async () => {
  child?.kill('SIGKILL');
  const database = await openDatabase(testServerUri(), dbName);
  await database.db.dropDatabase();
  await database.close();
});

type Outcome =
  | { id: string; kind: 'ok'; status: number }
  | { id: string; kind: 'refused' }
  | { id: string; kind: 'dropped'; error: string };

/** What came back for a request (`req`), as an outcome. */
function outcomeOf(req: ClientRequest, id: string): Promise<Outcome> {
  return new Promise((resolve) => {
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        try {
          JSON.parse(Buffer.concat(chunks).toString());
          resolve({ id, kind: 'ok', status: res.statusCode ?? 0 });
        } catch {
          resolve({ id, kind: 'dropped', error: 'incomplete body' });
        }
      });
      res.on('error', (e) => resolve({ id, kind: 'dropped', error: e.message }));
    });
    req.on('error', (e: NodeJS.ErrnoException) =>
      resolve(
        e.code === 'ECONNREFUSED'
          ? { id, kind: 'refused' }
          : { id, kind: 'dropped', error: `${e.code} ${e.message}` },
      ),
    );
  });
}

/** One request on a fresh connection, so "refused" and "cut" can be told apart. */
function get(port: number, path: string, key: string, id: string): Promise<Outcome> {
  const req = request({
    host: '127.0.0.1',
    port,
    path,
    agent: false,
    headers: { authorization: `Bearer ${key}`, 'x-request-id': id },
  });
  const outcome = outcomeOf(req, id);
  req.end();
  return outcome;
}

/**
 * A GraphQL request on a fresh connection whose body arrives only when `finish` is called:
 * in flight at the server for as long as the test wants.
 */
function heldRequest(port: number, key: string, id: string) {
  const body = JSON.stringify({ query: '{ viewer { workspace } }' });
  const req = request({
    host: '127.0.0.1',
    port,
    path: '/graphql',
    method: 'POST',
    agent: false,
    headers: {
      authorization: `Bearer ${key}`,
      'x-request-id': id,
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(body)),
    },
  });
  const connected = new Promise<void>((resolve) =>
    req.once('socket', (socket) => socket.once('connect', () => resolve())),
  );
  const answer = outcomeOf(req, id);
  req.write(body.slice(0, 5));
  return { connected, answer, finish: () => req.end(body.slice(5)) };
}

describe('graceful shutdown', () => {
  it('drops no request in flight when SIGTERM arrives under load', async () => {
    const database = await openDatabase(testServerUri(), dbName);
    await loadDemoDataset(database.collections, 'acme', new Date());
    const key = (await createApiKey(database.collections, 'acme', ['read'])).key;
    await database.close();

    const gateway = await spawnGateway({
      MONGODB_URI: testServerUri(),
      MONGODB_DB: dbName,
      RATE_LIMIT_PER_MINUTE: '0',
      LOG_LEVEL: 'info',
      // Longer than anything here may take on a loaded machine: no connection is closed by
      // force, the held request below included.
      SHUTDOWN_TIMEOUT_MS: '60000',
    });
    child = gateway.child;
    const { port } = gateway;
    const exited = new Promise<number | null>((r) => child!.once('exit', (code) => r(code)));

    const outcomes: Outcome[] = [];
    let stop = false;
    const paths = [
      '/v1/memory/semantic/datasets/user_42/facts?includeInvalidated=true',
      '/v1/memory/semantic/datasets/user_42/entities',
      '/api/memories?include_archived=true',
    ];
    const workers = Array.from({ length: 8 }, async (_, w) => {
      for (let i = 0; !stop; i++) {
        const outcome = await get(port, paths[(w + i) % paths.length]!, key, `load-${w}-${i}`);
        outcomes.push(outcome);
        if (outcome.kind === 'refused') await new Promise((r) => setTimeout(r, 20));
      }
    });

    // Let the load run, then SIGTERM in the middle of it.
    await until(
      () => outcomes.filter((o) => o.kind === 'ok').length >= 40,
      '40 answers under load',
    );
    // A request in flight when the signal comes, for sure: its connection accepted (one
    // opened after it was answered, and the server accepts connections in their order), its
    // body not complete yet.
    const inFlight = heldRequest(port, key, 'in-flight');
    await inFlight.connected;
    expect(await get(port, paths[0]!, key, 'after-in-flight')).toMatchObject({ kind: 'ok' });
    const beforeSignal = outcomes.length;
    child.kill('SIGTERM');
    // The server stops accepting (a connection is refused) while the request is still in
    // flight; it then gets its whole answer.
    await until(
      () => outcomes.slice(beforeSignal).some((o) => o.kind === 'refused'),
      () => `a connection refused after the signal:\n${gateway.output()}`,
    );
    inFlight.finish();
    expect(await inFlight.answer).toEqual({ id: 'in-flight', kind: 'ok', status: 200 });
    const code = await exited;
    stop = true;
    await Promise.all(workers);

    expect(code).toBe(0);
    // Every request the server handled (by its access log) reached the client whole.
    const handled = new Set(
      gateway
        .output()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { msg?: string; requestId?: string })
        .filter((line) => line.msg === 'request')
        .map((line) => line.requestId),
    );
    expect(handled.size).toBeGreaterThan(40);
    const cut = outcomes.filter((o) => handled.has(o.id) && o.kind !== 'ok');
    expect(cut).toEqual([]);
    const completed = outcomes.filter((o) => o.kind === 'ok');
    expect(completed.every((o) => o.kind === 'ok' && o.status === 200 && handled.has(o.id))).toBe(
      true,
    );
    // The request in flight at the signal was handled (and answered whole, above).
    expect(handled.has('in-flight')).toBe(true);
  });
});
