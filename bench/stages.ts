import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'graphql';
import { compileQuery, isCompiledQuery } from 'graphql-jit';
import { parseCommandLine } from '../src/cli/help.js';
import { createRequestContext } from '../src/context.js';
import { resolveTemporalSelection } from '../src/domain/factState.js';
import { entityKey } from '../src/domain/names.js';
import { type RunningFerretDb, startFerretDb } from '../src/embedded/ferretdb.js';
import { MemorySodaListEntitiesDocument } from '../src/generated/operations.js';
import { createGateway } from '../src/http/app.js';
import { runOperation } from '../src/rest/runOperation.js';
import { schema } from '../src/schema/index.js';
import { openDatabase } from '../src/store/database.js';
import { documentReads } from '../src/store/documentReads.js';
import { entitiesByNames, listEntities } from '../src/store/entities.js';
import { factsOfEntities } from '../src/store/facts.js';
import { createReadCache } from '../src/store/readCache.js';
import { createApiKey, workspaceIdFor } from '../src/store/workspaces.js';
import { SIZES, seedDataset } from './generate.js';

/**
 * `npm run bench:stages`: where a request's Node CPU goes, stage by stage, in one process on
 * one embedded database (no HTTP: the listener's share is what `npm run bench` adds). For the
 * nested GraphQL question of `npm run bench` (20 entities, their live facts, each fact's
 * subject entity) and for the REST list of a dataset's entities, each stage is timed alone,
 * in alternating rounds:
 *
 * - `gateway`: the whole request through the gateway's fetch (edge, Yoga or the REST route);
 * - `operation`: the compiled GraphQL operation on a fresh request context, then
 *   JSON.stringify (what the resolvers, the loaders and graphql-jit cost);
 * - `store`: the store calls that operation makes, alone, reading what its selection
 *   declares (src/schema/selectedReads.ts), as the gateway's store calls do;
 * - `projected` (nested only): the same three queries projected to the fields the answer
 *   shows, as the bench's raw-driver baseline reads them.
 *
 *   npm run bench:stages -- [--rounds 5] [--requests 300]
 */

const { values } = parseCommandLine(import.meta.url, {
  options: {
    rounds: { type: 'string', default: '5' },
    requests: { type: 'string', default: '300' },
  },
});
const rounds = Number(values.rounds);
const perRound = Number(values.requests);
for (const [name, v] of [
  ['rounds', rounds],
  ['requests', perRound],
] as const) {
  if (!Number.isInteger(v) || v < 1 || v > 100_000) throw new Error(`bad --${name}: ${v}`);
}

const NESTED =
  'query Nested($dataset: String!, $first: Int!) { dataset(name: $dataset) { entities(first: $first) { edges { node { name facts { predicate subjectEntity { name } } } } } } }';
/** What the nested question's selection reads of a fact and of an entity. */
const FACT_READS = documentReads(['dataset', 'factId', 'predicate', 'subject']);
const ENTITY_READS = documentReads(['dataset', 'entityId', 'name', 'type', 'updatedAt']);
const FACT_ORDER = { validAt: -1, factId: -1 } as const;
const ENTITY_ORDER = { updatedAt: -1, entityId: -1 } as const;

const dir = mkdtempSync(join(tmpdir(), 'memory-gateway-stages-'));
let ferret: RunningFerretDb | null = null;
try {
  ferret = await startFerretDb(join(dir, 'db'));
  const database = await openDatabase(ferret.uri, `bench_stages_${Date.now()}`);
  const db = database.collections;
  const workspace = 'bench';
  const dataset = 'bench_user';
  await seedDataset(db, workspace, { ...SIZES.quick, dataset });
  const key = (await createApiKey(db, workspace, ['read'])).key;
  const readCache = createReadCache(5000);
  const gateway = createGateway({ database, readCacheTtlMs: 5000, dbTimeoutMs: 60_000 });
  const tenant = { workspaceId: workspaceIdFor(workspace), dataset };
  const authorization = { authorization: `Bearer ${key}` };
  const nestedRequest = () =>
    new Request('http://bench.local/graphql', {
      method: 'POST',
      headers: { ...authorization, 'content-type': 'application/json' },
      body: JSON.stringify({ query: NESTED, variables: { dataset, first: 20 } }),
    });
  const entitiesRequest = () =>
    new Request(`http://bench.local/v1/memory/semantic/datasets/${dataset}/entities`, {
      headers: authorization,
    });
  const context = (request: Request) =>
    createRequestContext(request, db, { now: new Date(), readCache, dbTimeoutMs: 60_000 });
  const nested = compileQuery(schema, parse(NESTED));
  if (!isCompiledQuery(nested)) throw new Error('the nested question does not compile');
  const answered = async (response: Response) => {
    if (response.status !== 200) throw new Error(`answered ${response.status}`);
    return response.text();
  };

  const questions = {
    nested: {
      gateway: async () => answered(await gateway.fetch(nestedRequest())),
      operation: async () => {
        const result = await nested.query(undefined, await context(nestedRequest()), {
          dataset,
          first: 20,
        });
        if (result.errors) throw result.errors[0];
        return JSON.stringify(result);
      },
      store: async () => {
        const { entities } = await listEntities(db, tenant, { first: 20, reads: ENTITY_READS });
        const live = resolveTemporalSelection(
          { asOf: null, validAt: null, knownAt: null, includeInvalidated: false },
          new Date(),
        );
        const facts = await factsOfEntities(
          db,
          tenant,
          entities.map((e) => e.name),
          live,
          100,
          FACT_READS,
        );
        const onPage = new Set(entities.map((e) => e.name));
        const subjects = new Set<string>();
        for (const list of facts.values()) for (const f of list) subjects.add(f.subject);
        await entitiesByNames(
          db,
          tenant,
          [...subjects].filter((s) => !onPage.has(entityKey(s))),
          ENTITY_READS,
        );
      },
      projected: async () => {
        const now = new Date();
        const page = await db.entities
          .find(tenant, { projection: { _id: 0, name: 1 } })
          .sort(ENTITY_ORDER)
          .limit(20)
          .toArray();
        const names = page.map((e) => e.name);
        const facts = await db.facts
          .find(
            {
              ...tenant,
              $or: [{ subjectKey: { $in: names } }, { objectKey: { $in: names } }],
              recordedAt: { $lte: now },
              validAt: { $lte: now },
              $and: [
                { $or: [{ invalidAt: null }, { invalidAt: { $gt: now } }] },
                { $or: [{ validUntil: null }, { validUntil: { $gt: now } }] },
              ],
            },
            { projection: { _id: 0, predicate: 1, subject: 1, subjectKey: 1, objectKey: 1 } },
          )
          .sort(FACT_ORDER)
          .limit(2000)
          .toArray();
        const onPage = new Set(names);
        const missing = [...new Set(facts.map((f) => f.subjectKey))].filter((s) => !onPage.has(s));
        if (missing.length > 0) await entitiesByNames(db, tenant, missing);
      },
    },
    entities: {
      gateway: async () => answered(await gateway.fetch(entitiesRequest())),
      operation: async () =>
        JSON.stringify(
          await runOperation(await context(entitiesRequest()), MemorySodaListEntitiesDocument, {
            dataset,
          }),
        ),
      store: async () =>
        JSON.stringify((await listEntities(db, tenant, { first: 10_000 })).entities),
    },
  } satisfies Record<string, Record<string, () => Promise<unknown>>>;

  const cpuMsPer = async (run: () => Promise<unknown>) => {
    const before = process.cpuUsage();
    for (let i = 0; i < perRound; i++) await run();
    const used = process.cpuUsage(before);
    return (used.user + used.system) / 1000 / perRound;
  };
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

  process.stdout.write(
    `Node CPU ms per request, in-process, median of ${rounds} rounds of ${perRound} (range)\n`,
  );
  for (const [question, stages] of Object.entries(questions)) {
    const runs = Object.entries(stages) as [string, () => Promise<unknown>][];
    for (const [, run] of runs) for (let i = 0; i < 30; i++) await run();
    const times = new Map<string, number[]>(runs.map(([stage]) => [stage, []]));
    for (let r = 0; r < rounds; r++) {
      for (const [stage, run] of runs) times.get(stage)!.push(await cpuMsPer(run));
    }
    for (const [stage, xs] of times) {
      const fmt = (x: number) => x.toFixed(2);
      process.stdout.write(
        `  ${question.padEnd(9)} ${stage.padEnd(10)} ${fmt(median(xs)).padStart(6)}  (${fmt(Math.min(...xs))}–${fmt(Math.max(...xs))})\n`,
      );
    }
  }
  await database.db.dropDatabase();
  await database.close();
} finally {
  await ferret?.stop();
  rmSync(dir, { recursive: true, force: true });
}
