import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseCommandLine } from '../src/cli/help.js';

/**
 * `npm run bench:gate`: the bench's small form (docs/PERFORMANCE.md, "The regression gate"),
 * for every change before it lands; about 30 seconds, not in `npm test` (a timing assertion
 * there fails on a loaded machine). It runs `npm run bench -- --quick` with 2 pairs of
 * half-second rounds per scenario, then judges each ratio (the gateway against the
 * raw-driver baseline measured in the same run) against bench/gate.json:
 *
 * - CPU per request (every scenario): at most its limit, plus its spread;
 * - REST throughput: at least its limit, minus its spread;
 * - the gateway's peak and at-rest RSS against the baseline's: at most their limit, plus
 *   their spread.
 *
 * A measure's limit is its target (1.5x, 0.8x, 1.3x), or while a target is still missed the
 * figure recorded for it, so a change can neither move a met target past it nor make a
 * missed one worse; a spread is how far runs of the same commit moved that figure apart,
 * measured and written down in gate.json, so the gate fails only on what the machine's own
 * noise does not explain. It fails (exit 1) naming each measure past its limit, or
 * when the run itself failed (different answers, errors). `--update` writes this run's
 * figures where they are better than those recorded (never worse), once a change has
 * improved them.
 *
 *   npm run bench:gate -- [--update] [--report FILE]
 *
 * --report judges a report a bench run already wrote instead of running one.
 */

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const LIMITS_FILE = join(ROOT, 'bench', 'gate.json');

/** What the gate reads of a bench report (bench/bench.ts writes it). */
export interface BenchReport {
  scenarios: {
    id: string;
    rest: boolean;
    ratio: { throughput: number; cpuPerRequest: number };
  }[];
  gatewayMemory: { idleRssMB: number; peakRssMB: number };
  baselineMemory: { idleRssMB: number; peakRssMB: number };
}

type Measure = 'cpuPerRequest' | 'throughput' | 'peakMemory' | 'restMemory';

/** A figure per scenario (CPU, throughput) or for the gateway (memory). */
interface Figures {
  cpuPerRequest: Record<string, number>;
  throughput: Record<string, number>;
  peakMemory: number;
  restMemory: number;
}

/**
 * bench/gate.json: the targets, the figures recorded while a target is missed, and the
 * spread of each figure between runs of the same commit.
 */
export interface GateLimits {
  targets: Record<Measure, number>;
  spread: Figures;
  recorded: Figures;
}

export interface Verdict {
  measure: Measure;
  scenario: string | null;
  value: number;
  limit: number;
  /** Higher is better (throughput) or lower is better (the rest). */
  higherIsBetter: boolean;
  passed: boolean;
}

const round2 = (x: number) => Math.round(x * 100) / 100;

/** One measure judged: its limit is the target, or the recorded figure while it is missed. */
function judgeOne(
  measure: Measure,
  scenario: string | null,
  value: number,
  limits: GateLimits,
  recorded: number | undefined,
  spread: number,
): Verdict {
  const higherIsBetter = measure === 'throughput';
  const target = limits.targets[measure];
  const base =
    recorded === undefined
      ? target
      : higherIsBetter
        ? Math.min(target, recorded)
        : Math.max(target, recorded);
  const limit = round2(higherIsBetter ? base - spread : base + spread);
  const passed = higherIsBetter ? value >= limit : value <= limit;
  return { measure, scenario, value, limit, higherIsBetter, passed };
}

/** A scenario's figure; one without a spread of its own takes the largest of its measure. */
function judgeScenario(
  measure: 'cpuPerRequest' | 'throughput',
  scenario: string,
  value: number,
  limits: GateLimits,
): Verdict {
  const spread =
    limits.spread[measure][scenario] ?? Math.max(0, ...Object.values(limits.spread[measure]));
  return judgeOne(measure, scenario, value, limits, limits.recorded[measure][scenario], spread);
}

/**
 * Every measure of a report judged against the limits. A scenario the limits have no
 * recorded figure for is held to its target; one the report lacks that the limits record
 * fails, so a scenario dropped from the bench is not silently unchecked.
 */
export function judgeReport(report: BenchReport, limits: GateLimits): Verdict[] {
  const verdicts: Verdict[] = [];
  const seen = new Set(report.scenarios.map((s) => s.id));
  for (const s of report.scenarios) {
    verdicts.push(judgeScenario('cpuPerRequest', s.id, s.ratio.cpuPerRequest, limits));
    if (s.rest) verdicts.push(judgeScenario('throughput', s.id, s.ratio.throughput, limits));
  }
  for (const measure of ['cpuPerRequest', 'throughput'] as const) {
    for (const id of Object.keys(limits.recorded[measure])) {
      if (!seen.has(id)) {
        verdicts.push({
          measure,
          scenario: id,
          value: Number.NaN,
          limit: Number.NaN,
          higherIsBetter: measure === 'throughput',
          passed: false,
        });
      }
    }
  }
  const { gatewayMemory: g, baselineMemory: b } = report;
  verdicts.push(
    judgeOne(
      'peakMemory',
      null,
      round2(g.peakRssMB / b.peakRssMB),
      limits,
      limits.recorded.peakMemory,
      limits.spread.peakMemory,
    ),
    judgeOne(
      'restMemory',
      null,
      round2(g.idleRssMB / b.idleRssMB),
      limits,
      limits.recorded.restMemory,
      limits.spread.restMemory,
    ),
  );
  return verdicts;
}

/** The recorded figures, each replaced by this run's where it is better (never worse). */
export function improvedLimits(limits: GateLimits, verdicts: Verdict[]): GateLimits {
  const better = (v: Verdict, old: number | undefined) =>
    old === undefined
      ? v.value
      : v.higherIsBetter
        ? Math.max(old, v.value)
        : Math.min(old, v.value);
  const next: GateLimits = structuredClone(limits);
  for (const v of verdicts) {
    if (Number.isNaN(v.value)) continue;
    if (v.measure === 'peakMemory' || v.measure === 'restMemory') {
      next.recorded[v.measure] = better(v, limits.recorded[v.measure]);
    } else if (v.scenario !== null) {
      next.recorded[v.measure][v.scenario] = better(v, limits.recorded[v.measure][v.scenario]);
    }
  }
  return next;
}

/** Runs the bench's small form and answers its report, or null when the run failed. */
function runBench(): BenchReport | null {
  const dir = mkdtempSync(join(tmpdir(), 'memory-gateway-gate-'));
  const out = join(dir, 'report.json');
  try {
    const run = spawnSync(
      process.execPath,
      [
        '--import',
        'tsx',
        'bench/bench.ts',
        '--quick',
        '--pairs',
        '2',
        '--round',
        '0.5',
        '--out',
        out,
      ],
      { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'], timeout: 170_000 },
    );
    if (run.status !== 0) return null;
    return JSON.parse(readFileSync(out, 'utf8')) as BenchReport;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function main() {
  const { values } = parseCommandLine(import.meta.url, {
    options: {
      update: { type: 'boolean', default: false },
      report: { type: 'string' },
    },
  });
  const limits = JSON.parse(readFileSync(LIMITS_FILE, 'utf8')) as GateLimits;
  const report = values.report
    ? (JSON.parse(readFileSync(values.report, 'utf8')) as BenchReport)
    : runBench();
  if (!report) {
    process.stderr.write(
      'bench:gate: the bench run failed (different answers or errors): see above\n',
    );
    process.exit(1);
  }
  const verdicts = judgeReport(report, limits);
  const lines = verdicts.map(
    (v) =>
      `  ${v.passed ? 'ok  ' : 'PAST'} ${v.measure.padEnd(13)} ${(v.scenario ?? '-').padEnd(14)} ${String(v.value).padStart(6)} ${v.higherIsBetter ? '>=' : '<='} ${v.limit}`,
  );
  process.stdout.write(`bench:gate (limits: bench/gate.json)\n${lines.join('\n')}\n`);
  if (values.update) {
    writeFileSync(LIMITS_FILE, `${JSON.stringify(improvedLimits(limits, verdicts), null, 2)}\n`);
    process.stdout.write('bench:gate: recorded figures updated where this run did better\n');
  }
  const past = verdicts.filter((v) => !v.passed);
  if (past.length > 0) {
    process.stderr.write(`bench:gate: ${past.length} measure(s) past their limit\n`);
    process.exit(1);
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main();
