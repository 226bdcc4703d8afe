import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseCommandLine } from '../src/cli/help.js';
import { derivePairHistory, type PairRecord } from '../src/domain/pairHistory.js';
import { startFerretDb } from '../src/embedded/ferretdb.js';
import { openDatabase } from '../src/store/database.js';
import { type EpisodeInput, recordEpisode } from '../src/store/recordEpisode.js';
import { workspaceIdFor } from '../src/store/workspaces.js';
import { importJsonl } from '../src/transfer/importJsonl.js';
import { median } from './measure.js';

/**
 * What a long history costs a write now that a pair's history is derived from its records
 * (docs/TEMPORAL_MODEL.md, "The history is derived"): every write to a pair reads the
 * pair's records and documents whole and derives them again.
 *
 *   1. The pure derivation of a pair of N records (every fact replacing, recorded in
 *      valid-time order, so each supersedes the one before and leaves a corrected version).
 *   2. On the embedded store, a one-fact replacing episode on a pair that already holds N
 *      facts (imported, then derived), against the same episode on a pair of its own in
 *      the same dataset: the ratio is what the history costs, whatever the machine.
 *
 *   npm run bench:pairHistory -- [--records 1000] [--reps 7]
 *
 * docs/PERFORMANCE.md ("A pair with a long history") records a run.
 */

const { values } = parseCommandLine(import.meta.url, {
  options: {
    records: { type: 'string', default: '1000' },
    reps: { type: 'string', default: '7' },
  },
});
const N = Number(values.records);
const REPS = Number(values.reps);
if (!(N >= 1) || !(REPS >= 1)) throw new Error('--records and --reps take whole numbers from 1');

const DAY = 86_400_000;
const ORIGIN = Date.UTC(2020, 0, 1);
const AT = Date.UTC(2026, 0, 1);

function records(n: number): PairRecord[] {
  return Array.from({ length: n }, (_, i) => ({
    kind: 'asserted' as const,
    fact: {
      factId: `fact-${String(i).padStart(6, '0')}`,
      episodeId: `episode-${i}`,
      validAt: new Date(ORIGIN + i * DAY),
      validUntil: null,
      replaceExisting: true,
      at: new Date(AT + i * 1000),
    },
  }));
}

const time = (run: () => unknown): number => {
  const start = performance.now();
  run();
  return performance.now() - start;
};

const pure = records(N);
const derived = derivePairHistory(pure).length;
const pureMs = median(Array.from({ length: REPS }, () => time(() => derivePairHistory(pure))));
console.log(
  `derivePairHistory: ${N} records → ${derived} documents in ${pureMs.toFixed(1)} ms (median of ${REPS})`,
);

const dir = mkdtempSync(join(tmpdir(), 'pair-history-bench-'));
const ferret = await startFerretDb(join(dir, 'db'));
try {
  const database = await openDatabase(ferret.uri, 'pair_history_bench');
  const db = database.collections;
  const workspace = 'pair-history-bench';
  const dataset = 'long';
  const lines = Array.from({ length: N }, (_, i) =>
    JSON.stringify({
      type: 'fact',
      dataset,
      factId: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
      subject: 'user',
      predicate: 'lives in',
      object: `city ${i}`,
      confidence: 0.9,
      validAt: new Date(ORIGIN + i * DAY).toISOString(),
      recordedAt: new Date(AT + i * 1000).toISOString(),
      replaceExisting: true,
    }),
  );
  const importStart = performance.now();
  const outcome = await importJsonl(db, {
    workspace,
    content: lines.join('\n'),
    now: new Date(AT + N * 1000),
  });
  if (!outcome.ok) throw new Error(`import refused: ${JSON.stringify(outcome.errors[0])}`);
  console.log(
    `import of one pair of ${N} facts: ${Math.round(performance.now() - importStart)} ms (${outcome.counts.facts} documents)`,
  );

  const tenant = { workspaceId: workspaceIdFor(workspace), dataset };
  let clock = AT + (N + 10) * 1000;
  const episode = (predicate: string, i: number): EpisodeInput => ({
    episodeId: crypto.randomUUID(),
    occurredAt: new Date(clock),
    source: 'bench',
    content: `user moved again (${i})`,
    entities: [],
    facts: [
      {
        subject: 'user',
        predicate,
        object: `new city ${i}`,
        objectIsEntity: false,
        confidence: 0.9,
        sourceQuote: null,
        validAt: new Date(ORIGIN + (N + i) * DAY),
        validUntil: null,
        supersedes: [],
        replaceExisting: true,
      },
    ],
  });
  const timed = async (predicate: string, i: number) => {
    clock += 1000;
    const start = performance.now();
    await recordEpisode(db, tenant, episode(predicate, i), new Date(clock));
    return performance.now() - start;
  };
  // Alternately, so both see the same machine.
  const long: number[] = [];
  const fresh: number[] = [];
  for (let i = 0; i < REPS; i++) {
    long.push(await timed('lives in', i));
    fresh.push(await timed(`visits ${i}`, i));
  }
  const [l, f] = [median(long), median(fresh)];
  console.log(
    `one replacing fact on a pair of ${N}: ${l.toFixed(1)} ms; on a fresh pair: ${f.toFixed(1)} ms; ratio ${(l / f).toFixed(2)}x (medians of ${REPS})`,
  );
  await database.close();
} finally {
  await ferret.stop();
  rmSync(dir, { recursive: true, force: true });
}
