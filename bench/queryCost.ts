import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type DocumentNode, Kind, parse, print } from 'graphql';
import { parseCommandLine } from '../src/cli/help.js';
import { type RunningFerretDb, startFerretDb } from '../src/embedded/ferretdb.js';
import { createGateway } from '../src/http/app.js';
import { measureOperation, QUERY_LIMITS } from '../src/http/queryLimits.js';
import { schema } from '../src/schema/index.js';
import { openDatabase } from '../src/store/database.js';
import { createApiKey } from '../src/store/workspaces.js';
import { SIZES, seedDataset } from './generate.js';

/**
 * `npm run bench:cost`: what the cost limit promises, checked on a seeded dataset. For the
 * front-end corpus (test/graphql/frontEndCorpus.graphql) and a few accepted operations
 * near the limit, it runs each through the gateway and reports, next to the computed cost:
 * the objects in the answer, the database commands the request ran and the answer's size,
 * each also per unit of cost. The promise (docs/GRAPHQL.md, "Query limits"): a read answers at most
 * `cost` objects and runs at most `cost` database commands. Refused operations run none.
 */
parseCommandLine(import.meta.url, { options: {} });

const dir = mkdtempSync(join(tmpdir(), 'memory-gateway-cost-'));
let ferret: RunningFerretDb | null = null;

function operationsIn(source: string): { name: string; document: DocumentNode }[] {
  const definitions = parse(source).definitions;
  return definitions
    .filter((d) => d.kind === Kind.OPERATION_DEFINITION)
    .map((op) => ({
      name: (op.kind === Kind.OPERATION_DEFINITION && op.name?.value) || 'anonymous',
      document: { kind: Kind.DOCUMENT, definitions: [op] } as DocumentNode,
    }));
}

/** Objects the answer holds: every JSON object but the connection and edge wrappers. */
function objectsIn(value: unknown): number {
  if (Array.isArray(value)) return value.reduce((n: number, v) => n + objectsIn(v), 0);
  if (value === null || typeof value !== 'object') return 0;
  const wrapper = 'edges' in value || 'node' in value || 'hasNextPage' in value;
  return (wrapper ? 0 : 1) + Object.values(value).reduce((n: number, v) => n + objectsIn(v), 0);
}

try {
  if (!process.env.MONGODB_URI) ferret = await startFerretDb(join(dir, 'db'));
  const uri = process.env.MONGODB_URI ?? ferret!.uri;
  const database = await openDatabase(uri, `bench_cost_${Date.now()}`, { monitorCommands: true });
  const db = database.collections;
  const dataset = 'bench';
  const { generated } = await seedDataset(db, 'bench', { ...SIZES.full, dataset });
  const key = (await createApiKey(db, 'bench', ['read'])).key;
  const gateway = createGateway({ database });
  let commands = 0;
  database.client.on('commandStarted', () => {
    commands++;
  });

  const corpus = operationsIn(
    readFileSync(new URL('../test/graphql/frontEndCorpus.graphql', import.meta.url), 'utf8'),
  );
  const nearTheLimit = operationsIn(`
    query HubFactsWithTheirSubjectsFacts($dataset: String!, $hub: String!) {
      dataset(name: $dataset) {
        entity(name: $hub) {
          facts(includeInvalidated: true) {
            subject object
            subjectEntity { facts(first: 190, includeInvalidated: true) { subject predicate object validAt } }
          }
        }
      }
    }
    query EveryEntityName($dataset: String!) {
      dataset(name: $dataset) { allEntities { entityId name type updatedAt } }
    }
    query FactsWithHistories($dataset: String!) {
      dataset(name: $dataset) {
        facts(first: 100, includeInvalidated: true) {
          edges { node { subject predicate history(first: 100) { object validAt invalidAt } } }
        }
      }
    }
  `);
  const attacks = operationsIn(`
    query NestedEntityFacts($dataset: String!, $hub: String!) {
      dataset(name: $dataset) { entity(name: $hub) {
        facts { subjectEntity { facts { subjectEntity { facts { subject } } } } }
      } }
    }
  `);
  const variables = { dataset, hub: generated.probes.hubEntity, first: 100 };

  const run = async (document: DocumentNode) => {
    commands = 0;
    const response = await gateway.fetch(
      new Request('http://bench.local/graphql', {
        method: 'POST',
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          accept: 'application/graphql-response+json',
        },
        body: JSON.stringify({ query: print(document), variables }),
      }),
    );
    const text = await response.text();
    return { status: response.status, text, commands };
  };

  process.stdout.write(
    `Query cost against what runs (dataset of ${SIZES.full.facts} facts, ${SIZES.full.entities} entities, ${SIZES.full.episodes} episodes, ${SIZES.full.memories} memories; limit ${QUERY_LIMITS.maxCost})\n`,
  );
  process.stdout.write(
    `  ${'operation'.padEnd(36)} ${'cost'.padStart(6)} ${'objects'.padStart(8)} ${'obj/cost'.padStart(8)} ${'commands'.padStart(8)} ${'cmd/cost'.padStart(8)} ${'bytes'.padStart(9)} ${'bytes/cost'.padStart(10)}\n`,
  );
  let broken = 0;
  for (const op of [...corpus, ...nearTheLimit]) {
    const { cost } = measureOperation(schema, op.document, { variables }, {});
    await run(op.document); // once to warm the server, then measured
    const { status, text, commands: ran } = await run(op.document);
    const body = JSON.parse(text) as { data?: unknown; errors?: unknown[] };
    const objects = objectsIn(body.data);
    const kept = status === 200 && !body.errors && objects <= cost && ran <= cost;
    if (!kept) broken++;
    const ratio = (x: number) => (x / cost).toFixed(3);
    process.stdout.write(
      `  ${op.name.padEnd(36)} ${String(cost).padStart(6)} ${String(objects).padStart(8)} ${ratio(objects).padStart(8)} ${String(ran).padStart(8)} ${ratio(ran).padStart(8)} ${String(text.length).padStart(9)} ${(text.length / cost).toFixed(1).padStart(10)}${kept ? '' : `  PROMISE BROKEN (status ${status}${body.errors ? `, ${JSON.stringify(body.errors).slice(0, 200)}` : ''})`}\n`,
    );
  }
  for (const op of attacks) {
    const { cost } = measureOperation(schema, op.document, { variables }, {});
    const { status, commands: ran } = await run(op.document);
    // The key lookup is the one command a refused request may run.
    const refused = status === 400 && ran <= 1;
    if (!refused) broken++;
    process.stdout.write(
      `  ${op.name.padEnd(36)} ${String(cost).padStart(6)}  refused: ${refused ? 'yes' : 'NO'} (status ${status}, ${ran} commands)\n`,
    );
  }
  await database.db.dropDatabase();
  await database.close();
  if (broken > 0) {
    process.stderr.write(`${broken} operations broke the cost promise\n`);
    process.exitCode = 1;
  }
} finally {
  await ferret?.stop();
  rmSync(dir, { recursive: true, force: true });
}
