import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { type Document, type Filter, MongoClient } from 'mongodb';
import { stemmer } from 'stemmer';
import { eng } from 'stopword';
import { parseCommandLine } from '../src/cli/help.js';
import { loadEmbedder } from '../src/embeddings/embedder.js';
import { readModelFiles } from '../src/embeddings/modelFiles.js';
import { MeaningIndex } from '../src/recall/meaningIndex.js';
import { recall as recallService } from '../src/recall/recall.js';
import { collections } from '../src/store/collections.js';

/**
 * The benchmark's baseline: the least a server can do to answer the gateway's REST
 * questions (and its nested GraphQL question) on the same database. Plain node:http, the
 * raw `mongodb` driver, `JSON.stringify`. Same filters, sort, limits and response bytes
 * as the gateway, re-stated here on purpose (nothing is imported from src/ but the recall
 * service, see "Ranked recall" below), so the baseline stays the physical limit the
 * gateway is compared with:
 *
 * - no authentication at all: the workspace is fixed by BASELINE_WORKSPACE_ID (the
 *   gateway reads the key and its workspace, two `_id` lookups, on every request);
 * - no dataset lookup (an unknown dataset simply matches nothing: same REST answer);
 * - the fewest driver queries, run in parallel where they are independent, with
 *   projections to the fields the answer needs;
 * - GET /__bench/stats: this process's own CPU time (`process.cpuUsage()`), RSS, and how
 *   many requests it has served and database commands it has sent, for the bench's
 *   per-request ratios.
 *
 * Environment: MONGODB_URI, MONGODB_DB, BASELINE_WORKSPACE_ID, PORT (0 = a free one),
 * HOST (127.0.0.1). Prints `Baseline listening on http://...` once ready.
 */

parseCommandLine(import.meta.url, { options: {} });

const stats = { requests: 0, commands: 0 };

const uri = process.env.MONGODB_URI;
const dbName = process.env.MONGODB_DB;
const workspaceId = process.env.BASELINE_WORKSPACE_ID;
if (!uri || !dbName || !workspaceId) {
  process.stderr.write('baseline: set MONGODB_URI, MONGODB_DB and BASELINE_WORKSPACE_ID\n');
  process.exit(2);
}

// Commands are counted where they are issued (one per driver call: every read here fits
// in its first batch, so there is no getMore or killCursors to miss). Command monitoring
// would count them exactly, but it also deserializes every reply a second time (driver
// 7 builds each CommandSucceededEvent's `reply` with toObject), which the physical limit
// does not pay; BASELINE_MONITOR_COMMANDS=true turns it on to measure that cost.
const monitor = process.env.BASELINE_MONITOR_COMMANDS === 'true';
const client = new MongoClient(uri, { serverSelectionTimeoutMS: 10_000, monitorCommands: monitor });
if (monitor) {
  client.on('commandSucceeded', () => stats.commands++);
  client.on('commandFailed', () => stats.commands++);
}
const issued = (n: number) => {
  if (!monitor) stats.commands += n;
};
await client.connect();
const db = client.db(dbName);
const facts = db.collection('facts');
const entities = db.collection('entities');
const memories = db.collection('memories');

// ---- The rules, re-stated (see src/store/orders.ts, src/store/factFilters.ts and src/domain/*) ----

const FACT_ORDER = { validAt: -1, factId: -1 } as const;
const ENTITY_ORDER = { updatedAt: -1, entityId: -1 } as const;
const MEMORY_ORDER = { createdAt: -1, memoryId: -1 } as const;

const FACT_FIELDS = {
  _id: 0,
  factId: 1,
  subject: 1,
  predicate: 1,
  object: 1,
  objectIsEntity: 1,
  confidence: 1,
  sourceQuote: 1,
  validAt: 1,
  validUntil: 1,
  invalidAt: 1,
  episodeId: 1,
} as const;

/** Believed at `known` and valid at `valid` (live now: both are now). */
function bitemporal(valid: Date, known: Date): Filter<Document>[] {
  return [
    { recordedAt: { $lte: known } },
    { $or: [{ invalidAt: null }, { invalidAt: { $gt: known } }] },
    { validAt: { $lte: valid } },
    { $or: [{ validUntil: null }, { validUntil: { $gt: valid } }] },
  ];
}

const allOf = (clauses: Filter<Document>[]): Filter<Document> =>
  clauses.length === 1 ? clauses[0]! : { $and: clauses };

const WORD = /[\p{L}\p{M}\p{N}]+/gu;

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?([Zz]|[+-]\d{2}:\d{2})$/;
function instant(value: string, dateAllowed: boolean): Date | null {
  const ok = DATE_TIME.test(value) || (dateAllowed && DATE_ONLY.test(value));
  const date = ok ? new Date(DATE_ONLY.test(value) ? `${value}T00:00:00.000Z` : value) : null;
  return date && !Number.isNaN(date.getTime()) ? date : null;
}

/** An entity's stored `_id`: a name-based UUID of (kind, workspace, dataset, name). */
function entityDocId(dataset: string, name: string): string {
  const hash = createHash('sha1')
    .update(JSON.stringify(['entity', workspaceId, dataset, name]))
    .digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/** The documented Memory Soda fact object: exactly these fields, in this order. */
const factOut = (f: Document) => ({
  factId: f.factId,
  subject: f.subject,
  predicate: f.predicate,
  object: f.object,
  objectIsEntity: f.objectIsEntity,
  confidence: f.confidence,
  sourceQuote: f.sourceQuote,
  validAt: f.validAt,
  validUntil: f.validUntil,
  invalidAt: f.invalidAt,
  episodeId: f.episodeId,
});

/** Text as recall analyzes it (src/domain/recallTerms.ts): words, stop words out, stemmed. */
const STOP_WORDS = new Set(eng);
const analyze = (text: string) =>
  (text.normalize('NFC').toLowerCase().match(WORD) ?? [])
    .filter((w) => !STOP_WORDS.has(w))
    .map((w) => stemmer(w));

// ---- The questions ----

class BadInput extends Error {}

async function listFacts(dataset: string, params: URLSearchParams) {
  const limitText = params.get('limit');
  const limit = limitText === null ? 50 : Number(limitText);
  if (!/^\d+$/.test(limitText ?? '50') || limit < 1 || limit > 100) {
    throw new BadInput('limit: must be a whole number between 1 and 100');
  }
  const q = params.get('q');
  if (q !== null && q.length > 1000) throw new BadInput('q: must be at most 1000 characters');
  const asOfText = params.get('asOf');
  const asOf = asOfText === null ? null : instant(asOfText, true);
  if (asOfText !== null && !asOf) throw new BadInput('asOf: must be an ISO 8601 date');
  const episodeId = params.get('episodeId')?.toLowerCase() ?? null;
  const includeInvalidated = params.get('includeInvalidated') === 'true';

  const clauses: Filter<Document>[] = [{ workspaceId, dataset }];
  if (episodeId) clauses.push({ episodeId });
  // The stored recall terms (src/store/factFilters.ts queryFilter), analyzed as recall does.
  const words = q ? [...new Set(analyze(q))] : [];
  if (words.length > 0) clauses.push({ recallTerms: { $all: words } });
  const now = new Date();
  if (asOf) clauses.push(...bitemporal(asOf, asOf));
  else if (!includeInvalidated && !episodeId) clauses.push(...bitemporal(now, now));
  const filter = allOf(clauses);

  issued(2);
  const [docs, total] = await Promise.all([
    facts.find(filter, { projection: FACT_FIELDS }).sort(FACT_ORDER).limit(limit).toArray(),
    facts.countDocuments(filter),
  ]);
  return { facts: docs.map(factOut), total };
}

async function entityFacts(dataset: string, rawName: string) {
  const name = rawName.toLowerCase();
  const now = new Date();
  const filter = allOf([
    { workspaceId, dataset },
    { $or: [{ subjectKey: name }, { objectKey: name }] },
    ...bitemporal(now, now),
  ]);
  issued(2);
  const [entity, docs] = await Promise.all([
    entities.findOne(
      { _id: entityDocId(dataset, name) as unknown as Document['_id'] },
      { projection: { _id: 1 } },
    ),
    facts.find(filter, { projection: FACT_FIELDS }).sort(FACT_ORDER).batchSize(10_000).toArray(),
  ]);
  return { facts: entity ? docs.map(factOut) : [] };
}

async function listEntities(dataset: string) {
  issued(1);
  const docs = await entities
    .find({ workspaceId, dataset }, { projection: { _id: 0, entityId: 1, name: 1, type: 1 } })
    .sort(ENTITY_ORDER)
    .batchSize(10_000)
    .toArray();
  return { entities: docs.map((e) => ({ entityId: e.entityId, name: e.name, type: e.type })) };
}

async function listMemories(params: URLSearchParams) {
  const includeArchived = params.get('include_archived') === 'true';
  const asOfText = params.get('as_of');
  const asOf = asOfText === null ? null : instant(asOfText, false);
  if (asOfText !== null && !asOf) throw new BadInput('as_of: must be an RFC 3339 date-time');
  const clauses: Filter<Document>[] = [{ workspaceId }];
  if (asOf) {
    clauses.push({ validFrom: { $lte: asOf } });
    clauses.push({ $or: [{ validUntil: null }, { validUntil: { $gt: asOf } }] });
  } else {
    clauses.push({ $or: [{ validUntil: null }, { validUntil: { $gt: new Date() } }] });
  }
  if (!includeArchived) clauses.push({ archivedAt: null });
  issued(1);
  const docs = await memories
    .find({ $and: clauses }, { projection: { _id: 0 } })
    .sort(MEMORY_ORDER)
    .batchSize(10_000)
    .toArray();
  return docs.map((m) => ({
    archived_at: m.archivedAt,
    created_at: m.createdAt,
    id: m.memoryId,
    importance: m.importance,
    last_used_at: m.lastUsedAt,
    memory_kind: m.memoryKind,
    pinned: m.pinned,
    project_id: m.projectId,
    salience: m.salience,
    scope: m.scope,
    source_id: m.sourceId,
    source_type: m.sourceType,
    superseded_by: m.supersededBy,
    text: m.text,
    updated_at: m.updatedAt,
    user_id: m.userId,
    valid_from: m.validFrom,
    valid_until: m.validUntil,
    version: m.version,
    workspace_id: m.workspaceId,
  }));
}

/**
 * The nested GraphQL question, `dataset(name) { entities(first) { edges { node { name
 * facts { predicate subjectEntity { name } } } } } }`, whatever the query text says
 * (only `variables.dataset` and `variables.first` are read): the first page of entities,
 * then every live fact touching any of them in one query, then the subject entities not
 * already on the page in one more query (skipped when there are none). An unknown dataset
 * gives an empty page here where the gateway answers `dataset: null` (no dataset lookup).
 */
async function nested(body: string) {
  const variables = (JSON.parse(body) as { variables?: { dataset?: string; first?: number } })
    .variables;
  const dataset = variables?.dataset;
  const first = variables?.first ?? 50;
  if (typeof dataset !== 'string' || !Number.isInteger(first) || first < 1 || first > 100) {
    throw new BadInput('variables.dataset and variables.first (1-100) are required');
  }
  issued(1);
  const page = await entities
    .find({ workspaceId, dataset }, { projection: { _id: 0, name: 1 } })
    .sort(ENTITY_ORDER)
    .limit(first)
    .toArray();
  const names = page.map((e) => e.name as string);
  const byName = new Map<string, Document[]>(names.map((n) => [n, []]));
  if (names.length > 0) {
    const now = new Date();
    issued(1);
    const docs = await facts
      .find(
        allOf([
          { workspaceId, dataset },
          { $or: [{ subjectKey: { $in: names } }, { objectKey: { $in: names } }] },
          ...bitemporal(now, now),
        ]),
        { projection: { _id: 0, predicate: 1, subject: 1, subjectKey: 1, objectKey: 1 } },
      )
      .sort(FACT_ORDER)
      .batchSize(10_000)
      .toArray();
    for (const f of docs) {
      byName.get(f.subjectKey)?.push(f);
      if (f.objectKey !== f.subjectKey) byName.get(f.objectKey)?.push(f);
    }
  }
  const known = new Set(names);
  const subjects = new Set<string>();
  for (const list of byName.values()) for (const f of list) subjects.add(f.subjectKey);
  const missing = [...subjects].filter((s) => !known.has(s));
  if (missing.length > 0) {
    issued(1);
    const found = await entities
      .find(
        {
          _id: { $in: missing.map((s) => entityDocId(dataset, s)) as unknown as Document['_id'][] },
        },
        { projection: { _id: 0, name: 1 } },
      )
      .toArray();
    for (const e of found) known.add(e.name);
  }
  return {
    data: {
      dataset: {
        entities: {
          edges: names.map((name) => ({
            node: {
              name,
              facts: byName.get(name)!.map((f) => ({
                predicate: f.predicate,
                subjectEntity: known.has(f.subjectKey) ? { name: f.subjectKey } : null,
              })),
            },
          })),
        },
      },
    },
  };
}

// ---- HTTP ----

const FACTS = /^\/v1\/memory\/semantic\/datasets\/([^/]+)\/facts$/;
const ENTITIES = /^\/v1\/memory\/semantic\/datasets\/([^/]+)\/entities$/;
const ENTITY_FACTS = /^\/v1\/memory\/semantic\/datasets\/([^/]+)\/entities\/([^/]+)\/facts$/;

function send(res: ServerResponse, status: number, value: unknown) {
  const body = JSON.stringify(value);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
  });
  res.end(body);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((done, fail) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > 1024 * 1024) req.destroy(new Error('body too large'));
      else chunks.push(chunk);
    });
    req.on('end', () => done(Buffer.concat(chunks).toString('utf8')));
    req.on('error', fail);
  });
}

// ---- Ranked recall: the recall service itself, without the gateway ----

/*
 * Recall is the one question the baseline does not re-state: its ranking (BM25F, typos,
 * entities, time in the question, the meaning leg and the fusion) evolves, and a re-stated
 * copy drifts into different answers. So the baseline calls the recall service
 * (src/recall/recall.ts) on the same store, as the gateway's resolver does, without what
 * the gateway adds around it: no key, no GraphQL, no REST validation. With
 * BASELINE_EMBEDDINGS=on (the bench sets it as the gateway's EMBEDDINGS) it loads the same
 * embedding model and keeps its own vector index, as a gateway process does.
 */
const store = collections(db);
const meaning =
  process.env.BASELINE_EMBEDDINGS === 'on'
    ? { embedder: await loadEmbedder(readModelFiles()), index: new MeaningIndex(() => Date.now()) }
    : null;

/** POST /v1/memory/recall: the recall service's facts, in Memory Soda's shape. */
async function recall(body: string) {
  const input = JSON.parse(body) as {
    dataset?: unknown;
    query?: unknown;
    limit?: unknown;
    asOf?: unknown;
  };
  if (typeof input.dataset !== 'string' || input.dataset === '') throw new BadInput('dataset');
  if (typeof input.query !== 'string' || input.query === '' || input.query.length > 2000)
    throw new BadInput('query');
  const limit = input.limit === undefined ? 10 : Number(input.limit);
  const asOf = typeof input.asOf === 'string' ? instant(input.asOf, true) : null;
  if (typeof input.asOf === 'string' && !asOf) throw new BadInput('asOf');
  const recalled = await recallService(
    { store, now: new Date(), problems: [], meaning },
    { workspaceId: workspaceId!, dataset: input.dataset },
    { query: input.query, first: limit, asOf, validAt: null, knownAt: null },
  ).facts();
  const day = (d: Date) => d.toISOString().slice(0, 10);
  return {
    facts: recalled.map(({ item, relevanceScore }) => ({ ...factOut(item), relevanceScore })),
    context: recalled
      .map(
        ({ item: f }) =>
          `- ${f.subject} ${f.predicate} ${f.object} (since ${day(f.validAt)}${f.validUntil ? `, until ${day(f.validUntil)}` : ''})`,
      )
      .join('\n'),
  };
}

async function route(req: IncomingMessage, res: ServerResponse) {
  const url = new URL(req.url ?? '/', 'http://baseline');
  const path = url.pathname;
  if (path === '/__bench/stats') {
    const { rss, heapUsed } = process.memoryUsage();
    send(res, 200, { cpu: process.cpuUsage(), rss, heapUsed, ...stats });
    return;
  }
  stats.requests++;
  const get = req.method === 'GET';
  const factsOf = get ? FACTS.exec(path) : null;
  const entityFactsOf = get && !factsOf ? ENTITY_FACTS.exec(path) : null;
  const entitiesOf = get && !factsOf && !entityFactsOf ? ENTITIES.exec(path) : null;
  if (factsOf) {
    send(res, 200, await listFacts(decodeURIComponent(factsOf[1]!), url.searchParams));
  } else if (entityFactsOf) {
    const [, dataset, name] = entityFactsOf;
    send(res, 200, await entityFacts(decodeURIComponent(dataset!), decodeURIComponent(name!)));
  } else if (entitiesOf) {
    send(res, 200, await listEntities(decodeURIComponent(entitiesOf[1]!)));
  } else if (get && path === '/api/memories') {
    send(res, 200, await listMemories(url.searchParams));
  } else if (req.method === 'POST' && path === '/graphql') {
    send(res, 200, await nested(await readBody(req)));
  } else if (req.method === 'POST' && path === '/v1/memory/recall') {
    send(res, 200, await recall(await readBody(req)));
  } else {
    send(res, 404, { error: 'Not found' });
  }
}

const server = createServer((req, res) => {
  route(req, res).catch((error: unknown) => {
    if (error instanceof BadInput || error instanceof URIError || error instanceof SyntaxError) {
      send(res, 400, { error: error.message });
    } else {
      process.stderr.write(`baseline: ${error instanceof Error ? error.stack : error}\n`);
      if (!res.headersSent) send(res, 500, { error: 'Internal server error' });
    }
  });
});

server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1', () => {
  const address = server.address();
  if (address && typeof address === 'object') {
    process.stdout.write(`Baseline listening on http://${address.address}:${address.port}\n`);
  }
});

const stop = () => {
  server.close();
  server.closeAllConnections();
  void client.close().finally(() => process.exit(0));
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
