import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseCommandLine } from '../src/cli/help.js';
import { DEMO_DATASET, loadDemoDataset } from '../src/demo/seed.js';
import { startFerretDb } from '../src/embedded/ferretdb.js';
import { loadEmbedder } from '../src/embeddings/embedder.js';
import { readModelFiles } from '../src/embeddings/modelFiles.js';
import { createGateway } from '../src/http/app.js';
import { MAX_ITEMS } from '../src/schema/recordEpisode.js';
import { type Database, openDatabase } from '../src/store/database.js';
import { embedPending } from '../src/store/embeddings.js';
import { createApiKey } from '../src/store/workspaces.js';
import { type Probes, seedDataset } from './generate.js';
import { median, procCpuSeconds, round1 } from './measure.js';

/**
 * The embedded store's curve: how the gateway's answers slow down as the embedded FerretDB
 * (SQLite) fills up. For each layout (one big dataset, or the same facts spread over 50
 * datasets) a fresh embedded database is grown to each size in turn (through the import
 * path, like `npm run import`), and at each size the gateway (in-process, as `npm start`
 * serves it) answers the REST list of the big dataset, the demo dataset's list beside it,
 * an entity's facts, the entities, the memories, `recordEpisode` (3 facts, 3 entities,
 * one `replaceExisting`) and a maximal episode (as many facts and entities as one call may
 * send, every fact replacing an older one). Per question: the median latency and the FerretDB process's CPU
 * time per request. Any answer but 200 stops the run. With `--embeddings on` (the
 * default, as EMBEDDINGS) the gateway stores the vectors of what it writes, and the grown
 * data's are stored before the questions; `off` measures the same without.
 *
 *   npm run bench:embedded [-- --sizes 1000,5000,10000,20000] [--layouts one,spread]
 *     [--reps 3] [--episodes 5] [--embeddings on|off] [--out report.json]
 *
 * docs/PERFORMANCE.md ("The embedded store's curve") records a run and what it means.
 */

const { values } = parseCommandLine(import.meta.url, {
  options: {
    sizes: { type: 'string', default: '1000,5000,10000,20000' },
    layouts: { type: 'string', default: 'one,spread' },
    reps: { type: 'string', default: '3' },
    episodes: { type: 'string', default: '5' },
    embeddings: { type: 'string', default: 'on' },
    out: { type: 'string' },
  },
});

const SIZES = values.sizes.split(',').map(Number);
const REPS = Number(values.reps);
const EPISODES = Number(values.episodes);
const WORKSPACE = 'embedded-bench';
const LAYOUTS = {
  /** One dataset holds 80 % of the facts, its sibling the rest. */
  one: { datasets: 1 },
  /** 25 generated pairs: 50 datasets of equal size. */
  spread: { datasets: 25 },
} as const;
type Layout = keyof typeof LAYOUTS;

if (SIZES.some((s) => !Number.isInteger(s) || s < 100) || !(REPS >= 1) || !(EPISODES >= 1)) {
  throw new Error('--sizes takes whole numbers of at least 100; --reps and --episodes at least 1');
}
const layouts = values.layouts.split(',') as Layout[];
for (const l of layouts) if (!(l in LAYOUTS)) throw new Error(`unknown layout "${l}"`);

interface Row {
  layout: Layout;
  facts: number;
  /** Per question: median latency (ms) and FerretDB CPU per request (ms). */
  questions: Record<string, { ms: number; dbCpuMs: number | null }>;
}

/** The rows of one layout: a fresh embedded database grown to each size in turn. */
async function runLayout(layout: Layout): Promise<Row[]> {
  const dir = mkdtempSync(join(tmpdir(), 'embedded-bench-'));
  const ferret = await startFerretDb(join(dir, 'db'));
  let database: Database | null = null;
  try {
    database = await openDatabase(ferret.uri, 'embedded_bench');
    const db = database.collections;
    await loadDemoDataset(db, WORKSPACE, new Date());
    const key = (await createApiKey(db, WORKSPACE, ['read', 'write'])).key;
    // Recall by meaning as configured (EMBEDDINGS, default on): a write stores its vectors.
    const embedder = values.embeddings === 'on' ? await loadEmbedder(readModelFiles()) : null;
    const gateway = createGateway({ database, embedder });
    const rows: Row[] = [];
    let stored = 0;
    let round = 0;
    let probes: Probes | null = null;
    for (const size of SIZES) {
      const grown = await grow(database, layout, size - stored, round++);
      if (embedder) await embedPending(db, embedder, null);
      probes ??= grown;
      stored = size;
      const questions = await ask(gateway, key, ferret.pid, probes);
      rows.push({ layout, facts: size, questions });
      console.error(`bench:embedded ${layout} ${size}: ${JSON.stringify(questions)}`);
    }
    return rows;
  } finally {
    await database?.close();
    await ferret.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Adds `facts` generated facts (with entities, episodes and memories in proportion). */
async function grow(database: Database, layout: Layout, facts: number, round: number) {
  const { datasets } = LAYOUTS[layout];
  let first: Probes | null = null;
  for (let d = 0; d < datasets; d++) {
    const share = Math.round(facts / datasets);
    const { generated } = await seedDataset(database.collections, WORKSPACE, {
      dataset: `bench_${d}`,
      facts: share,
      entities: Math.max(10, Math.round(share * 0.12)),
      episodes: Math.max(5, Math.round(share * 0.1)),
      memories: Math.max(5, Math.round(share * 0.05)),
      seed: 1000 * round + d + 1,
    });
    first ??= generated.probes;
  }
  return first!;
}

type Gateway = ReturnType<typeof createGateway>;

async function ask(gateway: Gateway, key: string, dbPid: number, probes: Probes) {
  const ds = (name: string) => `/v1/memory/semantic/datasets/${encodeURIComponent(name)}`;
  const get = (path: string) => () =>
    gateway.fetch(
      new Request(`http://127.0.0.1${path}`, { headers: { authorization: `Bearer ${key}` } }),
    );
  const questions: Record<string, () => Response | Promise<Response>> = {
    facts: get(`${ds(probes.dataset)}/facts?limit=20`),
    'demo facts': get(`${ds(DEMO_DATASET)}/facts`),
    'entity facts': get(
      `${ds(probes.dataset)}/entities/${encodeURIComponent(probes.mediumEntity)}/facts`,
    ),
    entities: get(`${ds(probes.dataset)}/entities`),
    memories: get('/api/memories'),
  };
  const out: Row['questions'] = {};
  for (const [name, send] of Object.entries(questions)) {
    out[name] = await timed(REPS, dbPid, send);
  }
  const post = (variables: unknown) => () =>
    gateway.fetch(
      new Request('http://127.0.0.1/graphql', {
        method: 'POST',
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          accept: 'application/json',
        },
        body: JSON.stringify({ query: RECORD, variables }),
      }),
    );
  out.recordEpisode = await timed(EPISODES, dbPid, () => post(recordVariables(probes.dataset))());
  // A maximal episode (MAX_ITEMS facts and entities, every fact replacing the one the last
  // maximal episode stored for its subject): once untimed, so there is one to replace.
  if (maximalRecorded === 0) await timed(1, dbPid, post(maximalVariables(probes.dataset)));
  out['maximal episode'] = await timed(1, dbPid, post(maximalVariables(probes.dataset)));
  return out;
}

let maximalRecorded = 0;
/** MAX_ITEMS facts `pipeline subject i / holds / value n`, each replaceExisting. */
function maximalVariables(dataset: string) {
  const n = maximalRecorded++;
  const at = new Date(Date.now() - 60_000 + n).toISOString();
  return {
    dataset,
    input: {
      episode: {
        episodeId: randomUUID(),
        occurredAt: at,
        source: 'bench',
        content: `maximal ${n}`,
      },
      entities: Array.from({ length: MAX_ITEMS }, (_, i) => ({
        name: `pipeline subject ${i}`,
        type: 'THING',
      })),
      facts: Array.from({ length: MAX_ITEMS }, (_, i) => ({
        subject: `pipeline subject ${i}`,
        predicate: 'holds',
        object: `value ${n}`,
        confidence: 0.9,
        sourceQuote: `subject ${i} holds value ${n}`,
        validAt: at,
        replaceExisting: true,
      })),
    },
  };
}

/** Sends `n` requests one after another; every answer must be a 200 without errors. */
async function timed(n: number, dbPid: number, send: () => Response | Promise<Response>) {
  const ms: number[] = [];
  const cpuBefore = procCpuSeconds(dbPid);
  for (let i = 0; i < n; i++) {
    const started = performance.now();
    const response = await send();
    const text = await response.text();
    ms.push(performance.now() - started);
    if (response.status !== 200 || text.includes('"errors"')) {
      throw new Error(`answer ${response.status}: ${text.slice(0, 300)}`);
    }
  }
  const cpuAfter = procCpuSeconds(dbPid);
  return {
    ms: round1(median(ms)),
    dbCpuMs:
      cpuBefore === null || cpuAfter === null ? null : round1(((cpuAfter - cpuBefore) * 1000) / n),
  };
}

const RECORD = `mutation Record($dataset: String!, $input: RecordEpisodeInput!) {
  recordEpisode(dataset: $dataset, input: $input) { alreadyRecorded facts { factId } }
}`;

let recorded = 0;
/** An extraction pipeline's episode: 3 facts, 3 entities, the first replacing the old value. */
function recordVariables(dataset: string) {
  const n = recorded++;
  const at = new Date(Date.now() - 60_000).toISOString();
  return {
    dataset,
    input: {
      episode: { episodeId: randomUUID(), occurredAt: at, source: 'chat', content: `turn ${n}` },
      entities: [
        { name: 'user', type: 'PERSON' },
        { name: `car ${n}`, type: 'PRODUCT' },
        { name: `city ${n % 7}`, type: 'PLACE' },
      ],
      facts: [
        {
          subject: 'user',
          predicate: 'drives',
          object: `car ${n}`,
          objectIsEntity: true,
          confidence: 0.9,
          validAt: at,
          replaceExisting: true,
        },
        {
          subject: 'user',
          predicate: 'visited',
          object: `city ${n % 7}`,
          confidence: 0.8,
          validAt: at,
        },
        {
          subject: `car ${n}`,
          predicate: 'has colour',
          object: 'blue',
          confidence: 0.7,
          validAt: at,
        },
      ],
    },
  };
}

function table(rows: Row[]): string {
  const names = Object.keys(rows[0]?.questions ?? {});
  const head = `| layout | facts | ${names.map((n) => `${n} ms (db CPU ms)`).join(' | ')} |`;
  const rule = `|---|---:|${names.map(() => '---:').join('|')}|`;
  const lines = rows.map(
    (r) =>
      `| ${r.layout} | ${r.facts} | ${names
        .map((n) => `${r.questions[n]!.ms} (${r.questions[n]!.dbCpuMs ?? '–'})`)
        .join(' | ')} |`,
  );
  return [head, rule, ...lines].join('\n');
}

const rows: Row[] = [];
for (const layout of layouts) rows.push(...(await runLayout(layout)));
const report = { sizes: SIZES, reps: REPS, episodes: EPISODES, rows };
if (values.out) writeFileSync(values.out, `${JSON.stringify(report, null, 2)}\n`);
console.log(table(rows));
