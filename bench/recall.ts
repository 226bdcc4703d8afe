import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseCommandLine } from '../src/cli/help.js';
import { startFerretDb } from '../src/embedded/ferretdb.js';
import { loadEmbedder } from '../src/embeddings/embedder.js';
import { ensureModelFiles, readModelFiles } from '../src/embeddings/modelFiles.js';
import { createGateway } from '../src/http/app.js';
import { openDatabase } from '../src/store/database.js';
import { embedPending } from '../src/store/embeddings.js';
import { createApiKey } from '../src/store/workspaces.js';
import { type Probes, seedDataset } from './generate.js';
import { procCpuSeconds, round1 } from './measure.js';
import { recallQuality } from './recallQuality.js';

/**
 * `npm run bench:recall`: recall's quality on a labelled question set (bench/recallQuality.ts,
 * today's recall against the one before its second round, in the same run), then its speed
 * on the embedded store: for each
 * size, a fresh embedded database holding a dataset from bench/generate.ts of that many
 * facts (and `--memories` memories, default 1 % of the facts), their vectors stored;
 * `POST /v1/memory/recall` asked ten questions `rounds` times, one at a time, now and as a
 * replay at a past `asOf`, and by words alone (a gateway with EMBEDDINGS=off on the same
 * store); GraphQL recall as agents ask it (facts, memories and context), with and without
 * meaning; the lists' `q` beside the plain list. Per question kind: p50 and p95 latency (the
 * question's embedding included), and the database's CPU per request.
 *
 *   npm run bench:recall [-- --parts quality,speed] [--sizes 1000,10000,100000] [--rounds 4]
 *     [--memories N] [--out report.json]
 *
 * docs/PERFORMANCE.md ("Recall: quality and speed") records a run and what it means.
 */

const WORKSPACE = 'recall-bench';

interface SpeedRow {
  facts: number;
  memories: number;
  /** How long storing the vectors of the seeded facts and memories took. */
  embedSeconds: number;
  /** Per kind: latency p50 / p95 (ms) and the database's CPU per request (ms). */
  kinds: Record<string, { p50: number; p95: number; dbCpuMs: number | null; n: number }>;
}

/** Ten questions on the generated vocabulary (bench/generate.ts): names, predicates, words. */
function questions(p: Probes): string[] {
  return [
    `where does ${p.hubEntity} work`,
    `what does ${p.mediumEntity} like`,
    `who knows ${p.smallEntity}`,
    'who likes ramen',
    'which places did the user visit',
    'what is anyone allergic to',
    'who lives in lisbon',
    'what did they buy last year',
    'black coffee in the morning',
    'plans to visit osaka',
  ];
}

/** Recall as the MCP tool asks it: facts, memories and the prompt-ready context. */
const agentRecall = (dataset: string, query: string) => ({
  query: `query($dataset: String!, $query: String!) { dataset(name: $dataset) { recall(query: $query, first: 10) {
    facts { relevanceScore fact { factId subject predicate object validAt validUntil } }
    memories { relevanceScore memory { memoryId text } }
    context } } }`,
  variables: { dataset, query },
});

const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
};

async function recallSpeed(
  sizes: number[],
  rounds: number,
  memoriesAt: (facts: number) => number,
): Promise<SpeedRow[]> {
  const rows: SpeedRow[] = [];
  await ensureModelFiles((line) => console.error(line));
  const embedder = await loadEmbedder(readModelFiles());
  for (const size of sizes) {
    const dir = mkdtempSync(join(tmpdir(), 'recall-bench-'));
    const ferret = await startFerretDb(join(dir, 'db'));
    const database = await openDatabase(ferret.uri, 'recall_bench');
    try {
      const started = performance.now();
      const { generated } = await seedDataset(database.collections, WORKSPACE, {
        dataset: 'bench_user',
        facts: size,
        entities: Math.max(60, Math.round(size * 0.05)),
        episodes: Math.max(30, Math.round(size * 0.02)),
        memories: memoriesAt(size),
      });
      console.error(
        `bench:recall ${size} facts stored in ${round1((performance.now() - started) / 1000)} s`,
      );
      const embedding = performance.now();
      const embedded = await embedPending(database.collections, embedder, null);
      const embedSeconds = round1((performance.now() - embedding) / 1000);
      console.error(
        `bench:recall ${embedded.facts} facts and ${embedded.memories} memories embedded in ${embedSeconds} s`,
      );
      const key = (await createApiKey(database.collections, WORKSPACE, ['read'])).key;
      // Recall by meaning on (EMBEDDINGS=on, the default), and the same store by words
      // alone (EMBEDDINGS=off): before and after, in the same run.
      const hybrid = createGateway({ database, embedder });
      const wordsOnly = createGateway({ database });
      const p = generated.probes;
      const send = async (path: string, body?: unknown, gateway = hybrid) => {
        const response = await gateway.fetch(
          new Request(`http://127.0.0.1${path}`, {
            method: body ? 'POST' : 'GET',
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
            body: body ? JSON.stringify(body) : undefined,
          }),
        );
        const text = await response.text();
        if (response.status !== 200) throw new Error(`${path}: ${response.status} ${text}`);
      };
      const list = `/v1/memory/semantic/datasets/${p.dataset}/facts?limit=20`;
      const kinds: Record<string, (i: number) => Promise<void>> = {
        recall: (i) =>
          send('/v1/memory/recall', { query: questions(p)[i % 10], dataset: p.dataset }),
        'recall replay': (i) =>
          send('/v1/memory/recall', {
            query: questions(p)[i % 10],
            dataset: p.dataset,
            asOf: p.asOf,
          }),
        'recall, words only': (i) =>
          send('/v1/memory/recall', { query: questions(p)[i % 10], dataset: p.dataset }, wordsOnly),
        // As agents call it (the MCP recall tool's operation): facts, memories and context.
        'agent recall': (i) => send('/graphql', agentRecall(p.dataset, questions(p)[i % 10]!)),
        'agent recall, words only': (i) =>
          send('/graphql', agentRecall(p.dataset, questions(p)[i % 10]!), wordsOnly),
        'list q': (i) =>
          send(`${list}&q=${encodeURIComponent(['works at', 'ramen', 'lisbon'][i % 3]!)}`),
        list: () => send(list),
      };
      const out: SpeedRow['kinds'] = {};
      for (const [kind, ask] of Object.entries(kinds)) {
        await ask(0); // warm
        const ms: number[] = [];
        const cpu = procCpuSeconds(ferret.pid);
        const n = kind.startsWith('recall') ? 10 * rounds : 3 * rounds;
        for (let i = 0; i < n; i++) {
          const t = performance.now();
          await ask(i);
          ms.push(performance.now() - t);
        }
        const after = procCpuSeconds(ferret.pid);
        out[kind] = {
          p50: round1(percentile(ms, 50)),
          p95: round1(percentile(ms, 95)),
          dbCpuMs: cpu === null || after === null ? null : round1(((after - cpu) * 1000) / n),
          n,
        };
      }
      rows.push({ facts: size, memories: memoriesAt(size), embedSeconds, kinds: out });
      console.error(`bench:recall ${size}: ${JSON.stringify(out)}`);
    } finally {
      await database.close();
      await ferret.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return rows;
}

const { values } = parseCommandLine(import.meta.url, {
  options: {
    parts: { type: 'string', default: 'quality,speed' },
    sizes: { type: 'string', default: '1000,10000,100000' },
    rounds: { type: 'string', default: '4' },
    memories: { type: 'string' },
    out: { type: 'string' },
  },
});
const sizes = values.sizes.split(',').map(Number);
const rounds = Number(values.rounds);
if (sizes.some((s) => !Number.isInteger(s) || s < 100) || !(rounds >= 1)) {
  throw new Error('--sizes takes whole numbers of at least 100; --rounds at least 1');
}
const parts = values.parts.split(',');
const quality = parts.includes('quality') ? await recallQuality() : null;
if (quality) {
  console.error('bench:recall quality (words / meaning / hybrid: Recall@1, Recall@5, MRR)');
  const three = (r: (typeof quality.rows)[number], m: 'recallAt1' | 'recallAt5' | 'mrr') =>
    `${r.words[m]} / ${r.meaning[m]} / ${r.hybrid[m]}`.padEnd(22);
  for (const r of quality.rows) {
    console.error(
      `  ${r.category.padEnd(17)} ${String(r.questions).padStart(2)}  ${three(r, 'recallAt1')} ${three(r, 'recallAt5')} ${three(r, 'mrr')}`,
    );
  }
  for (const miss of quality.misses) console.error(`  hybrid miss: ${miss}`);
}
const memoriesAt = (facts: number) =>
  values.memories ? Number(values.memories) : Math.max(100, Math.round(facts * 0.01));
const speed = parts.includes('speed') ? await recallSpeed(sizes, rounds, memoriesAt) : null;
const report = { at: new Date().toISOString(), quality, rounds, speed };
const text = `${JSON.stringify(report, null, 2)}\n`;
if (values.out) writeFileSync(values.out, text);
else process.stdout.write(text);
