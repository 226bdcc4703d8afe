import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { execute } from 'graphql';
import { createRequestContext } from '../src/context.js';
import { type RunningFerretDb, startFerretDb } from '../src/embedded/ferretdb.js';
import {
  MemorySodaEntityFactsDocument,
  MemorySodaListEntitiesDocument,
  MemorySodaListFactsDocument,
  SupaCloudListMemoriesDocument,
} from '../src/generated/operations.js';
import { runOperation } from '../src/rest/runOperation.js';
import { schema } from '../src/schema/index.js';
import { openDatabase } from '../src/store/database.js';
import { createApiKey } from '../src/store/workspaces.js';
import { SIZES, seedDataset } from './generate.js';

/**
 * `npm run bench:execution`: what graphql-jit saves on the REST adapters' fixed operations.
 * In one process, on one database, each operation runs through graphql-js's `execute` and
 * through `runOperation` (graphql-jit, compiled once per document), alternating rounds of
 * the same size, and the Node process's CPU per operation is compared (the database
 * work is the same on both sides; FerretDB's CPU is another process's).
 */
const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '6' },
    ops: { type: 'string', default: '20' },
  },
});
const rounds = Number(values.rounds);
const perRound = Number(values.ops);

const dir = mkdtempSync(join(tmpdir(), 'memory-gateway-exec-'));
let ferret: RunningFerretDb | null = null;
try {
  if (!process.env.MONGODB_URI) ferret = await startFerretDb(join(dir, 'db'));
  const uri = process.env.MONGODB_URI ?? ferret!.uri;
  const database = await openDatabase(uri, `bench_exec_${Date.now()}`);
  const c = database.collections;
  const dataset = 'bench';
  const { generated } = await seedDataset(c, 'bench', { ...SIZES.quick, dataset });
  const key = (await createApiKey(c, 'bench', ['read'])).key;
  const context = () =>
    createRequestContext(
      new Request('http://bench.local/', { headers: { authorization: `Bearer ${key}` } }),
      c,
      { now: new Date() },
    );
  const operations = [
    {
      name: 'list facts (limit 100)',
      document: MemorySodaListFactsDocument,
      variables: { dataset, first: 100, includeInvalidated: true },
    },
    {
      name: 'entity facts (hub entity)',
      document: MemorySodaEntityFactsDocument,
      variables: { dataset, name: generated.probes.hubEntity },
    },
    { name: 'entities (all)', document: MemorySodaListEntitiesDocument, variables: { dataset } },
    { name: 'memories (all)', document: SupaCloudListMemoriesDocument, variables: {} },
  ] as const;

  const cpuMsPer = async (run: () => Promise<unknown>) => {
    const before = process.cpuUsage();
    for (let i = 0; i < perRound; i++) await run();
    const used = process.cpuUsage(before);
    return (used.user + used.system) / 1000 / perRound;
  };
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

  process.stdout.write(
    `graphql-jit vs graphql-js execute, ${rounds} pairs of ${perRound} operations, Node CPU ms per operation\n`,
  );
  const results = [];
  for (const op of operations) {
    const js = async () => {
      const result = await execute({
        schema,
        document: op.document,
        variableValues: op.variables,
        contextValue: await context(),
      });
      if (result.errors) throw result.errors[0];
    };
    // biome-ignore lint/suspicious/noExplicitAny: one runner for four typed documents
    const jit = async () => runOperation(await context(), op.document as any, op.variables);
    await js();
    await jit();
    const ratios: number[] = [];
    const sides = { js: [] as number[], jit: [] as number[] };
    for (let r = 0; r < rounds; r++) {
      const a = await cpuMsPer(js);
      const b = await cpuMsPer(jit);
      sides.js.push(a);
      sides.jit.push(b);
      ratios.push(b / a);
    }
    const row = {
      operation: op.name,
      graphqlJsMs: Math.round(median(sides.js) * 100) / 100,
      graphqlJitMs: Math.round(median(sides.jit) * 100) / 100,
      ratio: Math.round(median(ratios) * 100) / 100,
      range: [Math.min(...ratios), Math.max(...ratios)].map((x) => Math.round(x * 100) / 100),
    };
    results.push(row);
    process.stdout.write(
      `  ${op.name.padEnd(28)} js ${String(row.graphqlJsMs).padStart(7)}  jit ${String(row.graphqlJitMs).padStart(7)}  jit/js ${row.ratio} (${row.range.join('–')})\n`,
    );
  }
  await database.db.dropDatabase();
  await database.close();
} finally {
  await ferret?.stop();
  rmSync(dir, { recursive: true, force: true });
}
