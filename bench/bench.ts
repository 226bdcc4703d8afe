import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { MongoClient } from 'mongodb';
import { parseCommandLine } from '../src/cli/help.js';
import { type RunningFerretDb, startFerretDb } from '../src/embedded/ferretdb.js';
import { openDatabase } from '../src/store/database.js';
import { createApiKey } from '../src/store/workspaces.js';
import { type DatasetSize, type GeneratedDataset, SIZES, seedDataset } from './generate.js';
import {
  type CpuProfile,
  median,
  procCpuSeconds,
  round1,
  round2,
  round3,
  summarizeCpuProfiles,
} from './measure.js';

/**
 * `npm run bench [-- --quick]`: the gateway against the minimal baseline (bench/baseline.ts)
 * on the same database, scenario by scenario, measured side by side.
 *
 * It starts a FerretDB of its own (or uses MONGODB_URI), seeds a generated dataset through
 * the import path (bench/generate.ts; quick: small, full: larger), starts the gateway as
 * `npm start` does (its own process, rate limits on but out of reach) and the baseline, checks
 * that both give the same answer to every scenario, then for each scenario alternates
 * short fixed-concurrency autocannon rounds, gateway then baseline, A B A B... (each
 * round a fixed number of requests, sized from the side's last rate to last about
 * --round seconds, so every request it sends is answered before the counters are read). Per
 * scenario it reports each side's throughput and p50/p99 latency, the gateway's CPU time
 * per request relative to the baseline's (each process's own CPU: the gateway's
 * `process_cpu_seconds_total` from /metrics, the baseline's `process.cpuUsage()` from
 * /__bench/stats, read before and after every round), the gateway's database commands
 * per request (`gateway_db_command_duration_seconds_count` summed over commands) and its
 * peak RSS (`process_resident_memory_bytes`). Ratios are medians of the per-pair ratios,
 * so drift on a shared machine hits both sides of a pair alike. It also checks that the
 * gateway's commands per request do not grow with the result size.
 *
 * Prints a table and the target verdicts, and writes everything as JSON to --out.
 * Loopback only; every loop is bounded and a watchdog stops the run if it overruns.
 *
 *   npm run bench -- [--quick] [--out bench-results.json] [--connections 4] [--pairs N]
 *     [--round SECONDS] [--only id,id] [--facts N] [--cpu-prof] [--cpu-prof-baseline]
 *     [--cpu-prof-dir DIR] [--log-level warn]
 *
 * --cpu-prof (--cpu-prof-baseline) runs the gateway (the baseline) under `node --cpu-prof`
 * and summarizes the profile's top frames over the measured rounds (the CPU figures are
 * then inflated by the profiler: use it to look, not to score). --cpu-prof-dir keeps the
 * profiles (`gateway/`, `baseline/`) in DIR for Chrome's DevTools or speedscope; otherwise
 * they go with the run's temporary folder.
 */

const { values } = parseCommandLine(import.meta.url, {
  options: {
    quick: { type: 'boolean', default: false },
    out: { type: 'string' },
    connections: { type: 'string', default: '4' },
    pairs: { type: 'string' },
    round: { type: 'string' },
    only: { type: 'string' },
    facts: { type: 'string' },
    'cpu-prof': { type: 'boolean', default: false },
    'cpu-prof-baseline': { type: 'boolean', default: false },
    'cpu-prof-dir': { type: 'string' },
    'log-level': { type: 'string', default: 'warn' },
    'node-options': { type: 'string', default: '' },
  },
});

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const quick = values.quick;
const connections = Number(values.connections);
const pairs = Number(values.pairs ?? (quick ? 3 : 5));
const roundSeconds = Number(values.round ?? (quick ? 1 : 5));
/**
 * Warm-up requests per side and scenario (they also size the first round). The answer
 * checks and the command-scaling probe have already sent every route a few requests.
 */
const warmupRequests = (quick ? 1 : 2) * connections;
const outFile = values.out ? resolve(values.out) : join(ROOT, 'bench-results.json');
const size: DatasetSize = {
  ...(quick ? SIZES.quick : SIZES.full),
  ...(values.facts ? { facts: Number(values.facts) } : {}),
};
/** The whole run stops by itself past this, whatever happens. */
// The default runs' bounds, stretched for runs asked to time more (--pairs, --round): each
// scenario's pairs time both sides, plus a warm-up, the answer checks and start-up.
const WATCHDOG_MS =
  Math.max(quick ? 170 : 1800, 120 + 8 * pairs * (2 * roundSeconds + 4) * 1.5) * 1000;
const WORKSPACE = 'bench';
const DATASET = 'bench_user';

for (const [name, v, max] of [
  ['connections', connections, 1000],
  ['pairs', pairs, 1000],
  ['round', roundSeconds, 1000],
  ['facts', size.facts, 10_000_000],
] as const) {
  if (!Number.isFinite(v) || v <= 0 || v > max) throw new Error(`bad --${name}: ${v}`);
}

/** Requests per minute per key and per address: counted as in production, never reached. */
const BENCH_RATE_LIMIT = 1_000_000;

const log = (line: string) => process.stderr.write(`${line}\n`);
const t0 = performance.now();

// ---------------------------------------------------------------- processes

const dir = mkdtempSync(join(tmpdir(), 'memory-gateway-bench-'));
const profDir = values['cpu-prof-dir'] ? resolve(values['cpu-prof-dir']) : join(dir, 'prof');
const running: {
  ferret: RunningFerretDb | null;
  gateway: ChildProcess | null;
  counter: ChildProcess | null;
  baseline: ChildProcess | null;
} = { ferret: null, gateway: null, counter: null, baseline: null };

/** Spawns a Node server of this repository and waits for its "listening on" line. */
async function spawnServer(
  name: 'gateway' | 'counter' | 'baseline',
  nodeArgs: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ child: ChildProcess; base: string }> {
  const child = spawn(process.execPath, nodeArgs, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  running[name] = child; // stopped at the end whatever happens next
  const base = await new Promise<string>((done, fail) => {
    let out = '';
    const timer = setTimeout(() => fail(new Error(`${name} did not start within 90s`)), 90_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      if (out.length < 100_000) out += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (match) {
        clearTimeout(timer);
        done(match[1]!);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      fail(new Error(`${name} exited (${code}) before listening: ${out.slice(-2000)}`));
    });
  });
  return { child, base };
}

async function stopChild(child: ChildProcess | null): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}

// ---------------------------------------------------------------- measurements

/** Sums a Prometheus metric over its label sets (optionally filtered by a label test). */
function metricSum(text: string, name: string, keep: (labels: string) => boolean = () => true) {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const rest = line.slice(name.length);
    const match = /^(\{[^}]*\})?\s+(\S+)$/.exec(rest);
    if (!match) continue;
    if (keep(match[1] ?? '')) sum += Number(match[2]);
  }
  return sum;
}

/** Database commands by command name, from the histogram's _count series. */
function commandsByName(text: string): Record<string, number> {
  const out: Record<string, number> = {};
  const re = /^gateway_db_command_duration_seconds_count\{([^}]*)\}\s+(\S+)$/gm;
  for (const m of text.matchAll(re)) {
    const command = /command="([^"]*)"/.exec(m[1]!)?.[1] ?? '?';
    out[command] = (out[command] ?? 0) + Number(m[2]);
  }
  return out;
}

interface Sample {
  cpuSeconds: number;
  requests: number;
  rssBytes: number;
  heapUsedBytes: number;
  dbCommands: number;
  byCommand: Record<string, number>;
  /** The database process's CPU (seconds), when it runs on this machine. */
  dbCpuSeconds: number | null;
}

function procPeakRss(pid: number | undefined): number | null {
  if (!pid) return null;
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : null;
  } catch {
    return null;
  }
}

async function sampleGateway(base: string): Promise<Sample> {
  const text = await (await fetch(`${base}/metrics`)).text();
  return {
    cpuSeconds: metricSum(text, 'process_cpu_seconds_total'),
    requests: metricSum(text, 'gateway_http_requests_total', (l) => !l.includes('"/metrics"')),
    rssBytes: metricSum(text, 'process_resident_memory_bytes'),
    heapUsedBytes: metricSum(text, 'nodejs_heap_size_used_bytes'),
    dbCommands: metricSum(text, 'gateway_db_command_duration_seconds_count'),
    byCommand: commandsByName(text),
    dbCpuSeconds: procCpuSeconds(running.ferret?.pid),
  };
}

async function sampleBaseline(base: string): Promise<Sample> {
  const s = (await (await fetch(`${base}/__bench/stats`)).json()) as {
    cpu: { user: number; system: number };
    rss: number;
    heapUsed: number;
    requests: number;
    commands: number;
  };
  return {
    cpuSeconds: (s.cpu.user + s.cpu.system) / 1e6,
    requests: s.requests,
    rssBytes: s.rss,
    heapUsedBytes: s.heapUsed,
    dbCommands: s.commands,
    byCommand: {},
    dbCpuSeconds: procCpuSeconds(running.ferret?.pid),
  };
}

interface RequestShape {
  method: 'GET' | 'POST';
  path: string;
  body?: string;
}

interface Round {
  side: 'gateway' | 'baseline';
  seconds: number;
  responses: number;
  /** Requests the server counted during the round (it must equal `responses`). */
  served: number;
  non2xx: number;
  errors: number;
  throughput: number;
  cpuMsPerRequest: number;
  dbCpuMsPerRequest: number | null;
  rssMB: number;
  heapUsedMB: number;
}

/**
 * One autocannon round against one side: a fixed number of requests at fixed
 * concurrency, so every request the round sends has been answered (and counted, with
 * its CPU) when the server's counters are read again afterwards.
 */
async function round(
  side: 'gateway' | 'baseline',
  base: string,
  shape: RequestShape,
  headers: Record<string, string>,
  amount: number,
  latencies: number[] | null,
): Promise<Round> {
  const sample = side === 'gateway' ? sampleGateway : sampleBaseline;
  const before = await sample(base);
  let responses = 0;
  // autocannon ends an `amount` run on its sampling tick: a tick of 100 ms (1 s by default)
  // ends a half-second round soon after its last answer instead of at the next whole second
  // (which made the gate's rounds twice as long). The round's time is taken from the first
  // request to the last answer either way.
  const started = performance.now();
  let lastAnswer = started;
  const result = await new Promise<autocannon.Result>((done, fail) => {
    const instance = autocannon(
      {
        url: `${base}${shape.path}`,
        method: shape.method,
        headers,
        ...(shape.body ? { body: shape.body } : {}),
        connections,
        amount,
        timeout: 30,
        sampleInt: 100,
      },
      (error, result) => (error ? fail(error) : done(result)),
    );
    instance.on('response', (_client, _status, _bytes, responseTime) => {
      responses++;
      lastAnswer = performance.now();
      latencies?.push(responseTime);
    });
  });
  const after = await sample(base);
  const served = Math.max(1, after.requests - before.requests);
  const seconds = Math.max(0.001, (lastAnswer - started) / 1000);
  return {
    side,
    seconds,
    responses,
    served,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    throughput: responses / seconds,
    cpuMsPerRequest: ((after.cpuSeconds - before.cpuSeconds) * 1000) / served,
    dbCpuMsPerRequest:
      after.dbCpuSeconds !== null && before.dbCpuSeconds !== null
        ? ((after.dbCpuSeconds - before.dbCpuSeconds) * 1000) / served
        : null,
    rssMB: Math.max(before.rssBytes, after.rssBytes) / 2 ** 20,
    heapUsedMB: Math.max(before.heapUsedBytes, after.heapUsedBytes) / 2 ** 20,
  };
}

/** Requests for a round of about `roundSeconds` at the rate just measured (bounded). */
const amountFor = (throughput: number) =>
  Math.min(20_000, Math.max(2 * connections, Math.round(throughput * roundSeconds)));

function percentile(xs: number[], p: number): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}

// ---------------------------------------------------------------- CPU profile summary

/** The summary of one server's profile, over the measured rounds only. */
function summarizeProfile(file: string, window: { startUs: number; endUs: number }) {
  return summarizeCpuProfiles([JSON.parse(readFileSync(file, 'utf8')) as CpuProfile], { window });
}

// ---------------------------------------------------------------- the run

interface Scenario {
  id: string;
  title: string;
  rest: boolean;
  shape: RequestShape;
}

const NESTED_QUERY =
  'query Nested($dataset: String!, $first: Int!) { dataset(name: $dataset) { entities(first: $first) { edges { node { name facts { predicate subjectEntity { name } } } } } } }';

function scenariosFor(probes: GeneratedDataset['probes']): Scenario[] {
  const ds = `/v1/memory/semantic/datasets/${encodeURIComponent(probes.dataset)}`;
  return [
    {
      id: 'facts',
      title: 'REST list facts (live)',
      rest: true,
      shape: { method: 'GET', path: `${ds}/facts` },
    },
    {
      id: 'facts-q',
      title: `REST list facts q="${probes.q}"`,
      rest: true,
      shape: { method: 'GET', path: `${ds}/facts?q=${encodeURIComponent(probes.q)}&limit=20` },
    },
    {
      id: 'facts-asof',
      title: `REST list facts asOf=${probes.asOf.slice(0, 10)}`,
      rest: true,
      shape: { method: 'GET', path: `${ds}/facts?asOf=${probes.asOf.slice(0, 10)}&limit=100` },
    },
    {
      id: 'entity-facts',
      title: `REST entity facts "${probes.mediumEntity}"`,
      rest: true,
      shape: {
        method: 'GET',
        path: `${ds}/entities/${encodeURIComponent(probes.mediumEntity)}/facts`,
      },
    },
    {
      id: 'entities',
      title: 'REST entities (all)',
      rest: true,
      shape: { method: 'GET', path: `${ds}/entities` },
    },
    {
      id: 'memories',
      title: 'SupaCloud memories (live)',
      rest: true,
      shape: { method: 'GET', path: '/api/memories' },
    },
    {
      id: 'recall',
      title: `REST recall "${probes.q}" asOf=${probes.asOf.slice(0, 10)}`,
      rest: true,
      shape: {
        method: 'POST',
        path: '/v1/memory/recall',
        // asOf fixes the instant, so both sides rank on the same clock and answer alike.
        body: JSON.stringify({
          dataset: probes.dataset,
          query: `who ${probes.q}?`,
          limit: 10,
          asOf: probes.asOf.slice(0, 10),
        }),
      },
    },
    {
      id: 'nested',
      title: 'GraphQL entities(20)→facts→subject',
      rest: false,
      shape: {
        method: 'POST',
        path: '/graphql',
        body: JSON.stringify({
          query: NESTED_QUERY,
          variables: { dataset: probes.dataset, first: 20 },
        }),
      },
    },
  ];
}

/** Same request, both sides: the bodies must be identical (JSON-equal at least). */
async function compareAnswers(
  gateway: string,
  baseline: string,
  shape: RequestShape,
  headers: Record<string, string>,
) {
  const get = async (base: string) => {
    const r = await fetch(`${base}${shape.path}`, {
      method: shape.method,
      headers,
      ...(shape.body ? { body: shape.body } : {}),
    });
    return { status: r.status, text: await r.text() };
  };
  const [a, b] = await Promise.all([get(gateway), get(baseline)]);
  const identical = a.status === b.status && a.text === b.text;
  const sameJson =
    identical ||
    (a.status === b.status &&
      JSON.stringify(JSON.parse(a.text)) === JSON.stringify(JSON.parse(b.text)));
  return {
    status: a.status,
    baselineStatus: b.status,
    bytes: Buffer.byteLength(a.text),
    identical,
    sameJson,
    ...(sameJson
      ? {}
      : { gatewaySample: a.text.slice(0, 300), baselineSample: b.text.slice(0, 300) }),
  };
}

// ---------------------------------------------------------------- the steps of a run

/** Where the run's data lives: the database server's URI and a fresh database name. */
interface Store {
  uri: string;
  dbName: string;
}

/** The three servers a run starts: the timed gateway, the counting gateway, the baseline. */
interface Servers {
  gateway: { child: ChildProcess; base: string };
  counter: { child: ChildProcess; base: string };
  baseline: { child: ChildProcess; base: string };
}

type AnswerCheck = Awaited<ReturnType<typeof compareAnswers>>;
type CommandCount = Awaited<ReturnType<typeof countCommands>>;
type Scaling = ({ question: string; variant: string } & CommandCount)[];
type Measured = Awaited<ReturnType<typeof measureScenarios>>;

const monotonicUs = () => Number(process.hrtime.bigint() / 1000n);

/** Starts the embedded FerretDB (unless MONGODB_URI is set) and names a fresh database. */
async function startDatabase(): Promise<Store> {
  if (!process.env.MONGODB_URI) running.ferret = await startFerretDb(join(dir, 'db'));
  const uri = process.env.MONGODB_URI ?? running.ferret!.uri;
  return { uri, dbName: `bench_${Date.now()}` };
}

/** Seeds the generated dataset through the import path and creates a read key for it. */
async function seed(store: Store) {
  const seedStarted = performance.now();
  const database = await openDatabase(store.uri, store.dbName);
  const { generated, outcome } = await seedDataset(database.collections, WORKSPACE, {
    ...size,
    dataset: DATASET,
  });
  const key = (await createApiKey(database.collections, WORKSPACE, ['read'])).key;
  await database.close();
  log(
    `bench: seeded ${outcome.records} records in ${Math.round(performance.now() - seedStarted)} ms: ${JSON.stringify(generated.counts)}`,
  );
  return { generated, outcome, key };
}

/** Builds dist/ and starts the timed gateway, the command-counting gateway and the baseline. */
async function startServers(store: Store, workspaceId: string): Promise<Servers> {
  // The gateway runs as `npm start` runs it: compiled to dist/ first.
  const built = spawnSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, encoding: 'utf8' });
  if (built.status !== 0) throw new Error(`npm run build failed: ${built.stderr}`);
  const gatewayEnv = {
    MONGODB_URI: store.uri,
    MONGODB_DB: store.dbName,
    PORT: '0',
    HOST: '127.0.0.1',
    NODE_ENV: 'production',
    LOG_LEVEL: values['log-level'],
    // Both rate limiters run, as in production, with limits no run reaches: their cost is
    // the gateway's, and a refused request would time a 429 instead of the question.
    RATE_LIMIT_PER_MINUTE: String(BENCH_RATE_LIMIT),
    RATE_LIMIT_PER_ADDRESS_PER_MINUTE: String(BENCH_RATE_LIMIT),
    // Counted in the process, as on one gateway: shared limits add two upserts per request
    // (docs/PERFORMANCE.md, "Shared rate limits"), which this comparison leaves out.
    RATE_LIMIT_STORE: 'process',
    SHUTDOWN_TIMEOUT_MS: '2000',
    // The baseline waits as long as the database takes; on a loaded FerretDB one answer
    // can take longer than the production bound of 5 s, which would turn into a 503 here.
    DB_TIMEOUT_MS: '60000',
  };
  // The timed gateway runs as in production, without the per-command metric (its driver
  // monitoring costs CPU); a second gateway with DB_COMMAND_METRICS=true counts the
  // commands each question takes, outside the timed rounds.
  const [gateway, counter, baseline] = await Promise.all([
    spawnServer(
      'gateway',
      [
        ...(values['cpu-prof'] ? ['--cpu-prof', `--cpu-prof-dir=${join(profDir, 'gateway')}`] : []),
        ...values['node-options'].split(' ').filter(Boolean),
        'dist/main.js',
      ],
      gatewayEnv,
    ),
    spawnServer('counter', ['dist/main.js'], {
      ...gatewayEnv,
      DB_COMMAND_METRICS: 'true',
      // Counted requests can take seconds each on FerretDB: a TTL longer than the count
      // keeps it to the steady state (the timed gateway re-reads a key once per 5 s).
      CACHE_TTL_MS: '600000',
    }),
    spawnServer(
      'baseline',
      [
        ...(values['cpu-prof-baseline']
          ? ['--cpu-prof', `--cpu-prof-dir=${join(profDir, 'baseline')}`]
          : []),
        '--import',
        'tsx',
        'bench/baseline.ts',
      ],
      {
        MONGODB_URI: store.uri,
        MONGODB_DB: store.dbName,
        BASELINE_WORKSPACE_ID: workspaceId,
        // Recall by meaning as the gateway has it (EMBEDDINGS, default on).
        BASELINE_EMBEDDINGS: process.env.EMBEDDINGS === 'off' ? 'off' : 'on',
        PORT: '0',
        HOST: '127.0.0.1',
      },
    ),
  ]);
  return { gateway, counter, baseline };
}

/** Samples both timed sides at rest, before any request: the memory they start with. */
async function sampleIdle(servers: Servers) {
  return {
    gateway: await sampleGateway(servers.gateway.base),
    baseline: await sampleBaseline(servers.baseline.base),
  };
}

/** The scenarios of this run: every one, or those --only names. */
function chooseScenarios(probes: GeneratedDataset['probes']): Scenario[] {
  let scenarios = scenariosFor(probes);
  if (values.only) {
    const wanted = new Set(values.only.split(','));
    scenarios = scenarios.filter((s) => wanted.has(s.id));
    if (scenarios.length === 0) throw new Error(`--only matched no scenario`);
  }
  return scenarios;
}

/** Checks that both sides give the same answers to every scenario and a few other requests. */
async function checkAnswers(
  servers: Servers,
  scenarios: Scenario[],
  probes: GeneratedDataset['probes'],
  headers: Record<string, string>,
) {
  // Same answers on both sides, or the comparison means nothing: every scenario, plus a
  // few other parameters the baseline re-states (not timed).
  const answers: Record<string, AnswerCheck> = {};
  for (const s of scenarios) {
    answers[s.id] = await compareAnswers(
      servers.gateway.base,
      servers.baseline.base,
      s.shape,
      headers,
    );
    if (!answers[s.id]!.sameJson) log(`bench: WARNING ${s.id}: different answers`);
  }
  const ds = `/v1/memory/semantic/datasets/${DATASET}`;
  const extraChecks = [
    `${ds}/facts?includeInvalidated=true&limit=100`,
    `${ds}/facts?episodeId=${probes.episodeId}`,
    `${ds}/facts?episodeId=${probes.episodeId}&asOf=${probes.asOf}`,
    `${ds}/facts?q=${encodeURIComponent(probes.hubEntity)}&includeInvalidated=true`,
    `${ds}/entities/${encodeURIComponent('No Such Entity')}/facts`,
    '/v1/memory/semantic/datasets/no_such_dataset/facts',
    '/api/memories?include_archived=true',
    `/api/memories?as_of=${probes.asOf}`,
  ];
  const answerChecks: { request: string; sameAnswer: boolean; bytes: number }[] = [];
  for (const path of extraChecks) {
    const a = await compareAnswers(
      servers.gateway.base,
      servers.baseline.base,
      { method: 'GET', path },
      headers,
    );
    answerChecks.push({ request: `GET ${path}`, sameAnswer: a.sameJson, bytes: a.bytes });
    if (!a.sameJson) log(`bench: WARNING different answers to GET ${path}`);
  }
  return { answers, answerChecks };
}

/** Database commands one request of `shape` takes, on the counting gateway and the baseline. */
async function countCommands(
  servers: Servers,
  shape: RequestShape,
  headers: Record<string, string>,
) {
  const ask = async (base: string) => {
    const r = await fetch(`${base}${shape.path}`, {
      method: shape.method,
      headers,
      ...(shape.body ? { body: shape.body } : {}),
    });
    return Buffer.byteLength(await r.text());
  };
  // Once first, as in the timed rounds: the key and the dataset are then remembered.
  await ask(servers.counter.base);
  const g0 = await sampleGateway(servers.counter.base);
  const b0 = await sampleBaseline(servers.baseline.base);
  let bytes = 0;
  const n = quick ? 2 : 3;
  for (let i = 0; i < n; i++) {
    [bytes] = await Promise.all([ask(servers.counter.base), ask(servers.baseline.base)]);
  }
  const g1 = await sampleGateway(servers.counter.base);
  const b1 = await sampleBaseline(servers.baseline.base);
  const byCommand: Record<string, number> = {};
  for (const [k, v] of Object.entries(g1.byCommand)) {
    const d = v - (g0.byCommand[k] ?? 0);
    if (d > 0) byCommand[k] = round2(d / n);
  }
  return {
    responseBytes: bytes,
    gatewayCommandsPerRequest: round2((g1.dbCommands - g0.dbCommands) / n),
    gatewayByCommand: byCommand,
    baselineCommandsPerRequest: round2((b1.dbCommands - b0.dbCommands) / n),
  };
}

/** Counts the database commands per request against result size, then for each scenario. */
async function countAllCommands(
  servers: Servers,
  scenarios: Scenario[],
  probes: GeneratedDataset['probes'],
  headers: Record<string, string>,
) {
  // Database commands per request against result size, on both sides.
  const ds = `/v1/memory/semantic/datasets/${DATASET}`;
  const nestedBody = (first: number) =>
    JSON.stringify({ query: NESTED_QUERY, variables: { dataset: DATASET, first } });
  const scalingProbes: { question: string; variant: string; shape: RequestShape }[] = [
    {
      question: 'list facts',
      variant: 'limit=1',
      shape: { method: 'GET', path: `${ds}/facts?includeInvalidated=true&limit=1` },
    },
    {
      question: 'list facts',
      variant: 'limit=100',
      shape: { method: 'GET', path: `${ds}/facts?includeInvalidated=true&limit=100` },
    },
    {
      question: 'entity facts',
      variant: `small entity "${probes.smallEntity}"`,
      shape: {
        method: 'GET',
        path: `${ds}/entities/${encodeURIComponent(probes.smallEntity)}/facts`,
      },
    },
    {
      question: 'entity facts',
      variant: `hub entity "${probes.hubEntity}"`,
      shape: {
        method: 'GET',
        path: `${ds}/entities/${encodeURIComponent(probes.hubEntity)}/facts`,
      },
    },
    {
      question: 'nested GraphQL',
      variant: 'entities(first: 1)',
      shape: { method: 'POST', path: '/graphql', body: nestedBody(1) },
    },
    {
      question: 'nested GraphQL',
      variant: 'entities(first: 50)',
      shape: { method: 'POST', path: '/graphql', body: nestedBody(50) },
    },
  ];
  const scaling: Scaling = [];
  for (const p of scalingProbes) {
    scaling.push({
      question: p.question,
      variant: p.variant,
      ...(await countCommands(servers, p.shape, headers)),
    });
  }
  const scenarioCommands: Record<string, CommandCount> = {};
  for (const s of scenarios)
    scenarioCommands[s.id] = await countCommands(servers, s.shape, headers);
  return { scaling, scenarioCommands };
}

/** Warms both sides up on one scenario; returns each side's first round size. */
async function warmUp(servers: Servers, s: Scenario, headers: Record<string, string>) {
  const amounts = { gateway: 0, baseline: 0 };
  for (const side of ['gateway', 'baseline'] as const) {
    const warm = await round(side, servers[side].base, s.shape, headers, warmupRequests, null);
    amounts[side] = amountFor(warm.throughput);
  }
  return amounts;
}

/** Measures one scenario: the A B A B rounds, summarized per side and as per-pair ratios. */
async function measureScenario(
  servers: Servers,
  s: Scenario,
  headers: Record<string, string>,
  answer: AnswerCheck,
  commands: CommandCount,
) {
  const amounts = await warmUp(servers, s, headers);
  const rounds: Round[] = [];
  const latencies = { gateway: [] as number[], baseline: [] as number[] };
  for (let i = 0; i < pairs; i++) {
    for (const side of ['gateway', 'baseline'] as const) {
      const r = await round(
        side,
        servers[side].base,
        s.shape,
        headers,
        amounts[side],
        latencies[side],
      );
      rounds.push(r);
      log(
        `  ${side}: ${r.responses} requests in ${r.seconds}s, CPU ${round2(r.cpuMsPerRequest)} ms/request`,
      );
      amounts[side] = amountFor(r.throughput);
    }
  }
  const side = (name: 'gateway' | 'baseline') => {
    const rs = rounds.filter((r) => r.side === name);
    const responses = rs.reduce((a, r) => a + r.responses, 0);
    const seconds = rs.reduce((a, r) => a + r.seconds, 0);
    const dbCpu = rs.map((r) => r.dbCpuMsPerRequest).filter((x): x is number => x !== null);
    return {
      responses,
      non2xx: rs.reduce((a, r) => a + r.non2xx, 0),
      errors: rs.reduce((a, r) => a + r.errors, 0),
      requestsPerSecond: round1(responses / seconds),
      latencyMs: {
        p50: round2(percentile(latencies[name], 50)),
        p99: round2(percentile(latencies[name], 99)),
      },
      cpuMsPerRequest: round3(median(rs.map((r) => r.cpuMsPerRequest))),
      dbCpuMsPerRequest: dbCpu.length > 0 ? round3(median(dbCpu)) : null,
      peakRssMB: round1(Math.max(...rs.map((r) => r.rssMB))),
      peakHeapUsedMB: round1(Math.max(...rs.map((r) => r.heapUsedMB))),
    };
  };
  const g = side('gateway');
  const b = side('baseline');
  const pairRatios = (f: (r: Round) => number) =>
    Array.from({ length: pairs }, (_, i) => f(rounds[2 * i]!) / f(rounds[2 * i + 1]!));
  const throughputRatios = pairRatios((r) => r.throughput);
  const cpuRatios = pairRatios((r) => r.cpuMsPerRequest);
  return {
    id: s.id,
    title: s.title,
    rest: s.rest,
    request: `${s.shape.method} ${s.shape.path}`,
    responseBytes: answer.bytes,
    sameAnswer: answer.sameJson,
    identicalBytes: answer.identical,
    gateway: {
      ...g,
      dbCommandsPerRequest: commands.gatewayCommandsPerRequest,
      dbCommandsByName: commands.gatewayByCommand,
    },
    baseline: { ...b, dbCommandsPerRequest: commands.baselineCommandsPerRequest },
    ratio: {
      throughput: round2(median(throughputRatios)),
      throughputRange: [
        round2(Math.min(...throughputRatios)),
        round2(Math.max(...throughputRatios)),
      ],
      cpuPerRequest: round2(median(cpuRatios)),
      cpuPerRequestRange: [round2(Math.min(...cpuRatios)), round2(Math.max(...cpuRatios))],
    },
    rounds: rounds.map((r) => ({
      side: r.side,
      responses: r.responses,
      served: r.served,
      requestsPerSecond: round1(r.throughput),
      cpuMsPerRequest: round3(r.cpuMsPerRequest),
      dbCpuMsPerRequest: r.dbCpuMsPerRequest === null ? null : round3(r.dbCpuMsPerRequest),
    })),
  };
}

/** Measures every scenario in turn; returns the rows, the peaks and the profiled window. */
async function measureScenarios(
  servers: Servers,
  scenarios: Scenario[],
  headers: Record<string, string>,
  answers: Record<string, AnswerCheck>,
  scenarioCommands: Record<string, CommandCount>,
) {
  const profileWindow = { startUs: monotonicUs(), endUs: 0 };
  const results: Awaited<ReturnType<typeof measureScenario>>[] = [];
  for (const s of scenarios) {
    log(`bench: ${s.id} (${Math.round((performance.now() - t0) / 1000)}s)`);
    results.push(
      await measureScenario(servers, s, headers, answers[s.id]!, scenarioCommands[s.id]!),
    );
  }
  profileWindow.endUs = monotonicUs();
  return {
    results,
    peakRss: Math.max(0, ...results.map((r) => r.gateway.peakRssMB)),
    peakHeap: Math.max(0, ...results.map((r) => r.gateway.peakHeapUsedMB)),
    baselinePeakRss: Math.max(0, ...results.map((r) => r.baseline.peakRssMB)),
    profileWindow,
  };
}

/** Judges the measurements against the performance targets (docs/PERFORMANCE.md). */
function verdicts(
  measured: Measured,
  scaling: Scaling,
  vmHwm: number | null,
  idle: Awaited<ReturnType<typeof sampleIdle>>,
) {
  const rest = measured.results.filter((r) => r.rest);
  const scalingOk = ['list facts', 'entity facts', 'nested GraphQL'].map((q) => {
    const rows = scaling.filter((r) => r.question === q);
    const counts = rows.map((r) => r.gatewayCommandsPerRequest);
    return { question: q, commands: counts, constant: Math.max(...counts) === Math.min(...counts) };
  });
  const peak = Math.max(measured.peakRss, (vmHwm ?? 0) / 2 ** 20);
  const peakRatio = round2(peak / measured.baselinePeakRss);
  const restRatio = round2(idle.gateway.rssBytes / idle.baseline.rssBytes);
  return [
    {
      target: 'gateway CPU per request <= 1.5x baseline, every scenario',
      met: measured.results.every((r) => r.ratio.cpuPerRequest <= 1.5),
      detail: Object.fromEntries(measured.results.map((r) => [r.id, r.ratio.cpuPerRequest])),
    },
    {
      target: 'REST throughput >= 0.8x baseline',
      met: rest.every((r) => r.ratio.throughput >= 0.8),
      detail: Object.fromEntries(rest.map((r) => [r.id, r.ratio.throughput])),
    },
    {
      target: 'DB commands per request independent of result size',
      met: scalingOk.every((x) => x.constant),
      detail: Object.fromEntries(scalingOk.map((x) => [x.question, x.commands])),
    },
    {
      target: "gateway peak memory <= 1.3x the baseline's peak",
      met: peakRatio <= 1.3,
      detail: {
        ratio: peakRatio,
        peakRssMB: round1(peak),
        baselinePeakRssMB: round1(measured.baselinePeakRss),
      },
    },
    {
      target: "gateway memory at rest <= 1.3x the baseline's at rest",
      met: restRatio <= 1.3,
      detail: {
        ratio: restRatio,
        idleRssMB: round1(idle.gateway.rssBytes / 2 ** 20),
        baselineIdleRssMB: round1(idle.baseline.rssBytes / 2 ** 20),
      },
    },
  ];
}

/** Stops the servers (the gateway then writes its CPU profile); drops a MONGODB_URI database. */
async function stopServers(store: Store) {
  await stopChild(running.gateway);
  await stopChild(running.counter);
  await stopChild(running.baseline);
  if (process.env.MONGODB_URI) {
    const client = await new MongoClient(store.uri).connect();
    await client.db(store.dbName).dropDatabase();
    await client.close();
  }
}

/** Summarizes the CPU profiles --cpu-prof and --cpu-prof-baseline asked for, over the rounds. */
function readProfiles(window: { startUs: number; endUs: number }) {
  const profiles: Partial<Record<'gateway' | 'baseline', ReturnType<typeof summarizeProfile>>> = {};
  for (const side of ['gateway', 'baseline'] as const) {
    if (!values[side === 'gateway' ? 'cpu-prof' : 'cpu-prof-baseline']) continue;
    const sideDir = join(profDir, side);
    const file = readdirSync(sideDir).find((f) => f.endsWith('.cpuprofile'));
    if (file) profiles[side] = summarizeProfile(join(sideDir, file), window);
    else log(`bench: no CPU profile was written for the ${side}`);
  }
  return profiles;
}

/** Gathers the run's settings, dataset, measurements and verdicts into the JSON report. */
function buildReport(run: {
  startedAt: Date;
  loadBefore: number[];
  loadAfter: number[];
  seeded: Awaited<ReturnType<typeof seed>>;
  measured: Measured;
  answerChecks: { request: string; sameAnswer: boolean; bytes: number }[];
  scaling: Scaling;
  idle: Awaited<ReturnType<typeof sampleIdle>>;
  vmHwm: number | null;
  targets: ReturnType<typeof verdicts>;
  profiles: ReturnType<typeof readProfiles>;
}) {
  const { measured, idle, vmHwm, profiles } = run;
  return {
    command: [
      'npm run bench',
      ...(process.argv.length > 2 ? ['--'] : []),
      ...process.argv.slice(2),
    ].join(' '),
    startedAt: run.startedAt.toISOString(),
    machine: {
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model ?? null,
      node: process.version,
      platform: `${process.platform} ${process.arch}`,
      loadavgBefore: run.loadBefore.map(round2),
      loadavgAfter: run.loadAfter.map(round2),
    },
    database: process.env.MONGODB_URI ? 'MONGODB_URI' : 'embedded FerretDB 1.24.2 (SQLite backend)',
    settings: {
      quick,
      connections,
      pairs,
      roundSeconds,
      warmupRequests,
      gateway: `node dist/main.js (npm start), NODE_ENV=production, LOG_LEVEL=${values['log-level']}, RATE_LIMIT_PER_MINUTE and RATE_LIMIT_PER_ADDRESS_PER_MINUTE=${BENCH_RATE_LIMIT}`,
      baseline: `node --import tsx bench/baseline.ts (no authentication; command monitoring ${process.env.BASELINE_MONITOR_COMMANDS === 'true' ? 'on' : 'off'})`,
      cpuProfiled: { gateway: values['cpu-prof'], baseline: values['cpu-prof-baseline'] },
    },
    dataset: {
      size,
      counts: run.seeded.generated.counts,
      probes: run.seeded.generated.probes,
      seedRecords: run.seeded.outcome.records,
    },
    scenarios: measured.results,
    answerChecks: run.answerChecks,
    dbCommandScaling: run.scaling,
    gatewayMemory: {
      idleRssMB: round1(idle.gateway.rssBytes / 2 ** 20),
      idleHeapUsedMB: round1(idle.gateway.heapUsedBytes / 2 ** 20),
      peakHeapUsedMB: round1(measured.peakHeap),
      peakRssMB: round1(measured.peakRss),
      vmHwmMB: vmHwm === null ? null : round1(vmHwm / 2 ** 20),
    },
    baselineMemory: {
      idleRssMB: round1(idle.baseline.rssBytes / 2 ** 20),
      idleHeapUsedMB: round1(idle.baseline.heapUsedBytes / 2 ** 20),
      peakRssMB: round1(measured.baselinePeakRss),
    },
    targets: run.targets,
    ...(Object.keys(profiles).length > 0 ? { profiles } : {}),
  };
}

/** Writes the JSON report to --out and prints the table. */
function writeReport(report: ReturnType<typeof buildReport>) {
  writeFileSync(outFile, `${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write(`${formatReport(report)}\nresults: ${outFile}\n`);
}

/** Warns of miscounted rounds; fails the run on errors or different answers. */
function judge(report: ReturnType<typeof buildReport>) {
  const results = report.scenarios;
  const miscounted = results.filter((r) => r.rounds.some((x) => x.served !== x.responses));
  if (miscounted.length > 0) {
    log(
      `bench: WARNING the server counted other requests than autocannon got answers in ${miscounted.map((r) => r.id).join(', ')}`,
    );
  }
  const failures = results.filter(
    (r) =>
      !r.sameAnswer ||
      r.gateway.non2xx + r.gateway.errors + r.baseline.non2xx + r.baseline.errors > 0,
  );
  if (report.answerChecks.some((c) => !c.sameAnswer)) process.exitCode = 1;
  if (failures.length > 0) {
    log(`bench: errors or different answers in ${failures.map((f) => f.id).join(', ')}`);
    process.exitCode = 1;
  }
}

/** The run, step by step. */
async function main() {
  const startedAt = new Date();
  const loadBefore = loadavg();
  log(`bench: ${quick ? 'quick' : 'full'} run, dataset ${JSON.stringify(size)}`);
  const store = await startDatabase();
  const seeded = await seed(store);
  const servers = await startServers(store, seeded.outcome.workspaceId);
  const headers = { authorization: `Bearer ${seeded.key}`, 'content-type': 'application/json' };
  const idle = await sampleIdle(servers);
  const { probes } = seeded.generated;
  const scenarios = chooseScenarios(probes);
  const { answers, answerChecks } = await checkAnswers(servers, scenarios, probes, headers);
  const { scaling, scenarioCommands } = await countAllCommands(servers, scenarios, probes, headers);
  const measured = await measureScenarios(servers, scenarios, headers, answers, scenarioCommands);
  const vmHwm = procPeakRss(servers.gateway.child.pid);
  const loadAfter = loadavg();
  const targets = verdicts(measured, scaling, vmHwm, idle);
  await stopServers(store);
  const profiles = readProfiles(measured.profileWindow);
  const report = buildReport({
    startedAt,
    loadBefore,
    loadAfter,
    seeded,
    measured,
    answerChecks,
    scaling,
    idle,
    vmHwm,
    targets,
    profiles,
  });
  writeReport(report);
  judge(report);
}

// ---------------------------------------------------------------- printing

function pad(text: string, width: number, left = false) {
  return left ? text.padEnd(width) : text.padStart(width);
}

function formatReport(report: {
  machine: { cpus: number; loadavgBefore: number[]; loadavgAfter: number[] };
  settings: { connections: number; pairs: number; roundSeconds: number };
  scenarios: {
    id: string;
    title: string;
    responseBytes: number;
    sameAnswer: boolean;
    identicalBytes: boolean;
    gateway: {
      requestsPerSecond: number;
      latencyMs: { p50: number; p99: number };
      cpuMsPerRequest: number;
      dbCpuMsPerRequest: number | null;
      dbCommandsPerRequest: number;
      peakRssMB: number;
    };
    baseline: {
      requestsPerSecond: number;
      latencyMs: { p50: number; p99: number };
      cpuMsPerRequest: number;
      dbCpuMsPerRequest: number | null;
      dbCommandsPerRequest: number;
    };
    ratio: { throughput: number; cpuPerRequest: number };
  }[];
  dbCommandScaling: {
    question: string;
    variant: string;
    responseBytes: number;
    gatewayCommandsPerRequest: number;
    gatewayByCommand: Record<string, number>;
    baselineCommandsPerRequest: number;
  }[];
  answerChecks: { request: string; sameAnswer: boolean }[];
  gatewayMemory: {
    idleRssMB: number;
    idleHeapUsedMB: number;
    peakRssMB: number;
    peakHeapUsedMB: number;
    vmHwmMB: number | null;
  };
  baselineMemory: { idleRssMB: number; idleHeapUsedMB: number; peakRssMB: number };
  targets: { target: string; met: boolean; detail: unknown }[];
  profiles?: Partial<Record<'gateway' | 'baseline', ReturnType<typeof summarizeProfile>>>;
}): string {
  const lines: string[] = [];
  const cols: [string, number][] = [
    ['scenario', 36],
    ['resp KB', 8],
    ['req/s gw', 9],
    ['req/s base', 11],
    ['thr ×', 7],
    ['p50 gw/base ms', 16],
    ['p99 gw/base ms', 16],
    ['CPU ms/req gw', 14],
    ['base', 7],
    ['CPU ×', 7],
    ['DB cmds/req gw (base)', 22],
    ['RSS MB', 7],
  ];
  lines.push(
    '',
    `gateway vs baseline, ${report.settings.pairs} pairs of ${report.settings.roundSeconds}s rounds at ${report.settings.connections} connections; × = gateway / baseline (median of pairs); ${report.machine.cpus} CPUs, load ${report.machine.loadavgBefore[0]} → ${report.machine.loadavgAfter[0]}`,
    cols.map(([h, w], i) => pad(h, w, i === 0)).join(' '),
  );
  for (const s of report.scenarios) {
    const g = s.gateway;
    const b = s.baseline;
    lines.push(
      [
        pad(`${s.title}${s.sameAnswer ? '' : ' (!)'}`.slice(0, 36), 36, true),
        pad(String(round1(s.responseBytes / 1024)), 8),
        pad(String(g.requestsPerSecond), 9),
        pad(String(b.requestsPerSecond), 11),
        pad(s.ratio.throughput.toFixed(2), 7),
        pad(`${g.latencyMs.p50} / ${b.latencyMs.p50}`, 16),
        pad(`${g.latencyMs.p99} / ${b.latencyMs.p99}`, 16),
        pad(g.cpuMsPerRequest.toFixed(2), 14),
        pad(b.cpuMsPerRequest.toFixed(2), 7),
        pad(s.ratio.cpuPerRequest.toFixed(2), 7),
        pad(`${g.dbCommandsPerRequest} (${b.dbCommandsPerRequest})`, 22),
        pad(String(g.peakRssMB), 7),
      ].join(' '),
    );
  }
  const same = report.scenarios.filter((s) => s.sameAnswer).length;
  const identical = report.scenarios.filter((s) => s.identicalBytes).length;
  const checked = report.answerChecks.filter((c) => c.sameAnswer).length;
  lines.push(
    `same answers on both sides: ${same}/${report.scenarios.length} scenarios (${identical} byte for byte), ${checked}/${report.answerChecks.length} other requests`,
    ...report.answerChecks.filter((c) => !c.sameAnswer).map((c) => `  DIFFERENT: ${c.request}`),
  );
  lines.push(
    '',
    'database CPU ms per request (FerretDB process), gateway / baseline:',
    ...report.scenarios.map(
      (s) =>
        `  ${pad(s.id, 14, true)} ${s.gateway.dbCpuMsPerRequest ?? '-'} / ${s.baseline.dbCpuMsPerRequest ?? '-'}`,
    ),
    '',
    'DB commands per request by result size (gateway; baseline in parentheses):',
    ...report.dbCommandScaling.map(
      (r) =>
        `  ${pad(r.question, 15, true)} ${pad(r.variant, 34, true)} ${pad(`${round1(r.responseBytes / 1024)} KB`, 10)}  ${r.gatewayCommandsPerRequest} (${r.baselineCommandsPerRequest})  ${JSON.stringify(r.gatewayByCommand)}`,
    ),
    '',
    `RSS after start → peak under load: gateway ${report.gatewayMemory.idleRssMB} → ${report.gatewayMemory.peakRssMB} MB (VmHWM ${report.gatewayMemory.vmHwmMB ?? '-'} MB; V8 heap used ${report.gatewayMemory.idleHeapUsedMB} → ${report.gatewayMemory.peakHeapUsedMB} MB), baseline ${report.baselineMemory.idleRssMB} → ${report.baselineMemory.peakRssMB} MB (heap used ${report.baselineMemory.idleHeapUsedMB} MB at start)`,
    '',
    'targets:',
    ...report.targets.map(
      (t) => `  ${t.met ? 'met   ' : 'MISSED'} ${t.target}: ${JSON.stringify(t.detail)}`,
    ),
  );
  for (const [side, profile] of Object.entries(report.profiles ?? {})) {
    const share = (p: { share: number }) => pad(`${Math.round(p.share * 100)}%`, 5);
    lines.push('', `${side} CPU profile (busy ${profile.busyMs} ms): self time by package`);
    for (const p of profile.selfByPackage.slice(0, 12)) lines.push(`  ${share(p)} ${p.frame}`);
    lines.push('top self frames:');
    for (const p of profile.topSelf.slice(0, 15)) lines.push(`  ${share(p)} ${p.frame}`);
    lines.push('top inclusive frames:');
    for (const p of profile.topInclusive) lines.push(`  ${share(p)} ${p.frame}`);
    lines.push('top inclusive frames in src/ and bench/:');
    for (const p of profile.topInclusiveSrc) lines.push(`  ${share(p)} ${p.frame}`);
  }
  return lines.join('\n');
}

// ---------------------------------------------------------------- bounded, and clean

/** Stops whatever still runs and removes the run's temporary folder. */
async function cleanUp() {
  await stopChild(running.gateway);
  await stopChild(running.counter);
  await stopChild(running.baseline);
  await running.ferret?.stop();
  rmSync(dir, { recursive: true, force: true });
}

const watchdog = setTimeout(() => {
  log(`bench: stopped by the watchdog after ${WATCHDOG_MS / 1000}s`);
  running.gateway?.kill('SIGKILL');
  running.counter?.kill('SIGKILL');
  running.baseline?.kill('SIGKILL');
  void (running.ferret?.stop() ?? Promise.resolve()).finally(() => {
    rmSync(dir, { recursive: true, force: true });
    process.exit(2);
  });
}, WATCHDOG_MS);

try {
  await main();
} catch (error) {
  log(`bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  process.exitCode = 1;
} finally {
  await cleanUp();
  clearTimeout(watchdog);
}
