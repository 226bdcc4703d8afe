import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { parseCommandLine } from '../src/cli/help.js';
import { loadDemoDataset } from '../src/demo/seed.js';
import { type RunningFerretDb, startFerretDb } from '../src/embedded/ferretdb.js';
import { openDatabase } from '../src/store/database.js';
import { createApiKey } from '../src/store/workspaces.js';
import { importJsonl } from '../src/transfer/importJsonl.js';

/**
 * `npm run load`: a mixed REST and GraphQL load at fixed concurrency for a fixed time
 * against a seeded dataset, on loopback only, stopping by itself. It starts the gateway
 * as `npm start` does (its own process, on a database of its own: MONGODB_URI or a fresh
 * FerretDB), with its production rate limit, then prints requests, non-2xx by status,
 * latency percentiles and the server's memory before, right after and after settling.
 *
 *   npm run load -- [--duration 30] [--connections 8] [--keys 20] [--facts 500] [--rate-limit 1200]
 */

const { values } = parseCommandLine(import.meta.url, {
  options: {
    duration: { type: 'string', default: '30' },
    connections: { type: 'string', default: '8' },
    keys: { type: 'string', default: '20' },
    facts: { type: 'string', default: '500' },
    'rate-limit': { type: 'string', default: '1200' },
  },
});
const duration = Number(values.duration);
const connections = Number(values.connections);
const keyCount = Number(values.keys);
const factCount = Number(values.facts);

const ROOT = new URL('../', import.meta.url);
const dir = mkdtempSync(join(tmpdir(), 'memory-gateway-load-'));
const running: { ferret: RunningFerretDb | null; server: ChildProcess | null } = {
  ferret: null,
  server: null,
};

async function main() {
  if (!process.env.MONGODB_URI) running.ferret = await startFerretDb(join(dir, 'db'));
  const uri = process.env.MONGODB_URI ?? running.ferret!.uri;
  const dbName = `load_${Date.now()}`;

  // Seed: the demo dataset plus generated facts about many entities.
  const database = await openDatabase(uri, dbName);
  await loadDemoDataset(database.collections, 'load', new Date());
  const lines: string[] = [];
  for (let i = 0; i < factCount; i++) {
    const entity = `entity ${i % 200}`;
    if (i < 200)
      lines.push(
        JSON.stringify({ type: 'entity', dataset: 'user_42', name: entity, entityType: 'THING' }),
      );
    lines.push(
      JSON.stringify({
        type: 'fact',
        dataset: 'user_42',
        factId: `10000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`,
        subject: entity,
        predicate: `relates to ${i % 7}`,
        object: `entity ${(i + 1) % 200}`,
        objectIsEntity: true,
        confidence: 0.5,
        validAt: new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString(),
        ...(i % 10 === 0 ? { validUntil: '2026-03-01T00:00:00.000Z' } : {}),
      }),
    );
  }
  const outcome = await importJsonl(database.collections, {
    now: new Date(),
    workspace: 'load',
    content: lines.join('\n'),
  });
  if (!outcome.ok) throw new Error(JSON.stringify(outcome.errors.slice(0, 3)));
  const keys = await Promise.all(
    Array.from(
      { length: keyCount },
      async () => (await createApiKey(database.collections, 'load', ['read'])).key,
    ),
  );
  await database.close();

  // The gateway, as npm start runs it: compiled to dist/ first.
  const built = spawnSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, encoding: 'utf8' });
  if (built.status !== 0) throw new Error(`npm run build failed: ${built.stderr}`);
  const server = spawn(process.execPath, ['dist/main.js'], {
    cwd: ROOT,
    env: {
      ...process.env,
      MONGODB_URI: uri,
      MONGODB_DB: dbName,
      PORT: '0',
      LOG_LEVEL: 'warn',
      RATE_LIMIT_PER_MINUTE: values['rate-limit'],
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  running.server = server;
  const base = await new Promise<string>((resolve, reject) => {
    let out = '';
    server.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (match) resolve(match[1]!);
    });
    server.once('exit', (code) => reject(new Error(`server exited ${code}`)));
  });

  const memory = async () => {
    const text = await (await fetch(`${base}/metrics`)).text();
    const read = (name: string) =>
      Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? Number.NaN);
    return {
      rssMB: read('process_resident_memory_bytes') / 2 ** 20,
      heapUsedMB: read('nodejs_heap_size_used_bytes') / 2 ** 20,
    };
  };

  // Warm up, then measure.
  for (let i = 0; i < 20; i++)
    await fetch(`${base}/v1/memory/semantic/datasets/user_42/facts`, {
      headers: { authorization: `Bearer ${keys[0]}` },
    });
  const before = await memory();

  const graphql = (query: string) => ({
    method: 'POST' as const,
    path: '/graphql',
    body: JSON.stringify({ query }),
  });
  const shapes = [
    { method: 'GET' as const, path: '/v1/memory/semantic/datasets/user_42/facts' },
    {
      method: 'GET' as const,
      path: '/v1/memory/semantic/datasets/user_42/facts?q=relates%20entity&limit=20',
    },
    {
      method: 'GET' as const,
      path: '/v1/memory/semantic/datasets/user_42/facts?asOf=2026-02-01&limit=100',
    },
    { method: 'GET' as const, path: '/v1/memory/semantic/datasets/user_42/entities' },
    {
      method: 'GET' as const,
      path: '/v1/memory/semantic/datasets/user_42/entities/entity%2042/facts',
    },
    { method: 'GET' as const, path: '/api/memories?include_archived=true' },
    graphql(
      'query Nested { dataset(name: "user_42") { entities(first: 20) { edges { node { name facts { predicate subjectEntity { name } } } } } } }',
    ),
    graphql(
      'query Page { dataset(name: "user_42") { facts(first: 50, includeInvalidated: true) { totalCount edges { node { factId state } } } } }',
    ),
  ];
  // Each request uses the next key, so the per-key limit applies as it would to many clients.
  const requests = shapes.flatMap((shape) =>
    keys.map((key) => ({
      ...shape,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    })),
  );

  const result = await autocannon({ url: base, connections, duration, requests, timeout: 30 });
  const after = await memory();
  await new Promise((r) => setTimeout(r, 5000));
  const settled = await memory();

  const statuses = Object.fromEntries(
    Object.entries(result.statusCodeStats ?? {}).map(([status, { count }]) => [status, count ?? 0]),
  );
  const non2xx = Object.fromEntries(Object.entries(statuses).filter(([s]) => !s.startsWith('2')));
  const otherErrors = Object.entries(non2xx).filter(([s]) => s !== '429');
  const report = {
    duration: `${duration}s`,
    connections,
    keys: keyCount,
    seededFacts: factCount + 7,
    requests: result.requests.total,
    requestsPerSecond: result.requests.average,
    statuses,
    non2xx,
    transportErrors: result.errors,
    timeouts: result.timeouts,
    latencyMs: {
      p50: result.latency.p50,
      p90: result.latency.p90,
      p99: result.latency.p99,
      max: result.latency.max,
    },
    memoryMB: {
      before: round(before),
      afterLoad: round(after),
      afterSettling5s: round(settled),
    },
  };
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  const ok = otherErrors.length === 0 && result.errors === 0 && result.timeouts === 0;
  process.stdout.write(
    ok ? 'load: no errors other than 429\n' : `load: errors: ${JSON.stringify(otherErrors)}\n`,
  );
  process.exitCode = ok ? 0 : 1;
}

const round = (m: { rssMB: number; heapUsedMB: number }) => ({
  rss: Math.round(m.rssMB * 10) / 10,
  heapUsed: Math.round(m.heapUsedMB * 10) / 10,
});

try {
  await main();
} finally {
  const { server, ferret } = running;
  if (server && server.exitCode === null) {
    const exited = new Promise((r) => server.once('exit', r));
    server.kill('SIGTERM');
    await exited;
  }
  await ferret?.stop();
  rmSync(dir, { recursive: true, force: true });
}
