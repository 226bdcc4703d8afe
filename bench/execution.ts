import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type DocumentNode, execute } from 'graphql';
import { type CompiledQuery, compileQuery, isCompiledQuery } from 'graphql-jit';
import { parseCommandLine } from '../src/cli/help.js';
import { createRequestContext } from '../src/context.js';
import { type RunningFerretDb, startFerretDb } from '../src/embedded/ferretdb.js';
import {
  MemorySodaEntityFactsDocument,
  MemorySodaListEntitiesDocument,
  MemorySodaListFactsDocument,
  SupaCloudListMemoriesDocument,
} from '../src/generated/operations.js';
import { runOperation } from '../src/rest/runOperation.js';
import { builder } from '../src/schema/builder.js';
import { schema } from '../src/schema/index.js';
import { openDatabase } from '../src/store/database.js';
import { createApiKey } from '../src/store/workspaces.js';
import { SIZES, seedDataset } from './generate.js';

/**
 * `npm run bench:execution`: what graphql-jit saves on the REST adapters' fixed operations,
 * and what authorization decided before execution saves over scope-auth's per-field
 * run-time checks. In one process, on one database, each operation runs through
 * graphql-js's `execute`, through graphql-jit on a schema built with scope-auth's run-time
 * checks (a wrapper on every field of a type with a rule, as the gateway ran before its
 * pre-execution check), and through `runOperation` (graphql-jit on the gateway's schema,
 * the whole operation authorized before it runs), alternating rounds of the same size; the
 * Node process's CPU per operation is compared (the database work is the same on every
 * side; FerretDB's CPU is another process's).
 */

const { values } = parseCommandLine(import.meta.url, {
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
  const db = database.collections;
  const dataset = 'bench';
  const { generated } = await seedDataset(db, 'bench', { ...SIZES.quick, dataset });
  const key = (await createApiKey(db, 'bench', ['read'])).key;
  const context = () =>
    createRequestContext(
      new Request('http://bench.local/', { headers: { authorization: `Bearer ${key}` } }),
      db,
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
      variables: { dataset, name: generated.probes.hubEntity, first: 1000 },
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

  // The same schema with scope-auth's per-field checks at run time.
  const checkedAtRunTime = builder.toSchema();
  const compiledChecked = new Map<unknown, CompiledQuery>();

  process.stdout.write(
    `graphql-js execute, graphql-jit with run-time scope checks, graphql-jit authorized before execution (the gateway); ${rounds} rounds of ${perRound} operations, Node CPU ms per operation\n`,
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
    const checked = async () => {
      let query = compiledChecked.get(op.document);
      if (!query) {
        const compiled = compileQuery(checkedAtRunTime, op.document as DocumentNode);
        if (!isCompiledQuery(compiled)) throw new Error('does not compile');
        query = compiled as CompiledQuery;
        compiledChecked.set(op.document, query);
      }
      const result = await query.query(undefined, await context(), op.variables);
      if (result.errors) throw result.errors[0];
    };
    await js();
    await checked();
    await jit();
    const ratios: number[] = [];
    const authRatios: number[] = [];
    const sides = { js: [] as number[], checked: [] as number[], jit: [] as number[] };
    for (let r = 0; r < rounds; r++) {
      const a = await cpuMsPer(js);
      const c = await cpuMsPer(checked);
      const b = await cpuMsPer(jit);
      sides.js.push(a);
      sides.checked.push(c);
      sides.jit.push(b);
      ratios.push(b / a);
      authRatios.push(b / c);
    }
    const round2 = (x: number) => Math.round(x * 100) / 100;
    const row = {
      operation: op.name,
      graphqlJsMs: round2(median(sides.js)),
      runTimeChecksMs: round2(median(sides.checked)),
      graphqlJitMs: round2(median(sides.jit)),
      ratio: round2(median(ratios)),
      range: [Math.min(...ratios), Math.max(...ratios)].map(round2),
      beforeExecutionRatio: round2(median(authRatios)),
      beforeExecutionRange: [Math.min(...authRatios), Math.max(...authRatios)].map(round2),
    };
    results.push(row);
    process.stdout.write(
      `  ${op.name.padEnd(28)} js ${String(row.graphqlJsMs).padStart(7)}  jit+checks ${String(row.runTimeChecksMs).padStart(7)}  jit ${String(row.graphqlJitMs).padStart(7)}  jit/js ${row.ratio} (${row.range.join('–')})  jit/jit+checks ${row.beforeExecutionRatio} (${row.beforeExecutionRange.join('–')})\n`,
    );
  }
  await database.db.dropDatabase();
  await database.close();
} finally {
  await ferret?.stop();
  rmSync(dir, { recursive: true, force: true });
}
