import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BSON, type Collection, type Document } from 'mongodb';
import { parseCommandLine } from '../src/cli/help.js';
import { type RunningFerretDb, startFerretDb } from '../src/embedded/ferretdb.js';
import { BATCH_SIZE } from '../src/store/bulkWrite.js';
import type { Collections } from '../src/store/collections.js';
import { type Database, openDatabase } from '../src/store/database.js';
import { datasetDocumentId } from '../src/store/datasets.js';
import type { DatasetDoc, FactDoc, FactRecordDoc, WorkspaceDoc } from '../src/store/documents.js';
import { recordsFromFactDocs } from '../src/store/factRecords.js';
import { derive } from '../src/store/materialise.js';
import { workspaceIdFor } from '../src/store/workspaces.js';
import { parseImportFile } from '../src/transfer/format.js';
import { importJsonl } from '../src/transfer/importJsonl.js';
import { generateDataset } from './generate.js';
import {
  type CpuProfile,
  median,
  procCpuSeconds,
  round1,
  round3,
  summarizeCpuProfiles,
} from './measure.js';

/**
 * `npm run bench:import [-- --quick]`: import throughput against the raw driver's limit.
 *
 * One generated JSONL file (bench/generate.ts: facts in every bi-temporal state over
 * entities and episodes; no memories unless --memories) is written to fresh databases of
 * the same server, alternately by
 *
 *   A. `importJsonl`: the whole import path (split, JSON.parse, zod validation, document
 *      building, then `writeBulk`'s unordered bulkWrite batches), and
 *   B. raw `insertMany` (ordered: false, batches of the import's BATCH_SIZE, one batch at
 *      a time like the import) of the very same documents: the workspace, the datasets,
 *      the entities, the episodes, the facts' records and the history derived from them,
 *      and the memories, produced once, before timing, by the same parser with the same `now`.
 *
 * Both databases get the store's indexes (openDatabase) before their round, so both pay
 * the same index maintenance. Rounds go A B A B..., each on a database created for it and
 * dropped after it. The first pair also checks that A and B left identical data (every
 * document of every collection, compared with keys sorted). Per round it records wall
 * time, this process's CPU (`process.cpuUsage`) and the FerretDB process's CPU (/proc),
 * and reports the median over pairs of the ratio of rates (facts/s import / facts/s raw)
 * with its range: a table on stdout and JSON at --out.
 *
 * Loopback only; starts its own FerretDB in a temporary folder (or uses MONGODB_URI, in
 * databases it drops); a watchdog ends the run if it overruns.
 *
 *   npm run bench:import -- [--quick] [--facts N] [--pairs N] [--memories N] [--seed N]
 *     [--out bench-import-results.json] [--cpu-prof] [--watchdog SECONDS]
 *
 * --cpu-prof samples this process (V8 inspector) during the timed rounds of each side and
 * adds a summary of each side's profile (the profiler slows both sides: look, don't score).
 */

const { values } = parseCommandLine(import.meta.url, {
  options: {
    quick: { type: 'boolean', default: false },
    out: { type: 'string' },
    facts: { type: 'string' },
    pairs: { type: 'string' },
    memories: { type: 'string', default: '0' },
    seed: { type: 'string', default: '42' },
    watchdog: { type: 'string' },
    'cpu-prof': { type: 'boolean', default: false },
  },
});

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const quick = values.quick;
const facts = Number(values.facts ?? (quick ? 10_000 : 100_000));
const pairs = Number(values.pairs ?? 2);
const memories = Number(values.memories);
const seed = Number(values.seed);
/** The whole run stops by itself past this, whatever happens. */
const WATCHDOG_MS = Number(values.watchdog ?? (quick ? 170 : 1800)) * 1000;
const outFile = values.out ? resolve(values.out) : join(ROOT, 'bench-import-results.json');
const WORKSPACE = 'bench';
const DATASET = 'bench_user';
/** Entities and episodes in the proportions of bench/generate.ts's full size (1,500 facts). */
const size = {
  facts,
  entities: Math.max(2, Math.round(facts / 6)),
  episodes: Math.max(1, Math.round(facts / 10)),
  memories,
};

for (const [name, v, max] of [
  ['facts', facts, 10_000_000],
  ['pairs', pairs, 100],
  ['memories', memories + 1, 10_000_000],
  ['watchdog', WATCHDOG_MS, 86_400_000],
] as const) {
  if (!Number.isInteger(v) || v <= 0 || v > max) throw new Error(`bad --${name}`);
}

const log = (line: string) => process.stderr.write(`${line}\n`);
const startedAt = new Date();
const dir = mkdtempSync(join(tmpdir(), 'memory-gateway-bench-import-'));
const running: { ferret: RunningFerretDb | null } = { ferret: null };

// ---------------------------------------------------------------- measurements

/** Leftover garbage from the previous round should not be collected on this one's clock. */
const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});

// ---------------------------------------------------------------- CPU profile summary

/** Per side, its rounds' profiles together (line numbers left out: tsx transpiles). */
const summarizeProfiles = (profiles: CpuProfile[]) =>
  summarizeCpuProfiles(profiles, { lineNumbers: false });

// ---------------------------------------------------------------- the two sides

type Side = 'import' | 'raw';

/** Everything the import writes, as documents, from one parse of the file. */
interface Documents {
  workspaces: WorkspaceDoc[];
  datasets: DatasetDoc[];
  entities: Document[];
  episodes: Document[];
  facts: Document[];
  factRecords: FactRecordDoc[];
  memories: Document[];
}
const COLLECTIONS = [
  'workspaces',
  'datasets',
  'entities',
  'episodes',
  'facts',
  'factRecords',
  'memories',
] as const satisfies readonly (keyof Documents & keyof Collections)[];

/**
 * The documents `importJsonl` stores for `content` in a fresh database: the parser's
 * output, plus the workspace and dataset records, the fact records `writeBulk` adds and the
 * history derived from them (the
 * first pair's data check proves that this re-statement matches).
 */
function documentsOf(content: string, now: Date): Documents {
  const workspaceId = workspaceIdFor(WORKSPACE);
  const parsed = parseImportFile(content, { workspaceId, defaultDataset: null, now });
  if (!parsed.ok)
    throw new Error(`the generated file does not parse: ${parsed.errors[0]?.message}`);
  const docs: Documents = {
    workspaces: [{ _id: workspaceId, name: WORKSPACE, createdAt: now }],
    datasets: [...parsed.datasets].map((name) => ({
      _id: datasetDocumentId(workspaceId, name),
      workspaceId,
      name,
      createdAt: now,
    })),
    entities: [],
    episodes: [],
    facts: [],
    factRecords: [],
    memories: [],
  };
  const facts: FactDoc[] = [];
  for (const r of parsed.records) {
    if (r.kind === 'entity') docs.entities.push(r.doc);
    else if (r.kind === 'episode') docs.episodes.push(r.doc);
    else if (r.kind === 'memory') docs.memories.push(r.doc);
    else facts.push(r.doc);
  }
  // Facts are stored as their records and the history derived from them, seen through.
  const records = recordsFromFactDocs(facts).map((r) => ({ ...r, materialised: true }));
  docs.factRecords.push(...records);
  for (const dataset of parsed.datasets) {
    const own = records.filter((r) => r.dataset === dataset);
    const derived = derive({ workspaceId, dataset }, own);
    docs.facts.push(...[...derived.docs.keys()].map(derived.build));
  }
  return docs;
}

async function insertRaw(db: Collections, docs: Documents): Promise<void> {
  for (const name of COLLECTIONS) {
    const collection = db[name] as unknown as Collection<Document>;
    const all: Document[] = docs[name];
    for (let i = 0; i < all.length; i += BATCH_SIZE) {
      await collection.insertMany(all.slice(i, i + BATCH_SIZE), { ordered: false });
    }
  }
}

/** A digest of every document of the collections, independent of field and row order. */
async function digestOf(
  db: Collections,
): Promise<{ sha256: string; counts: Record<string, number> }> {
  const canonical = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(canonical);
    if (v && typeof v === 'object') {
      return Object.fromEntries(
        Object.keys(v)
          .sort()
          .map((k) => [k, canonical((v as Record<string, unknown>)[k])]),
      );
    }
    return v;
  };
  const hash = createHash('sha256');
  const counts: Record<string, number> = {};
  for (const name of COLLECTIONS) {
    const collection = db[name] as unknown as Collection<Document>;
    const rows: string[] = [];
    for await (const doc of collection.find({})) {
      rows.push(JSON.stringify(canonical(BSON.EJSON.serialize(doc, { relaxed: false }))));
    }
    rows.sort();
    counts[name] = rows.length;
    hash.update(`${name}\n${rows.join('\n')}\n`);
  }
  return { sha256: hash.digest('hex'), counts };
}

interface RoundResult {
  pair: number;
  side: Side;
  wallMs: number;
  nodeCpuMs: number;
  ferretCpuMs: number | null;
  factsPerSecond: number;
  documentsPerSecond: number;
}

// ---------------------------------------------------------------- the run

/** The rounds measured so far (a run stopped by the watchdog still reports them). */
const rounds: RoundResult[] = [];

async function main() {
  const loadBefore = loadavg();
  log(
    `bench:import: ${quick ? 'quick' : 'full'} run, ${pairs} pairs, dataset ${JSON.stringify(size)}`,
  );

  // One `now` for the file, the parse and every import, so all rounds write equal data.
  const now = new Date(Math.floor(Date.now() / 86_400_000) * 86_400_000);
  const generated = generateDataset({ ...size, dataset: DATASET, seed, now });
  const content = `${generated.lines.join('\n')}\n`;
  const docs = documentsOf(content, now);
  const documentCount = COLLECTIONS.reduce((s, name) => s + docs[name].length, 0);
  const factCount = docs.facts.length;
  log(
    `bench:import: ${generated.lines.length} lines, ${round1(Buffer.byteLength(content) / 2 ** 20)} MB; documents ${JSON.stringify(Object.fromEntries(COLLECTIONS.map((n) => [n, docs[n].length])))}`,
  );

  if (!process.env.MONGODB_URI) running.ferret = await startFerretDb(join(dir, 'db'));
  const uri = process.env.MONGODB_URI ?? running.ferret!.uri;
  const ferretPid = running.ferret?.pid;
  const runId = Date.now().toString(36);

  const session = values['cpu-prof'] ? new Session() : null;
  if (session) {
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 500 });
  }
  const profiles: Record<Side, CpuProfile[]> = { import: [], raw: [] };

  const digests: Partial<Record<Side, Awaited<ReturnType<typeof digestOf>>>> = {};
  for (let pair = 1; pair <= pairs; pair++) {
    for (const side of ['import', 'raw'] as const) {
      const database: Database = await openDatabase(uri, `bench_import_${runId}_${pair}_${side}`);
      try {
        gc();
        if (session) await session.post('Profiler.start');
        const cpu0 = process.cpuUsage();
        const ferret0 = procCpuSeconds(ferretPid);
        const t0 = performance.now();
        if (side === 'import') {
          const outcome = await importJsonl(database.collections, {
            workspace: WORKSPACE,
            content,
            now,
          });
          if (!outcome.ok) throw new Error(`import failed: ${outcome.errors[0]?.message}`);
          if (outcome.counts.facts !== factCount) {
            throw new Error(`import wrote ${outcome.counts.facts} facts, not ${factCount}`);
          }
        } else {
          await insertRaw(database.collections, docs);
        }
        const wallMs = performance.now() - t0;
        const cpu = process.cpuUsage(cpu0);
        const ferret1 = procCpuSeconds(ferretPid);
        if (session) {
          const { profile } = await session.post('Profiler.stop');
          profiles[side].push(profile as CpuProfile);
        }
        const result: RoundResult = {
          pair,
          side,
          wallMs: Math.round(wallMs),
          nodeCpuMs: Math.round((cpu.user + cpu.system) / 1000),
          ferretCpuMs:
            ferret0 === null || ferret1 === null ? null : Math.round((ferret1 - ferret0) * 1000),
          factsPerSecond: Math.round(factCount / (wallMs / 1000)),
          documentsPerSecond: Math.round(documentCount / (wallMs / 1000)),
        };
        rounds.push(result);
        log(`bench:import: pair ${pair} ${side}: ${JSON.stringify(result)}`);
        if (pair === 1) {
          const t = performance.now();
          digests[side] = await digestOf(database.collections);
          log(
            `bench:import: ${side} data digest ${digests[side].sha256.slice(0, 16)} ${JSON.stringify(digests[side].counts)} (read in ${Math.round(performance.now() - t)} ms)`,
          );
        }
      } finally {
        await database.db.dropDatabase();
        await database.close();
      }
    }
  }
  session?.disconnect();

  const sameData =
    digests.import !== undefined &&
    digests.raw !== undefined &&
    digests.import.sha256 === digests.raw.sha256;
  const ratios = Array.from({ length: pairs }, (_, i) => {
    const a = rounds.find((r) => r.pair === i + 1 && r.side === 'import')!;
    const b = rounds.find((r) => r.pair === i + 1 && r.side === 'raw')!;
    return {
      pair: i + 1,
      rate: round3(a.factsPerSecond / b.factsPerSecond),
      nodeCpu: round3(a.nodeCpuMs / b.nodeCpuMs),
      ferretCpu:
        a.ferretCpuMs === null || b.ferretCpuMs === null
          ? null
          : round3(a.ferretCpuMs / b.ferretCpuMs),
    };
  });
  const rate = ratios.map((r) => r.rate);
  const sideSummary = (side: Side) => {
    const rs = rounds.filter((r) => r.side === side);
    const ferret = rs.flatMap((r) => (r.ferretCpuMs === null ? [] : [r.ferretCpuMs]));
    return {
      medianWallMs: Math.round(median(rs.map((r) => r.wallMs))),
      medianFactsPerSecond: Math.round(median(rs.map((r) => r.factsPerSecond))),
      medianNodeCpuMs: Math.round(median(rs.map((r) => r.nodeCpuMs))),
      medianFerretCpuMs: ferret.length > 0 ? Math.round(median(ferret)) : null,
    };
  };
  const ferretRatios = ratios.flatMap((r) => (r.ferretCpu === null ? [] : [r.ferretCpu]));
  const result = {
    target: 0.7,
    ratio: round3(median(rate)),
    ratioMin: Math.min(...rate),
    ratioMax: Math.max(...rate),
    met: median(rate) >= 0.7,
    nodeCpuRatio: round3(median(ratios.map((r) => r.nodeCpu))),
    ferretCpuRatio: ferretRatios.length > 0 ? round3(median(ferretRatios)) : null,
    import: sideSummary('import'),
    raw: sideSummary('raw'),
  };

  const report = {
    command: [
      'npm run bench:import',
      ...(process.argv.length > 2 ? ['--'] : []),
      ...process.argv.slice(2),
    ].join(' '),
    startedAt: startedAt.toISOString(),
    durationSeconds: Math.round((Date.now() - startedAt.getTime()) / 1000),
    machine: {
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model ?? null,
      node: process.version,
      platform: `${process.platform} ${process.arch}`,
      loadavgBefore: loadBefore.map((x) => Math.round(x * 100) / 100),
      loadavgAfter: loadavg().map((x) => Math.round(x * 100) / 100),
    },
    database: process.env.MONGODB_URI ? 'MONGODB_URI' : 'embedded FerretDB 1.24.2 (SQLite backend)',
    settings: {
      quick,
      pairs,
      batchSize: BATCH_SIZE,
      seed,
      cpuProfiled: values['cpu-prof'],
      import: 'importJsonl(content) on a fresh database with the store indexes',
      raw: `insertMany({ ordered: false }) per collection, batches of ${BATCH_SIZE}, of the same documents (parsed once before timing), on a fresh database with the store indexes`,
    },
    dataset: {
      size,
      lines: generated.lines.length,
      bytes: Buffer.byteLength(content),
      generated: generated.counts,
      documents: Object.fromEntries(COLLECTIONS.map((n) => [n, docs[n].length])),
    },
    sameData: {
      equal: sameData,
      checkedIn: 'pair 1',
      import: digests.import,
      raw: digests.raw,
    },
    rounds,
    pairs: ratios,
    result,
    ...(session
      ? {
          profiles: {
            import: summarizeProfiles(profiles.import),
            raw: summarizeProfiles(profiles.raw),
          },
        }
      : {}),
  };
  writeFileSync(outFile, `${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write(`${formatReport(report)}\nresults: ${outFile}\n`);
  if (!sameData) {
    log('bench:import: the import and insertMany left different data');
    process.exitCode = 1;
  }
}

// ---------------------------------------------------------------- printing

function formatReport(report: {
  machine: { cpus: number; loadavgBefore: number[]; loadavgAfter: number[] };
  settings: { pairs: number; batchSize: number; cpuProfiled: boolean };
  dataset: { lines: number; bytes: number; documents: Record<string, number> };
  sameData: { equal: boolean };
  rounds: RoundResult[];
  pairs: { pair: number; rate: number; nodeCpu: number; ferretCpu: number | null }[];
  result: {
    ratio: number;
    ratioMin: number;
    ratioMax: number;
    met: boolean;
    target: number;
    nodeCpuRatio: number;
    ferretCpuRatio: number | null;
  };
  profiles?: Record<Side, ReturnType<typeof summarizeProfiles>>;
}): string {
  const { result: r, dataset: d } = report;
  const s = (ms: number | null) => (ms === null ? '–' : (ms / 1000).toFixed(1));
  const lines = [
    `import vs raw insertMany, ${report.settings.pairs} pairs (A B A B), batches of ${report.settings.batchSize}; ${d.documents.facts} facts, ${Object.values(d.documents).reduce((a, b) => a + b, 0)} documents in all, ${round1(d.bytes / 2 ** 20)} MB of JSONL; ${report.machine.cpus} CPUs, load ${report.machine.loadavgBefore[0]} → ${report.machine.loadavgAfter[0]}${report.settings.cpuProfiled ? ' (CPU-profiled: do not score)' : ''}`,
    '',
    '| pair | side | wall s | facts/s | Node CPU s | FerretDB CPU s |',
    '|--:|---|--:|--:|--:|--:|',
    ...report.rounds.map(
      (x) =>
        `| ${x.pair} | ${x.side === 'import' ? 'importJsonl' : 'raw insertMany'} | ${s(x.wallMs)} | ${x.factsPerSecond} | ${s(x.nodeCpuMs)} | ${s(x.ferretCpuMs)} |`,
    ),
    '',
    '| pair | rate × (import / raw) | Node CPU × | FerretDB CPU × |',
    '|--:|--:|--:|--:|',
    ...report.pairs.map(
      (p) =>
        `| ${p.pair} | ${p.rate.toFixed(2)} | ${p.nodeCpu.toFixed(2)} | ${p.ferretCpu?.toFixed(2) ?? '–'} |`,
    ),
    '',
    `import rate: **${r.ratio.toFixed(2)}×** raw insertMany (median of pairs; range ${r.ratioMin.toFixed(2)}–${r.ratioMax.toFixed(2)}); target ≥ ${r.target}×: ${r.met ? 'met' : 'NOT met'}`,
    `Node CPU ×: ${r.nodeCpuRatio.toFixed(2)}; FerretDB CPU ×: ${r.ferretCpuRatio?.toFixed(2) ?? '–'}; same data written: ${report.sameData.equal ? 'yes' : 'NO'}`,
  ];
  for (const side of ['import', 'raw'] as const) {
    const p = report.profiles?.[side];
    if (!p) continue;
    const share = (x: { ms: number; share: number }) =>
      `${String(Math.round(x.share * 1000) / 10).padStart(5)} % ${String(x.ms).padStart(6)} ms`;
    lines.push('', `CPU profile of the ${side} rounds: ${p.busyMs} ms busy, ${p.idleMs} ms idle`);
    lines.push('self time by package:');
    for (const x of p.selfByPackage.slice(0, 10)) lines.push(`  ${share(x)} ${x.frame}`);
    lines.push('top self frames:');
    for (const x of p.topSelf.slice(0, 12)) lines.push(`  ${share(x)} ${x.frame}`);
    lines.push('top inclusive frames in src/ and bench/:');
    for (const x of p.topInclusiveSrc.slice(0, 15)) lines.push(`  ${share(x)} ${x.frame}`);
  }
  return lines.join('\n');
}

// ---------------------------------------------------------------- bounded, and clean

/** Stops FerretDB, removes the temporary folder and exits, keeping what was measured. */
function abort(reason: string, code: number) {
  log(`bench:import: ${reason}`);
  writeFileSync(
    outFile,
    `${JSON.stringify({ command: process.argv.slice(2), startedAt, stopped: reason, size, rounds }, null, 2)}\n`,
  );
  void (running.ferret?.stop() ?? Promise.resolve()).finally(() => {
    rmSync(dir, { recursive: true, force: true });
    process.exit(code);
  });
}
const watchdog = setTimeout(
  () => abort(`stopped by the watchdog after ${WATCHDOG_MS / 1000}s`, 2),
  WATCHDOG_MS,
);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => abort(`stopped by ${signal}`, 130));
}

try {
  await main();
} catch (error) {
  log(`bench:import: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  process.exitCode = 1;
} finally {
  await running.ferret?.stop();
  rmSync(dir, { recursive: true, force: true });
  clearTimeout(watchdog);
}
