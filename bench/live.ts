import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseCommandLine } from '../src/cli/help.js';
import { type RunningFerretDb, startFerretDb } from '../src/embedded/ferretdb.js';
import { openDatabase } from '../src/store/database.js';
import { createApiKey } from '../src/store/workspaces.js';
import { procCpuSeconds, round1, round2 } from './measure.js';

/**
 * Live updates under load (docs/PERFORMANCE.md, "Live updates"), on an embedded FerretDB
 * of its own with two gateway processes (dist/main.js) on it: a writer records one-fact
 * episodes through gateway A at a steady rate while N subscribers follow over GraphQL over
 * SSE, on A itself ("same process": woken by A's own appends) or on B ("across processes":
 * B's watches poll every LIVE_POLL_MS). For each scenario: delivery latency p50 / p99 from
 * the write's acknowledgement to the event's arrival, the subscribers' gateway's CPU per
 * delivered event, its RSS, and its database commands per second; then the same clients
 * polling `facts` once a second instead (what a front end does without subscriptions),
 * measured the same way on B.
 *
 *   npm run bench:live [-- --seconds 8 --rate 5 --poll-ms 1000] [--quick]
 *     [--clients 100,1000] [--datasets 1,100] [--modes same,across,polling]
 *     [--cpu-prof-dir DIR]
 *
 * The gateways run as `npm start` runs them (built to dist/ first, NODE_ENV=production);
 * --cpu-prof-dir runs them under `node --cpu-prof`, writing a profile each into DIR.
 *
 * Scenarios: 100 and 1,000 subscribers, on one dataset and spread over 100 datasets.
 */

const ROOT = new URL('..', import.meta.url).pathname;

interface Gateway {
  child: ChildProcess;
  base: string;
}

/** A gateway as `npm start` runs it (dist/, built by runLiveBench), as bench/bench.ts does. */
function startGateway(
  uri: string,
  db: string,
  pollMs: number,
  profileDir: string | undefined,
): Promise<Gateway> {
  const profile = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
  const child = spawn(process.execPath, [...profile, 'dist/main.js'], {
    cwd: ROOT,
    env: {
      ...process.env,
      MONGODB_URI: uri,
      MONGODB_DB: db,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      NODE_ENV: 'production',
      RATE_LIMIT_PER_MINUTE: '0',
      RATE_LIMIT_PER_ADDRESS_PER_MINUTE: '0',
      WORKSPACE_CONCURRENCY: '0',
      LIVE_POLL_MS: String(pollMs),
      LIVE_STREAMS: '100000',
      LIVE_STREAMS_PER_KEY: '100000',
      // A thousand subscribers from one address and key: no connection cap.
      LIVE_CONNECTIONS_PER_KEY: '0',
      LIVE_CONNECTIONS_PER_ADDRESS: '0',
      DB_COMMAND_METRICS: 'true',
    },
  });
  return new Promise((resolve, reject) => {
    let output = '';
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on http:\/\/(127\.0\.0\.1:\d+)/.exec(output);
      if (match) resolve({ child, base: match[1]! });
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.stderr!.on('data', (chunk: Buffer) => {
      if (process.env.BENCH_LIVE_GATEWAY_LOG) process.stderr.write(chunk);
    });
    child.once('exit', (code) => reject(new Error(`gateway exited (${code}):\n${output}`)));
  });
}

/** Shuts a gateway down as an operator would, killing it if it has not exited within 10 s. */
async function stopGateway({ child }: Gateway): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

/** Resident memory of a process now and at its peak, in MB (from /proc). */
function rssMb(pid: number | undefined): { now: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { now: round1(kb('VmRSS') / 1024), peak: round1(kb('VmHWM') / 1024) };
}

/** The database commands a gateway has sent so far (its DB_COMMAND_METRICS histogram). */
async function commandsSent(gateway: Gateway): Promise<number> {
  const text = await (await fetch(`http://${gateway.base}/metrics`)).text();
  let total = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith('gateway_db_command_duration_seconds_count')) {
      total += Number(line.slice(line.lastIndexOf(' ') + 1));
    }
  }
  return total;
}

const percentile = (xs: number[], p: number) => {
  if (xs.length === 0) return Number.NaN;
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
};

const SUBSCRIPTION =
  'subscription ($dataset: String!) { datasetChanges(dataset: $dataset) { kind fact { object } } }';

/** One subscriber: calls `onFact` with each FACT_RECORDED object as it arrives. */
async function subscribe(
  gateway: Gateway,
  key: string,
  dataset: string,
  onFact: (object: string) => void,
  stop: AbortSignal,
): Promise<void> {
  const response = await fetch(`http://${gateway.base}/graphql`, {
    method: 'POST',
    headers: {
      accept: 'text/event-stream',
      'content-type': 'application/json',
      authorization: `Bearer ${key}`,
    },
    body: JSON.stringify({ query: SUBSCRIPTION, variables: { dataset } }),
    signal: stop,
  });
  if (response.status !== 200) {
    throw new Error(`subscription answered ${response.status}: ${await response.text()}`);
  }
  void (async () => {
    let buffer = '';
    const decoder = new TextDecoder();
    try {
      const reader = response.body!.getReader();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buffer += decoder.decode(value, { stream: true });
        let end = buffer.indexOf('\n\n');
        while (end >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = block.split('\n').find((line) => line.startsWith('data: {'));
          if (data) {
            const object = (
              JSON.parse(data.slice(6)) as {
                data?: { datasetChanges?: { fact?: { object: string } | null } };
              }
            ).data?.datasetChanges?.fact?.object;
            if (object) onFact(object);
          }
          end = buffer.indexOf('\n\n');
        }
      }
    } catch {
      // aborted at the end of the scenario
    }
  })();
}

const MODES = {
  same: 'same process',
  across: 'across processes',
  polling: 'polling facts every second',
} as const;
type Mode = keyof typeof MODES;

interface ScenarioReport {
  scenario: string;
  clients: number;
  datasets: number;
  mode: (typeof MODES)[Mode];
  writes: number;
  delivered: number;
  expected: number;
  latencyMs: { p50: number; p99: number; max: number };
  gatewayCpuMsPerEvent: number;
  gatewayCpuPerSecond: number;
  gatewayRssMb: { now: number; peak: number };
  dbCommandsPerSecond: number;
}

async function runScenario(options: {
  writer: Gateway;
  readers: Gateway;
  mode: ScenarioReport['mode'];
  clients: number;
  datasets: number;
  seconds: number;
  rate: number;
  writerKey: string;
  readerKey: string;
  log: (line: string) => void;
}): Promise<ScenarioReport> {
  const { writer, readers, clients, datasets } = options;
  const names = Array.from({ length: datasets }, (_, i) => `live-${randomUUID().slice(0, 8)}-${i}`);
  const acked = new Map<string, number>();
  const latencies: number[] = [];
  const seen = new Map<number, Set<string>>();
  let delivered = 0;
  const stop = new AbortController();
  // One signal for every client of the scenario: a thousand listeners on it is the design.
  setMaxListeners(0, stop.signal);
  const record = (client: number, object: string, at: number) => {
    const mine = seen.get(client) ?? new Set();
    seen.set(client, mine);
    if (mine.has(object)) return;
    mine.add(object);
    delivered++;
    const ack = acked.get(object);
    // Seen before its write was acknowledged (same process): delivered at once.
    latencies.push(ack === undefined ? 0 : Math.max(0, at - ack));
  };
  // Every dataset exists before anyone follows it.
  for (const name of names) await write(writer, options.writerKey, name, `seed-${name}`);

  const polling = options.mode === 'polling facts every second';
  const pollers: Promise<void>[] = [];
  if (polling) {
    for (let c = 0; c < clients; c++) {
      const dataset = names[c % datasets]!;
      pollers.push(
        (async () => {
          // Spread over the second, as front ends opened at different moments are.
          await new Promise((r) => setTimeout(r, Math.random() * 1000));
          while (!stop.signal.aborted) {
            const started = performance.now();
            try {
              const response = await fetch(`http://${readers.base}/graphql`, {
                method: 'POST',
                headers: {
                  'content-type': 'application/json',
                  authorization: `Bearer ${options.readerKey}`,
                },
                body: JSON.stringify({
                  query:
                    'query ($d: String!) { dataset(name: $d) { facts(first: 100) { edges { node { object } } } } }',
                  variables: { d: dataset },
                }),
                signal: stop.signal,
              });
              const body = (await response.json()) as {
                data?: { dataset?: { facts: { edges: { node: { object: string } }[] } } };
              };
              const now = performance.now();
              for (const edge of body.data?.dataset?.facts.edges ?? []) {
                if (edge.node.object.startsWith('write-')) record(c, edge.node.object, now);
              }
            } catch {
              if (stop.signal.aborted) return;
            }
            const wait = 1000 - (performance.now() - started);
            if (wait > 0) await new Promise((r) => setTimeout(r, wait));
          }
        })(),
      );
    }
  } else {
    for (let c = 0; c < clients; c++) {
      await subscribe(
        readers,
        options.readerKey,
        names[c % datasets]!,
        (object) => {
          if (object.startsWith('write-')) record(c, object, performance.now());
        },
        stop.signal,
      );
    }
  }
  await new Promise((r) => setTimeout(r, 1500));

  const pid = readers.child.pid;
  const cpuStart = procCpuSeconds(pid);
  const commandsStart = await commandsSent(readers);
  const started = performance.now();
  let writes = 0;
  const expectedPerWrite = clients / datasets;
  while (performance.now() - started < options.seconds * 1000) {
    const object = `write-${writes}`;
    const dataset = names[writes % datasets]!;
    const tick = performance.now();
    await write(writer, options.writerKey, dataset, object);
    acked.set(object, performance.now());
    writes++;
    const next = tick + 1000 / options.rate - performance.now();
    if (next > 0) await new Promise((r) => setTimeout(r, next));
  }
  // What is still on its way (a poll period, a slow delivery).
  await new Promise((r) => setTimeout(r, 2500));
  const elapsed = (performance.now() - started) / 1000;
  const cpuEnd = procCpuSeconds(pid);
  const commandsEnd = await commandsSent(readers);
  const rss = rssMb(pid);
  stop.abort();
  await Promise.allSettled(pollers);
  await new Promise((r) => setTimeout(r, 500));
  const cpuSeconds = cpuStart === null || cpuEnd === null ? Number.NaN : cpuEnd - cpuStart;
  const report: ScenarioReport = {
    scenario: `${clients} clients, ${datasets === 1 ? 'one dataset' : `${datasets} datasets`}`,
    clients,
    datasets,
    mode: options.mode,
    writes,
    delivered,
    expected: Math.round(writes * expectedPerWrite),
    latencyMs: {
      p50: round1(percentile(latencies, 50)),
      p99: round1(percentile(latencies, 99)),
      max: round1(Math.max(0, ...latencies)),
    },
    gatewayCpuMsPerEvent: delivered ? round2((cpuSeconds * 1000) / delivered) : Number.NaN,
    gatewayCpuPerSecond: round2(cpuSeconds / elapsed),
    gatewayRssMb: rss,
    dbCommandsPerSecond: round1((commandsEnd - commandsStart) / elapsed),
  };
  options.log(JSON.stringify(report));
  return report;
}

async function write(gateway: Gateway, key: string, dataset: string, object: string) {
  const episodeId = randomUUID();
  try {
    await writeOnce(gateway, key, dataset, object, episodeId);
  } catch {
    // A kept-alive connection the gateway closed as the request left: once more (the
    // episode id makes a repeat harmless).
    await writeOnce(gateway, key, dataset, object, episodeId);
  }
}

async function writeOnce(
  gateway: Gateway,
  key: string,
  dataset: string,
  object: string,
  episodeId: string,
) {
  const response = await fetch(`http://${gateway.base}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({
      query:
        'mutation ($d: String!, $i: RecordEpisodeInput!) { recordEpisode(dataset: $d, input: $i) { episode { episodeId } } }',
      variables: {
        d: dataset,
        i: {
          episode: {
            episodeId,
            occurredAt: '2026-11-01T00:00:00.000Z',
            source: 'chat',
            content: `user: ${object}`,
          },
          facts: [
            {
              subject: 'user',
              predicate: 'noted',
              object,
              confidence: 0.9,
              validAt: '2026-11-01T00:00:00.000Z',
            },
          ],
        },
      },
    }),
  });
  const body = (await response.json()) as { errors?: unknown };
  if (body.errors) throw new Error(`write failed: ${JSON.stringify(body.errors)}`);
}

export async function runLiveBench(options: {
  seconds: number;
  rate: number;
  pollMs: number;
  clients: number[];
  datasets: number[];
  modes: Mode[];
  log?: (line: string) => void;
  /** Both gateways run under `node --cpu-prof`, writing their profiles here at the end. */
  profileDir?: string | undefined;
}): Promise<ScenarioReport[]> {
  const log = options.log ?? (() => {});
  // Node's fetch opens as many connections to one origin as it is asked for: a thousand
  // streams are a thousand connections.
  const dir = mkdtempSync(join(tmpdir(), 'memory-gateway-live-'));
  let ferret: RunningFerretDb | null = null;
  const gateways: Gateway[] = [];
  process.once('exit', () => {
    for (const gateway of gateways) gateway.child.kill('SIGKILL');
  });
  try {
    ferret = await startFerretDb(join(dir, 'db'));
    const database = await openDatabase(ferret.uri, 'live');
    const writerKey = (await createApiKey(database.collections, 'acme', ['read', 'write'])).key;
    const readerKey = (await createApiKey(database.collections, 'acme', ['read'])).key;
    await database.close();
    const built = spawnSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, encoding: 'utf8' });
    if (built.status !== 0) throw new Error(`npm run build failed: ${built.stderr}`);
    const a = await startGateway(ferret.uri, 'live', options.pollMs, options.profileDir);
    const b = await startGateway(ferret.uri, 'live', options.pollMs, options.profileDir);
    gateways.push(a, b);
    const reports: ScenarioReport[] = [];
    for (const clients of options.clients) {
      for (const datasets of options.datasets) {
        for (const mode of options.modes.map((m) => MODES[m])) {
          log(`${clients} clients over ${datasets} dataset(s), ${mode}...`);
          reports.push(
            await runScenario({
              writer: a,
              readers: mode === 'same process' ? a : b,
              mode,
              clients,
              datasets,
              seconds: options.seconds,
              rate: options.rate,
              writerKey,
              readerKey,
              log,
            }),
          );
        }
      }
    }
    return reports;
  } finally {
    // SIGTERM first, so that a profiled gateway (--cpu-prof-dir) writes its profile.
    await Promise.all(gateways.map(stopGateway));
    await ferret?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1]?.endsWith('live.ts')) {
  const { values } = parseCommandLine(import.meta.url, {
    options: {
      seconds: { type: 'string', default: '8' },
      rate: { type: 'string', default: '5' },
      'poll-ms': { type: 'string', default: '1000' },
      quick: { type: 'boolean', default: false },
      clients: { type: 'string' },
      datasets: { type: 'string' },
      modes: { type: 'string' },
      'cpu-prof-dir': { type: 'string' },
    },
  });
  const list = (value: string | undefined) => value?.split(',').map((v) => v.trim());
  // It stops by itself, whatever happens: the gateways and FerretDB are its children.
  setTimeout(
    () => {
      process.stderr.write('bench:live: watchdog, stopping\n');
      process.exit(1);
    },
    (values.quick ? 10 : 40) * 60_000,
  ).unref();
  const reports = await runLiveBench({
    seconds: values.quick ? 4 : Number(values.seconds),
    rate: Number(values.rate),
    pollMs: Number(values['poll-ms']),
    clients: list(values.clients)?.map(Number) ?? (values.quick ? [100] : [100, 1000]),
    datasets: list(values.datasets)?.map(Number) ?? [1, 100],
    modes: (list(values.modes) as Mode[] | undefined) ?? ['same', 'across', 'polling'],
    log: (line) => process.stderr.write(`${line}\n`),
    profileDir: values['cpu-prof-dir'],
  });
  process.stdout.write(`${JSON.stringify(reports, null, 2)}\n`);
}
