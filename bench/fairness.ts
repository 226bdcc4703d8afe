import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { parseCommandLine } from '../src/cli/help.js';
import { DEMO_DATASET, loadDemoDataset } from '../src/demo/seed.js';
import { type RunningFerretDb, startFerretDb } from '../src/embedded/ferretdb.js';
import { createGateway } from '../src/http/app.js';
import { databaseTimeouts, openDatabase } from '../src/store/database.js';
import { createApiKey } from '../src/store/workspaces.js';
import { seedDataset } from './generate.js';
import { median, procCpuSeconds, round1 } from './measure.js';

/**
 * One tenant's heavy queries against another's light ones, on an embedded FerretDB of its
 * own: `heavy` runs `--clients` concurrent loops of a full-history list of 100 facts over a
 * dataset of `--facts` facts for `--seconds`; `light` meanwhile lists the demo dataset
 * (8 facts) one request after another. Reported: the light list's latency alone and under
 * the load, the heavy answers by status and how long they took, and FerretDB's CPU in the
 * seconds after the heavy requests gave up (work the database went on doing for nobody).
 *
 *   npm run bench:fairness [-- --facts 8000 --clients 10 --seconds 10 --db-timeout 5000]
 *     [--concurrency N]   (the gateway's WORKSPACE_CONCURRENCY; 0: no limit)
 *     [--not-index-served] (the database without the store's scalar declarations)
 *
 * test/hardening/fairness.test.ts runs it small and checks what it reports;
 * docs/RELIABILITY.md ("Fairness and cancellation") records a run before and after.
 */

export interface FairnessReport {
  lightAloneMs: number;
  lightUnderLoad: {
    medianMs: number;
    maxMs: number;
    statuses: Record<string, number>;
    /**
     * The fewest heavy requests outstanding (sent, not yet answered: running or waiting for
     * a slot) when a light one was sent: above the heavy workspace's concurrency, every
     * light request met the heavy one's slots full and more waiting.
     */
    heavyOutstandingAtLeast: number;
  };
  heavy: { statuses: Record<string, number>; medianMs: number; maxMs: number; retryAfter: boolean };
  /** FerretDB's CPU seconds per second of wall time, right after the heavy requests ended. */
  databaseCpuAfter: number | null;
  /** ...and while they ran. */
  databaseCpuDuring: number | null;
}

export const tally = (statuses: (number | string)[]) =>
  statuses.reduce<Record<string, number>>((acc, s) => {
    acc[s] = (acc[s] ?? 0) + 1;
    return acc;
  }, {});

/** What both fairness scenarios set up: the store, its two tenants, the gateway. */
export interface FairnessOptions {
  facts: number;
  clients: number;
  seconds: number;
  dbTimeoutMs: number;
  /** The gateway's per-workspace concurrency (default: its own default). */
  workspaceConcurrency?: number;
  /**
   * false: the embedded database runs without the store's scalar declarations, so the heavy
   * list is decoded, sorted and counted in Go as a query no index serves would be (with
   * them, a list of 5,000 facts is index-served and no longer heavy).
   */
  indexServed?: boolean;
  log?: (line: string) => void;
  /** The gateway's logger: its error lines say why a request failed. */
  logger?: Logger;
}

interface FairnessStore {
  ferret: RunningFerretDb;
  gateway: ReturnType<typeof createGateway>;
  /** A key of the workspace with the big dataset (`big`), and one of the demo's. */
  heavyKey: string;
  lightKey: string;
}

/**
 * An embedded FerretDB of its own with the heavy workspace's dataset of `facts` facts and
 * the light one's demo dataset, and a gateway over it, for `run`; everything is removed
 * afterwards.
 */
export async function withFairnessStore<T>(
  options: FairnessOptions,
  run: (store: FairnessStore) => Promise<T>,
): Promise<T> {
  const log = options.log ?? (() => {});
  const dir = mkdtempSync(join(tmpdir(), 'memory-gateway-fairness-'));
  let ferret: RunningFerretDb | null = null;
  try {
    ferret =
      options.indexServed === false
        ? await startFerretDb(join(dir, 'db'), undefined, undefined, null)
        : await startFerretDb(join(dir, 'db'));
    const database = await openDatabase(
      ferret.uri,
      'fairness',
      databaseTimeouts(options.dbTimeoutMs),
    );
    try {
      const db = database.collections;
      log(`seeding ${options.facts} facts...`);
      await seedDataset(db, 'heavy', {
        dataset: 'big',
        facts: options.facts,
        entities: Math.round(options.facts * 0.05),
        episodes: Math.round(options.facts * 0.05),
        memories: 20,
        seed: 7,
      });
      await loadDemoDataset(db, 'light', new Date());
      const gateway = createGateway({
        database,
        dbTimeoutMs: options.dbTimeoutMs,
        ...(options.logger ? { logger: options.logger } : {}),
        ...(options.workspaceConcurrency === undefined
          ? {}
          : { workspaceConcurrency: options.workspaceConcurrency }),
      });
      try {
        return await run({
          ferret,
          gateway,
          heavyKey: (await createApiKey(db, 'heavy', ['read'])).key,
          lightKey: (await createApiKey(db, 'light', ['read'])).key,
        });
      } finally {
        gateway.beginShutdown();
      }
    } finally {
      await database.close();
    }
  } finally {
    await ferret?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

export function runFairness(options: FairnessOptions): Promise<FairnessReport> {
  const log = options.log ?? (() => {});
  return withFairnessStore(options, async ({ ferret, gateway, heavyKey, lightKey }) => {
    const get = async (path: string, key: string) => {
      const started = performance.now();
      const response = await gateway.fetch(
        new Request(`http://127.0.0.1${path}`, { headers: { authorization: `Bearer ${key}` } }),
      );
      await response.arrayBuffer();
      return {
        status: response.status,
        ms: performance.now() - started,
        retryAfter: response.headers.get('retry-after'),
      };
    };
    const light = () => get(`/v1/memory/semantic/datasets/${DEMO_DATASET}/facts`, lightKey);
    const heavyPath = '/v1/memory/semantic/datasets/big/facts?limit=100&includeInvalidated=true';

    const alone: number[] = [];
    for (let i = 0; i < 10; i++) alone.push((await light()).ms);
    let heavyOutstanding = 0;
    const heavyOne = async () => {
      heavyOutstanding++;
      try {
        return await get(heavyPath, heavyKey);
      } finally {
        heavyOutstanding--;
      }
    };

    log(`heavy load: ${options.clients} clients for ${options.seconds} s`);
    const until = performance.now() + options.seconds * 1000;
    const heavy: Awaited<ReturnType<typeof get>>[] = [];
    const lightAnswers: (Awaited<ReturnType<typeof get>> & { heavyOutstanding: number })[] = [];
    const cpuStart = procCpuSeconds(ferret.pid);
    const loadStart = performance.now();
    await Promise.all([
      ...Array.from({ length: options.clients }, async () => {
        while (performance.now() < until) heavy.push(await heavyOne());
      }),
      (async () => {
        while (performance.now() < until) {
          const outstanding = heavyOutstanding;
          lightAnswers.push({ ...(await light()), heavyOutstanding: outstanding });
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      })(),
    ]);
    const loadEnd = performance.now();
    const cpuEnd = procCpuSeconds(ferret.pid);
    // What the database does once nobody waits for it any more.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const afterStart = procCpuSeconds(ferret.pid);
    const afterStarted = performance.now();
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const afterEnd = procCpuSeconds(ferret.pid);
    const afterSeconds = (performance.now() - afterStarted) / 1000;
    const perSecond = (a: number | null, b: number | null, seconds: number) =>
      a === null || b === null ? null : Math.round(((b - a) / seconds) * 100) / 100;
    return {
      lightAloneMs: round1(median(alone)),
      lightUnderLoad: {
        medianMs: round1(median(lightAnswers.map((a) => a.ms))),
        maxMs: round1(Math.max(...lightAnswers.map((a) => a.ms))),
        statuses: tally(lightAnswers.map((a) => a.status)),
        heavyOutstandingAtLeast: Math.min(...lightAnswers.map((a) => a.heavyOutstanding)),
      },
      heavy: {
        statuses: tally(heavy.map((a) => a.status)),
        medianMs: round1(median(heavy.map((a) => a.ms))),
        maxMs: round1(Math.max(...heavy.map((a) => a.ms))),
        retryAfter: heavy.filter((a) => a.status === 429).every((a) => a.retryAfter !== null),
      },
      databaseCpuDuring: perSecond(cpuStart, cpuEnd, (loadEnd - loadStart) / 1000),
      databaseCpuAfter: perSecond(afterStart, afterEnd, afterSeconds),
    };
  });
}

/**
 * The options both fairness benches read from their command line, with their defaults;
 * the store is index-served unless `indexServedByDefault` is false (then `--index-served`
 * turns it on) or `--not-index-served` is given. `--help` prints the doc comment of the
 * bench at `moduleUrl`.
 */
export function fairnessArgs(
  moduleUrl: string,
  defaults: {
    facts: number;
    seconds: number;
    dbTimeoutMs: number;
    indexServedByDefault: boolean;
  },
): FairnessOptions {
  const { values } = parseCommandLine(moduleUrl, {
    options: {
      facts: { type: 'string', default: String(defaults.facts) },
      clients: { type: 'string', default: '10' },
      seconds: { type: 'string', default: String(defaults.seconds) },
      'db-timeout': { type: 'string', default: String(defaults.dbTimeoutMs) },
      concurrency: { type: 'string' },
      'index-served': { type: 'boolean', default: defaults.indexServedByDefault },
      'not-index-served': { type: 'boolean', default: false },
    },
  });
  return {
    facts: Number(values.facts),
    clients: Number(values.clients),
    seconds: Number(values.seconds),
    dbTimeoutMs: Number(values['db-timeout']),
    ...(values.concurrency === undefined
      ? {}
      : { workspaceConcurrency: Number(values.concurrency) }),
    indexServed: values['index-served'] && !values['not-index-served'],
    log: (line) => process.stderr.write(`${line}\n`),
  };
}

if (process.argv[1]?.endsWith('fairness.ts')) {
  const report = await runFairness(
    fairnessArgs(import.meta.url, {
      facts: 8000,
      seconds: 10,
      dbTimeoutMs: 5000,
      indexServedByDefault: true,
    }),
  );
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
}
