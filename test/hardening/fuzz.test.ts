import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import type { Db } from 'mongodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { MAX_URL_LENGTH } from '../../src/http/app.js';
import { MCP_TOOLS } from '../../src/mcp/tools.js';
import { openTestGateway, type TestGateway } from '../helpers/gateway.js';
import { propertySeed } from '../helpers/propertySeed.js';

/**
 * Property-based fuzzing of both REST surfaces, the GraphQL endpoint and MCP, in-process
 * through the gateway's fetch, against a real database holding the demo dataset.
 *
 * For every response: the status is never >= 500 (nor 429: no rate limit is configured),
 * the body is JSON in the documented shape of the surface it hit, and successful REST
 * bodies carry exactly the documented keys. After the whole run, every stored document
 * is byte-for-byte what it was before.
 *
 * How no generated input can legitimately write (so "nothing changed" is a real check):
 * - REST DELETE (the soft delete) runs with a read+write key, but a DELETE request that
 *   mentions any UUID of the demo file anywhere (path or query, after percent-decoding)
 *   is never generated: the only stored facts are the demo's, so every soft delete must
 *   answer 404 (or 400/401/403/405) and a 200 is reported as a failure.
 * - GraphQL `deleteFact` and the memory-version mutations (update/archive/unarchive/pin/
 *   unpin/supersede) run with the read+write key, with ids that cannot name a stored
 *   document (random UUIDs other than the demo file's, or non-UUID garbage): they must be
 *   refused (NOT_FOUND, BAD_USER_INPUT) without writing.
 * - `recordEpisode` with the read+write key always carries one fact whose confidence is
 *   1.5, so input validation must refuse it before anything is written; the other half of
 *   the `recordEpisode` runs, all `createMemory` runs and every random raw document use a
 *   read-only key, so any write they ask for is FORBIDDEN.
 * - `restoreFact`, `eraseDataset` and `eraseEpisode` (admin) use the read+write key
 *   without the admin scope: FORBIDDEN (or BAD_USER_INPUT before that).
 * - MCP's write tools, the same way: `record_episode` with the read+write key carries a
 *   fact of confidence 1.5, `delete_fact` and `update_memory` ids that name nothing,
 *   `create_memory` only ever the read-only key; a write tool that answers without
 *   `isError` is reported as a failure.
 *
 * Seed: fresh each run unless PROPERTY_SEED is set; the seed is printed, and fast-check
 * prints the seed and path of any counterexample so it can be replayed.
 */

// ---------------------------------------------------------------------------------------
// The demo dataset's ids (every UUID in the file), and the stored-data snapshot.

const DEMO_TEXT = readFileSync(new URL('../../src/demo/user_42.jsonl', import.meta.url), 'utf8');
const UUID_RE = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
const DEMO_UUIDS = [...new Set((DEMO_TEXT.match(UUID_RE) ?? []).map((s) => s.toLowerCase()))];
const demoLines = DEMO_TEXT.trim()
  .split('\n')
  .map((l) => JSON.parse(l) as Record<string, unknown>);
const idsOf = (type: string, field: string) =>
  demoLines.filter((l) => l.type === type).map((l) => String(l[field]));
const DEMO_FACT_IDS = idsOf('fact', 'factId');
const DEMO_EPISODE_IDS = idsOf('episode', 'episodeId');
const DEMO_MEMORY_IDS = idsOf('memory', 'id');
const DEMO_ENTITY_NAMES = idsOf('entity', 'name');

/** Every %XX decoded byte-wise (lenient: broken sequences stay as they are). */
const lenientDecode = (s: string) =>
  s.replace(/%([0-9a-f]{2})/gi, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
const mentionsDemoId = (text: string) => {
  const lower = lenientDecode(lenientDecode(text)).toLowerCase();
  return DEMO_UUIDS.some((id) => lower.includes(id));
};

/** Every collection, every document sorted by _id, as JSON (dates tagged, as ISO). */
async function snapshot(db: Db): Promise<Record<string, unknown[]>> {
  const names = (await db.listCollections({}, { nameOnly: true }).toArray())
    .map((c) => c.name)
    .sort();
  const out: Record<string, unknown[]> = {};
  for (const name of names) {
    const docs = await db.collection(name).find({}).toArray();
    const json = docs
      .map((d) => ({ key: JSON.stringify(d._id), doc: d }))
      .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
      .map(({ doc }) =>
        JSON.stringify(doc, function (this: Record<string, unknown>, key, value) {
          const raw = this[key];
          return raw instanceof Date ? { $date: raw.toISOString() } : value;
        }),
      );
    out[name] = json.map((s) => JSON.parse(s) as unknown);
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// Shared arbitraries.

/** Percent-encodes code point by code point; a lone surrogate is left raw (the URL parser makes it U+FFFD). */
const enc = (s: string) =>
  Array.from(s, (ch) => {
    try {
      return encodeURIComponent(ch);
    } catch {
      return ch;
    }
  }).join('');

const SPECIAL = [
  '/',
  '?',
  '#',
  '%',
  '..',
  '.',
  ' ',
  '+',
  '&',
  '=',
  ';',
  '\\',
  '\u0000',
  '\n',
  '\t',
  'é',
  'ÿ',
  '東京',
  '😀',
  '\u202e',
  '\ufeff',
  '%2F',
  '%2e%2e',
  '$ne',
  '$where',
  '{',
  '}',
  '"',
  "'",
  '<script>',
  '`',
  '|',
  '[',
  ']',
  ':',
  '@',
];
const BROKEN_PERCENT = [
  '%',
  '%E0%A4%A',
  '%zz',
  '%2',
  'bad%2',
  '%%',
  '%ED%A0%80',
  '%C0%AF',
  '%FF%FE',
  '%u0041',
  '%0',
  '%G0',
  '%E2%82',
  '%80',
];

const specialString = fc
  .array(fc.oneof(fc.constantFrom(...SPECIAL), fc.string({ maxLength: 3 })), { maxLength: 6 })
  .map((parts) => parts.join(''));
const anyText = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  specialString,
);
const hugeText = fc.oneof(
  fc.string({ unit: 'grapheme-ascii', minLength: 990, maxLength: 3000 }),
  fc.integer({ min: 995, max: 3000 }).map((n) => 'a '.repeat(n).slice(0, n)),
  fc.integer({ min: 490, max: 3000 }).map((n) => 'é'.repeat(n)),
);
const brokenPercent = fc.constantFrom(...BROKEN_PERCENT);
const numberish = fc.oneof(
  fc.constantFrom('0', '1', '50', '100', '101', '-1', '1.5', '1e2', '01', '+5', ' 5', '5 ', '0x10'),
  fc.constantFrom('99999999999999999999', 'NaN', 'Infinity', '-0', '1e308', '١٢'),
  fc.integer().map(String),
  fc.double({ noNaN: true }).map(String),
);
const instantish = fc.oneof(
  fc.constantFrom(
    '2026-06-01',
    '2026-06-01T00:00:00Z',
    '2026-06-01T00:00:00.123456789+02:00',
    '2026-08-16T09:14:02.000Z',
    '2026-02-30',
    '2026-06-01T00:00:00',
    '2026-06-01T24:00:00Z',
    '2026-06-01T00:00:00+24:00',
    '0000-01-01',
    '0000-01-01T00:00:00Z',
    '9999-12-31T23:59:59.999999999-23:59',
    '2026-6-1',
    'now',
    '1717200000000',
    '2026-06-01t00:00:00z',
    '+275760-09-13T00:00:00.000Z',
  ),
  fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
  fc.date({ noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10)),
);
const booleanish = fc.constantFrom(
  'true',
  'false',
  'TRUE',
  'True',
  'yes',
  'no',
  '1',
  '0',
  '',
  'on',
);
const garbageText = fc.oneof(
  fc.constantFrom(
    '',
    'null',
    'undefined',
    '{"$ne":null}',
    '{"$gt":""}',
    '[1,2]',
    '$where',
    'function(){return true}',
    "'; DROP TABLE facts; --",
    '{{7*7}}',
    '$' + '{7*7}',
    '../../etc/passwd',
  ),
  anyText,
  numberish,
  hugeText,
);
const uuidNotDemo = fc
  .uuid()
  .filter((u) => !DEMO_UUIDS.includes(u.toLowerCase()))
  .chain((u) => fc.constantFrom(u, u.toUpperCase()));

// ---------------------------------------------------------------------------------------
// REST requests.

const BASE = '/v1/memory/semantic';
const FACT_KEYS =
  'factId subject predicate object objectIsEntity confidence sourceQuote validAt validUntil invalidAt episodeId'.split(
    ' ',
  );
const MEMORY_KEYS =
  'archived_at created_at id importance last_used_at memory_kind pinned project_id salience scope source_id source_type superseded_by text updated_at user_id valid_from valid_until version workspace_id'.split(
    ' ',
  );
const SUPACLOUD_CODES =
  'not_found unauthorized forbidden license_required license_expired bad_request unprocessable precondition_failed conflict method_not_allowed rate_limited too_many_requests quota_exceeded database_error docker_error vault_error internal_error'.split(
    ' ',
  );
const ENTITY_TYPES =
  'PERSON ORG PLACE PRODUCT SKILL TOPIC EVENT FOOD ROLE CONCEPT THING DATE'.split(' ');

type RestRoute = 'facts' | 'deleteFact' | 'entities' | 'entityFacts' | 'memories' | 'junk';
/** The routes this fuzz aims at, by the name the OpenAPI document gives them. */
const FUZZED_ROUTES: Record<string, Exclude<RestRoute, 'junk'>> = {
  [`GET ${BASE}/datasets/{dataset}/facts`]: 'facts',
  [`DELETE ${BASE}/datasets/{dataset}/facts/{factId}`]: 'deleteFact',
  [`GET ${BASE}/datasets/{dataset}/entities`]: 'entities',
  [`GET ${BASE}/datasets/{dataset}/entities/{name}/facts`]: 'entityFacts',
  'GET /api/memories': 'memories',
};
/** Routes that take a JSON body: their bodies are fuzzed in test/hardening/bodies.test.ts. */
const BODY_ROUTES = ['POST /v1/memory/recall'];

/** Each fuzzed route's method and a matcher of its raw paths, read from its OpenAPI name. */
const ROUTE_PATTERNS = Object.entries(FUZZED_ROUTES).map(([name, route]) => {
  const [method, path] = name.split(' ') as [string, string];
  const segments = path.split('/').map((s) => (/^\{.+\}$/.test(s) ? '[^/]+' : s));
  return { route, method, pattern: new RegExp(`^${segments.join('/')}$`) };
});

/** A path segment: valid, correctly encoded anything, raw anything, or broken percent-encoding. */
const segment = (valid: fc.Arbitrary<string>) =>
  fc.oneof(
    { weight: 5, arbitrary: valid.map(enc) },
    { weight: 3, arbitrary: anyText.map(enc) },
    { weight: 2, arbitrary: anyText },
    {
      weight: 2,
      arbitrary: fc
        .tuple(anyText, brokenPercent, anyText)
        .map(([a, b, c]) => `${enc(a)}${b}${enc(c)}`),
    },
    { weight: 1, arbitrary: hugeText.map(enc) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '',
        '.',
        '..',
        '%2e%2e',
        '%2F',
        '%00',
        '%20',
        'x'.repeat(500),
        'x'.repeat(501),
        'é'.repeat(500),
        '%C3%A9'.repeat(501),
      ),
    },
  );

const datasetName = fc.oneof(
  { weight: 6, arbitrary: fc.constant('user_42') },
  {
    weight: 2,
    arbitrary: fc.constantFrom('USER_42', 'user_4', 'nope', 'user 42', 'a/b', 'ÿ', '$ne'),
  },
);
const entityName = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...DEMO_ENTITY_NAMES) },
  { weight: 1, arbitrary: fc.constantFrom('HONDA CIVIC', 'Honda Civic ', 'nope', 'user%') },
);
const factIdSegment = fc.oneof(
  { weight: 4, arbitrary: uuidNotDemo },
  { weight: 1, arbitrary: fc.constantFrom('not-a-uuid', '00000000-0000-0000-0000-000000000000') },
);

const PARAM_VALUES: Record<string, fc.Arbitrary<string>> = {
  q: fc.oneof(
    fc.constantFrom('car', 'honda civic', 'toyota', '', '  ', '!!!', 'é', 'a'.repeat(1000)),
    anyText,
  ),
  limit: numberish,
  includeInvalidated: booleanish,
  asOf: instantish,
  episodeId: fc.oneof(
    fc.constantFrom(...DEMO_EPISODE_IDS),
    uuidNotDemo,
    fc.constantFrom('not-a-uuid', DEMO_EPISODE_IDS[0]!.replaceAll('-', '')),
  ),
  include_archived: booleanish,
  as_of: instantish,
};
const OPERATOR_NAMES =
  'q[$ne] $where limit[$gt] asOf[$lt] __proto__ constructor episodeId[] as_of[$gt] include_archived[$exists] filter $regex q.$ne LIMIT AsOf'.split(
    ' ',
  );

const queryPair = (documented: string[]) =>
  fc
    .tuple(
      fc.oneof(
        { weight: 6, arbitrary: fc.constantFrom(...documented) },
        { weight: 1, arbitrary: fc.constantFrom(...Object.keys(PARAM_VALUES)) },
        { weight: 2, arbitrary: fc.constantFrom(...OPERATOR_NAMES) },
        { weight: 1, arbitrary: anyText },
      ),
      fc.nat({ max: 9 }),
    )
    .chain(([name, mode]) =>
      fc
        .oneof(
          {
            weight: 3,
            arbitrary: Object.hasOwn(PARAM_VALUES, name) ? PARAM_VALUES[name]! : garbageText,
          },
          { weight: 2, arbitrary: garbageText },
        )
        .map((value) => {
          // Mostly encoded correctly; sometimes raw, sometimes with broken percent-encoding.
          if (mode < 7) return `${enc(name)}=${enc(value)}`;
          if (mode < 8) return `${name}=${value}`;
          if (mode < 9)
            return `${enc(name)}=${enc(value)}${BROKEN_PERCENT[value.length % BROKEN_PERCENT.length]}`;
          return enc(name);
        }),
    );
const queryString = (documented: string[]) =>
  fc.oneof(
    { weight: 1, arbitrary: fc.constant('') },
    {
      weight: 5,
      arbitrary: fc
        .array(queryPair(documented), { minLength: 1, maxLength: 7 })
        .map((pairs) => `?${pairs.join('&')}`),
    },
  );

const FACTS_PARAMS = ['q', 'limit', 'includeInvalidated', 'asOf', 'episodeId'];
const MEMORIES_PARAMS = ['include_archived', 'as_of'];

const restTarget: fc.Arbitrary<{ route: RestRoute; path: string }> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc
      .tuple(segment(datasetName), queryString(FACTS_PARAMS))
      .map(([d, q]) => ({ route: 'facts' as const, path: `${BASE}/datasets/${d}/facts${q}` })),
  },
  {
    weight: 3,
    arbitrary: fc
      .tuple(segment(datasetName), segment(factIdSegment), queryString(FACTS_PARAMS))
      .map(([d, f, q]) => ({
        route: 'deleteFact' as const,
        path: `${BASE}/datasets/${d}/facts/${f}${q}`,
      })),
  },
  {
    weight: 2,
    arbitrary: fc.tuple(segment(datasetName), queryString(FACTS_PARAMS)).map(([d, q]) => ({
      route: 'entities' as const,
      path: `${BASE}/datasets/${d}/entities${q}`,
    })),
  },
  {
    weight: 3,
    arbitrary: fc
      .tuple(segment(datasetName), segment(entityName), queryString(FACTS_PARAMS))
      .map(([d, n, q]) => ({
        route: 'entityFacts' as const,
        path: `${BASE}/datasets/${d}/entities/${n}/facts${q}`,
      })),
  },
  {
    weight: 4,
    arbitrary: queryString(MEMORIES_PARAMS).map((q) => ({
      route: 'memories' as const,
      path: `/api/memories${q}`,
    })),
  },
  {
    weight: 2,
    arbitrary: fc
      .tuple(
        fc.constantFrom(
          `${BASE}`,
          `${BASE}/datasets`,
          '/api',
          '/api/memories',
          `${BASE}/datasets/user_42`,
        ),
        fc.array(segment(fc.constantFrom('facts', 'entities', 'memories', 'datasets')), {
          maxLength: 4,
        }),
        queryString(FACTS_PARAMS),
      )
      .map(([base, segs, q]) => ({
        route: 'junk' as const,
        path: `${base}${segs.map((s) => `/${s}`).join('')}${q}`,
      })),
  },
);

type KeyChoice =
  | { kind: 'none' }
  | { kind: 'bad'; header: string }
  | { kind: 'read' }
  | { kind: 'readWrite' };

/** Authorization headers that are certainly not a valid key (built from the real one). */
const badHeaderFor = (validKey: string): fc.Arbitrary<string> =>
  fc.constantFrom(
    'Bearer mk_bad',
    `Bearer mk_${'0'.repeat(24)}_${'A'.repeat(43)}`,
    `Bearer ${validKey.slice(0, -1)}${validKey.endsWith('A') ? 'B' : 'A'}`,
    `Bearer ${validKey} extra`,
    `Basic ${Buffer.from('user:pass').toString('base64')}`,
    'Bearer',
    'Bearer ',
    validKey,
    `Token ${validKey}`,
    'Bearer {"$ne":null}',
    `Bearer ${'x'.repeat(3000)}`,
  );

let t: TestGateway;
let readWriteKey: string;
let readKey: string;
let before: Record<string, unknown[]>;
const counts = { rest: 0, graphql: 0, mcp: 0 };
const seed = propertySeed('fuzz');

beforeAll(async () => {
  t = await openTestGateway({ demoWorkspaces: ['alpha'] });
  readWriteKey = await t.key('alpha', ['read', 'write']);
  readKey = await t.key('alpha', ['read']);
  before = await snapshot(t.database.db);
});

const keyChoice = (): fc.Arbitrary<KeyChoice> =>
  fc.oneof(
    { weight: 1, arbitrary: fc.constant({ kind: 'none' as const }) },
    {
      weight: 1,
      arbitrary: badHeaderFor(readWriteKey).map((header) => ({ kind: 'bad' as const, header })),
    },
    { weight: 1, arbitrary: fc.constant({ kind: 'read' as const }) },
    { weight: 7, arbitrary: fc.constant({ kind: 'readWrite' as const }) },
  );

function authHeaders(key: KeyChoice): Record<string, string> {
  switch (key.kind) {
    case 'none':
      return {};
    case 'bad':
      return { authorization: key.header };
    case 'read':
      return { authorization: `Bearer ${readKey}` };
    case 'readWrite':
      return { authorization: `Bearer ${readWriteKey}` };
  }
}

class ShapeError extends Error {}
function check(condition: unknown, message: string, context: string): asserts condition {
  if (!condition) throw new ShapeError(`${message}\n  request: ${context}`);
}
const keysOf = (o: unknown) => Object.keys(o as object);
const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const sameKeys = (o: unknown, keys: string[]) =>
  isPlainObject(o) && JSON.stringify(keysOf(o).sort()) === JSON.stringify([...keys].sort());

function checkMemorySodaError(body: unknown, ctx: string) {
  check(sameKeys(body, ['error']), 'Memory Soda error body must be exactly { "error" }', ctx);
  check(typeof (body as { error: unknown }).error === 'string', 'error must be a string', ctx);
}

function checkSupaCloudError(body: unknown, ctx: string) {
  check(
    sameKeys(body, ['code', 'error', 'details']),
    'SupaCloud error body must be exactly { code, error, details }',
    ctx,
  );
  const b = body as { code: unknown; error: unknown; details: unknown };
  check(SUPACLOUD_CODES.includes(b.code as string), `unknown SupaCloud code ${b.code}`, ctx);
  check(typeof b.error === 'string', 'error must be a string', ctx);
  check(b.details === null, 'details must be null', ctx);
}

function checkRestSuccess(route: RestRoute | null, body: unknown, ctx: string) {
  switch (route) {
    case 'facts': {
      check(sameKeys(body, ['facts', 'total']), 'facts body must be { facts, total }', ctx);
      const b = body as { facts: unknown[]; total: unknown };
      check(Array.isArray(b.facts), 'facts must be an array', ctx);
      check(Number.isInteger(b.total) && (b.total as number) >= b.facts.length, 'bad total', ctx);
      for (const f of b.facts) check(sameKeys(f, FACT_KEYS), 'fact keys', ctx);
      return;
    }
    case 'entityFacts': {
      check(sameKeys(body, ['facts']), 'entity facts body must be { facts }', ctx);
      const b = body as { facts: unknown[] };
      check(Array.isArray(b.facts), 'facts must be an array', ctx);
      for (const f of b.facts) check(sameKeys(f, FACT_KEYS), 'fact keys', ctx);
      return;
    }
    case 'entities': {
      check(sameKeys(body, ['entities']), 'entities body must be { entities }', ctx);
      const b = body as { entities: unknown[] };
      check(Array.isArray(b.entities), 'entities must be an array', ctx);
      for (const e of b.entities) {
        check(sameKeys(e, ['entityId', 'name', 'type']), 'entity keys', ctx);
        check(ENTITY_TYPES.includes((e as { type: string }).type), 'entity type', ctx);
      }
      return;
    }
    case 'memories': {
      check(Array.isArray(body), '/api/memories body must be an array', ctx);
      for (const m of body as unknown[]) check(sameKeys(m, MEMORY_KEYS), 'memory keys', ctx);
      return;
    }
    case 'deleteFact':
      // Nothing stored can be deleted by generated input (see the file comment).
      check(false, 'a soft delete succeeded: generated input wrote to the store', ctx);
      return;
    default:
      check(false, 'a 200 on no documented route', ctx);
  }
}

/** A request every documented parameter of which is valid: the answer is a 200. */
interface ValidRestRequest {
  path: string;
  params: [string, string][];
}
const RFC3339 = fc
  .date({
    min: new Date('2025-01-01T00:00:00Z'),
    max: new Date('2028-01-01T00:00:00Z'),
    noInvalidDate: true,
  })
  .map((d) => d.toISOString());
const validParams = (shape: Record<string, fc.Arbitrary<string>>) =>
  fc
    .record(shape, { requiredKeys: [] })
    .map((o) => Object.entries(o).filter((e): e is [string, string] => e[1] !== undefined));
function validRestRequest(): fc.Arbitrary<ValidRestRequest> {
  const dataset = fc.constantFrom('user_42', 'user_42', 'nope', 'a/b ü');
  return fc.oneof(
    fc
      .tuple(
        dataset,
        validParams({
          q: fc.constantFrom('car', 'user', 'honda civic', 'toyota corolla', '', '!!!', 'é'),
          limit: fc.integer({ min: 1, max: 100 }).map(String),
          includeInvalidated: fc.constantFrom('true', 'false'),
          asOf: fc.oneof(
            RFC3339,
            RFC3339.map((d) => d.slice(0, 10)),
          ),
          episodeId: fc.oneof(fc.constantFrom(...DEMO_EPISODE_IDS), fc.uuid()),
        }),
      )
      .map(([d, params]) => ({ path: `${BASE}/datasets/${enc(d)}/facts`, params })),
    dataset.map((d) => ({ path: `${BASE}/datasets/${enc(d)}/entities`, params: [] })),
    fc.tuple(dataset, fc.constantFrom(...DEMO_ENTITY_NAMES, 'nope')).map(([d, n]) => ({
      path: `${BASE}/datasets/${enc(d)}/entities/${enc(n)}/facts`,
      params: [],
    })),
    validParams({ include_archived: fc.constantFrom('true', 'false'), as_of: RFC3339 }).map(
      (params) => ({ path: '/api/memories', params }),
    ),
  );
}
const DOCUMENTED_PARAMS = new Set([...FACTS_PARAMS, ...MEMORIES_PARAMS]);
const unknownParamName = fc
  .oneof(fc.constantFrom(...OPERATOR_NAMES), anyText)
  .filter((name) => !DOCUMENTED_PARAMS.has(name.replaceAll('+', ' ')));

/** One GET with the read+write key; the query is every pair, percent-encoded, in order. */
const restUrl = (path: string, params: [string, string][]) => {
  const query = params.map(([k, val]) => `${enc(k)}=${enc(val)}`).join('&');
  return query ? `${path}?${query}` : path;
};

/**
 * Generated requests compared with each other stay under the URL limit (past it: 414),
 * measured as the gateway sees the URL (the URL parser encodes what `enc` leaves raw).
 */
const fitsUrlLimit = (path: string, params: [string, string][]) => {
  const url = new URL(`http://gateway.test${restUrl(path, params)}`);
  return `${url.pathname}${url.search}`.length <= MAX_URL_LENGTH;
};

async function restAnswer(path: string, params: [string, string][]) {
  counts.rest++;
  const url = restUrl(path, params);
  const response = await t.request(url, { key: readWriteKey });
  return { status: response.status, text: await response.text(), ctx: `GET ${url.slice(0, 400)}` };
}

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD'];

describe('fuzz', () => {
  it('aims at every route of the OpenAPI document, by name', async () => {
    const doc = (await (await t.request('/openapi.json')).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    const routes = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`),
    );
    expect([...Object.keys(FUZZED_ROUTES), ...BODY_ROUTES].sort()).toEqual(routes.sort());
  });

  it('REST: every route, any path segment, any query, any method, any key', async () => {
    const started = Date.now();
    const statuses = new Map<number, number>();
    const requestArb = fc
      .record({
        target: restTarget,
        method: fc.oneof(
          { weight: 8, arbitrary: fc.constant(null) },
          { weight: 2, arbitrary: fc.constantFrom(...METHODS) },
        ),
        key: keyChoice(),
        body: fc.option(fc.oneof(fc.json({ maxDepth: 2 }), anyText), { freq: 3 }),
      })
      .map(({ target, method, key, body }) => ({
        ...target,
        method: method ?? (target.route === 'deleteFact' ? 'DELETE' : 'GET'),
        key,
        body,
      }))
      // No DELETE may name a stored document (see the file comment), and no '..' may lead
      // a REST request to the GraphQL endpoint.
      .filter((r) => r.method !== 'DELETE' || !mentionsDemoId(r.path))
      .filter((r) => !new URL(`http://gateway.test${r.path}`).pathname.startsWith('/graphql'));

    await fc.assert(
      fc.asyncProperty(requestArb, async (r) => {
        counts.rest++;
        const url = new URL(`http://gateway.test${r.path}`);
        const ctx = `${r.method} ${r.path.slice(0, 300)} (key: ${r.key.kind})`;
        const response = await t.request(r.path, {
          method: r.method,
          headers: authHeaders(r.key),
          ...(r.body !== null && !['GET', 'HEAD'].includes(r.method) ? { body: r.body } : {}),
        });
        const text = await response.text();
        const full = `${ctx}\n  response: ${response.status} ${text.slice(0, 300)}`;
        statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
        check(response.status < 500, 'a 5xx', full);
        check(response.status !== 429, 'a 429 without a rate limit configured', full);

        const pathname = url.pathname;
        const surface =
          pathname === BASE || pathname.startsWith(`${BASE}/`)
            ? 'memorySoda'
            : pathname === '/api' || pathname.startsWith('/api/')
              ? 'supaCloud'
              : null;
        // '..' segments can leave both surfaces; what is there is not these surfaces' contract.
        if (!surface) return;
        if (r.method === 'OPTIONS') {
          // A CORS preflight: answered before authentication, with no body.
          check(response.status === 204 && text === '', 'OPTIONS must be a bodiless 204', full);
          return;
        }
        const validKey = r.key.kind === 'read' || r.key.kind === 'readWrite';
        // The URL's length is checked before the key (the cheaper refusal first).
        const tooLong = `${url.pathname}${url.search}`.length > MAX_URL_LENGTH;
        if (
          !tooLong &&
          !validKey &&
          pathname.startsWith(surface === 'memorySoda' ? `${BASE}/` : '/api/')
        ) {
          check(response.status === 401, 'no valid key must be a 401 first', full);
        }
        if (validKey) check(response.status !== 401, 'a valid key answered 401', full);
        check(!tooLong || response.status === 414, 'a URL past the limit must be a 414', full);
        // A route's path with a trailing slash: 308 to it without (src/http/trailingSlash.ts).
        if (response.status === 308) {
          const location = `${pathname.replace(/\/+$/, '')}${url.search}`;
          check(
            pathname.endsWith('/') && response.headers.get('location') === location,
            'a 308 must lead to the same path without its trailing slash',
            full,
          );
          return;
        }
        check(
          [200, 400, 401, 403, 404, 405, ...(tooLong ? [414] : [])].includes(response.status),
          'unexpected status',
          full,
        );
        if (r.method === 'HEAD') return;
        check(
          response.headers.get('content-type')?.startsWith('application/json'),
          'content-type must be JSON',
          full,
        );
        let body: unknown;
        try {
          body = JSON.parse(text);
        } catch {
          check(false, 'body is not JSON', full);
        }
        if (response.status >= 400) {
          if (surface === 'memorySoda') checkMemorySodaError(body, full);
          else checkSupaCloudError(body, full);
          return;
        }
        const matched = ROUTE_PATTERNS.find(
          (p) => p.method === r.method && p.pattern.test(pathname),
        );
        checkRestSuccess(matched?.route ?? null, body, full);
      }),
      { numRuns: 1500, seed, endOnFailure: process.env.FUZZ_NO_SHRINK === '1' },
    );
    console.log(
      `REST fuzz: ${counts.rest} requests in ${Date.now() - started} ms; statuses ${JSON.stringify(Object.fromEntries([...statuses].sort()))}`,
    );
  }, 240_000);

  it('GraphQL: every Query field and the mutations, with generated variables and raw documents', async () => {
    const started = Date.now();
    const codes = new Map<string, number>();
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(graphqlRequest(), async (r) => {
        counts.graphql++;
        const headers: Record<string, string> = {
          'content-type': 'application/json',
          accept: 'application/json',
          ...authHeaders(r.key),
        };
        const payload = JSON.stringify({
          query: r.document,
          ...(r.variables !== undefined ? { variables: r.variables } : {}),
          ...(r.operationName !== undefined ? { operationName: r.operationName } : {}),
        });
        const response = await t.request('/graphql', { method: 'POST', headers, body: payload });
        const text = await response.text();
        const full = `${r.name} (key: ${r.key.kind}) ${payload.slice(0, 600)}\n  response: ${response.status} ${text.slice(0, 400)}`;
        statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
        check(response.status < 500, 'a 5xx', full);
        check(response.status !== 429, 'a 429 without a rate limit configured', full);
        check(
          response.headers.get('content-type')?.startsWith('application/json'),
          'content-type must be JSON',
          full,
        );
        let body: unknown;
        try {
          body = JSON.parse(text);
        } catch {
          check(false, 'body is not JSON', full);
        }
        check(isPlainObject(body), 'body must be an object', full);
        check(
          keysOf(body).every((k) => ['data', 'errors', 'extensions'].includes(k)),
          'unexpected top-level keys',
          full,
        );
        const errors = body.errors;
        if (errors !== undefined) {
          check(
            Array.isArray(errors) && errors.length > 0,
            'errors must be a non-empty list',
            full,
          );
          for (const e of errors as unknown[]) {
            check(isPlainObject(e) && typeof e.message === 'string', 'error without message', full);
            check(e.message !== 'Internal server error', 'an internal server error', full);
            const code = isPlainObject(e.extensions) ? e.extensions.code : undefined;
            check(
              typeof code === 'string' && code.length > 0,
              'error without extensions.code',
              full,
            );
            check(code !== 'INTERNAL_SERVER_ERROR', 'INTERNAL_SERVER_ERROR', full);
            codes.set(code, (codes.get(code) ?? 0) + 1);
          }
        } else {
          check(isPlainObject(body.data), 'neither data nor errors', full);
          codes.set('(no errors)', (codes.get('(no errors)') ?? 0) + 1);
        }
        const validKey = r.key.kind === 'read' || r.key.kind === 'readWrite';
        if (!r.raw && !validKey) {
          check(response.status === 401, 'no valid key must be a 401', full);
          check(
            (errors as { extensions: { code: string } }[] | undefined)?.[0]?.extensions.code ===
              'UNAUTHENTICATED',
            'no valid key must be UNAUTHENTICATED',
            full,
          );
        }
        if (validKey) check(response.status !== 401, 'a valid key answered 401', full);
        if (r.mutation && isPlainObject(body.data)) {
          // No generated mutation can succeed (see the file comment).
          check(
            Object.values(body.data).every((v) => v === null),
            'a mutation succeeded: generated input wrote to the store',
            full,
          );
        }
      }),
      { numRuns: 1000, seed, endOnFailure: process.env.FUZZ_NO_SHRINK === '1' },
    );
    console.log(
      `GraphQL fuzz: ${counts.graphql} requests in ${Date.now() - started} ms; statuses ${JSON.stringify(Object.fromEntries([...statuses].sort()))}; codes ${JSON.stringify(Object.fromEntries([...codes].sort()))}`,
    );
  }, 240_000);

  it('MCP: every tool with generated arguments, unknown tools, and raw JSON-RPC bodies', async () => {
    const started = Date.now();
    const outcomes = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(mcpRequest(), async (r) => {
        counts.mcp++;
        const response = await t.request('/mcp', {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            ...authHeaders(r.key),
          },
          body: r.body,
        });
        const text = await response.text();
        const full = `${r.name} (key: ${r.key.kind}) ${r.body.slice(0, 600)}\n  response: ${response.status} ${text.slice(0, 400)}`;
        check(response.status < 500, 'a 5xx', full);
        check(response.status !== 429, 'a 429 without a rate limit configured', full);
        const validKey = r.key.kind === 'read' || r.key.kind === 'readWrite';
        if (!validKey) check(response.status === 401, 'no valid key must be a 401', full);
        if (response.status === 202) return; // a notification: nothing to answer
        let body: unknown;
        try {
          body = JSON.parse(text);
        } catch {
          check(false, 'body is not JSON', full);
        }
        // A batch (a JSON array body) is answered with an array: one answer per message that
        // has one (docs/MCP.md, "Batches").
        const answers: unknown[] = Array.isArray(body) ? body : [body];
        for (const answer of answers) {
          check(isPlainObject(answer) && answer.jsonrpc === '2.0', 'not a JSON-RPC answer', full);
        }
        check(
          !/\bat .*\.(ts|js):\d+|Internal server error/.test(text),
          'a stack or an internal error',
          full,
        );
        if (Array.isArray(body)) {
          for (const answer of answers as Record<string, unknown>[]) {
            const error = answer.error as { code?: unknown } | undefined;
            check(
              isPlainObject(error) || isPlainObject(answer.result),
              'neither result nor error',
              full,
            );
            check(error?.code !== -32603, 'a JSON-RPC internal error', full);
          }
          outcomes.set('batch', (outcomes.get('batch') ?? 0) + 1);
          return;
        }
        check(isPlainObject(body), 'not a JSON-RPC answer', full);
        if (isPlainObject(body.error)) {
          check(typeof body.error.code === 'number', 'a JSON-RPC error without its code', full);
          check(body.error.code !== -32603, 'a JSON-RPC internal error', full);
          outcomes.set(
            `error ${body.error.code}`,
            (outcomes.get(`error ${body.error.code}`) ?? 0) + 1,
          );
          return;
        }
        const result = body.result as { isError?: boolean; content?: { text?: string }[] };
        check(isPlainObject(result), 'neither result nor error', full);
        if (!r.call) return;
        if (result.isError) {
          const code = /^([A-Z_]+): /.exec(result.content?.[0]?.text ?? '')?.[1];
          check(code !== undefined, 'a failed call without its code', full);
          check(code !== 'INTERNAL_SERVER_ERROR', 'INTERNAL_SERVER_ERROR', full);
          outcomes.set(code!, (outcomes.get(code!) ?? 0) + 1);
        } else {
          check(!r.writes, 'a write tool succeeded: generated input wrote to the store', full);
          outcomes.set('(answered)', (outcomes.get('(answered)') ?? 0) + 1);
        }
      }),
      { numRuns: 800, seed, endOnFailure: process.env.FUZZ_NO_SHRINK === '1' },
    );
    console.log(
      `MCP fuzz: ${counts.mcp} requests in ${Date.now() - started} ms; outcomes ${JSON.stringify(Object.fromEntries([...outcomes].sort()))}`,
    );
    // The run reached the tools: some calls answered, some were refused for their arguments.
    expect(outcomes.get('(answered)') ?? 0).toBeGreaterThan(0);
    expect(outcomes.get('BAD_USER_INPUT') ?? 0).toBeGreaterThan(0);
  }, 240_000);

  it('REST: unknown parameters are ignored (the same answer as without them)', async () => {
    const started = Date.now();
    await fc.assert(
      fc.asyncProperty(
        validRestRequest().chain((base) =>
          fc
            .array(fc.tuple(unknownParamName, garbageText), { minLength: 1, maxLength: 4 })
            .chain((extras) =>
              fc
                .shuffledSubarray([...base.params, ...extras], {
                  minLength: base.params.length + extras.length,
                })
                .map((params) => ({ base, params })),
            ),
        ),
        async ({ base, params }) => {
          fc.pre(fitsUrlLimit(base.path, params));
          const expected = await restAnswer(base.path, base.params);
          const actual = await restAnswer(base.path, params);
          check(
            expected.status === 200,
            `a valid request answered ${expected.status}`,
            expected.ctx,
          );
          check(
            actual.status === expected.status && actual.text === expected.text,
            `unknown parameters changed the answer: ${actual.status} ${actual.text.slice(0, 300)}`,
            `${actual.ctx}\n  without them: ${expected.ctx} → ${expected.text.slice(0, 300)}`,
          );
        },
      ),
      { numRuns: 150, seed, endOnFailure: process.env.FUZZ_NO_SHRINK === '1' },
    );
    console.log(`REST unknown-parameter property: ${Date.now() - started} ms`);
  }, 240_000);

  it('REST: a parameter given twice is read from its first occurrence', async () => {
    const started = Date.now();
    await fc.assert(
      fc.asyncProperty(
        validRestRequest()
          .filter((base) => base.params.length > 0)
          .chain((base) =>
            fc
              .tuple(
                fc.subarray(base.params, { minLength: 1 }),
                fc.array(fc.oneof(garbageText, fc.constantFrom('true', '1', '2026-06-01')), {
                  minLength: base.params.length,
                  maxLength: base.params.length,
                }),
              )
              .map(([repeated, values]) => ({
                base,
                params: [
                  ...base.params,
                  ...repeated.map(([name], i): [string, string] => [name, values[i]!]),
                ],
              })),
          ),
        async ({ base, params }) => {
          fc.pre(fitsUrlLimit(base.path, params));
          const expected = await restAnswer(base.path, base.params);
          const actual = await restAnswer(base.path, params);
          check(
            expected.status === 200,
            `a valid request answered ${expected.status}`,
            expected.ctx,
          );
          check(
            actual.status === expected.status && actual.text === expected.text,
            `a repeated parameter changed the answer: ${actual.status} ${actual.text.slice(0, 300)}`,
            `${actual.ctx}\n  first occurrences only: ${expected.ctx} → ${expected.text.slice(0, 300)}`,
          );
        },
      ),
      { numRuns: 150, seed, endOnFailure: process.env.FUZZ_NO_SHRINK === '1' },
    );
    console.log(`REST repeated-parameter property: ${Date.now() - started} ms`);
  }, 240_000);
});

/**
 * What the fuzzing found, pinned as plain examples (each fails until it is fixed).
 */
describe('found by fuzzing', () => {
  async function post(body: unknown, key = readWriteKey) {
    counts.graphql++;
    const response = await t.request('/graphql', {
      method: 'POST',
      key,
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(body),
    });
    return {
      status: response.status,
      body: (await response.json()) as {
        data?: unknown;
        errors?: { message: string; extensions?: { code?: string } }[];
      },
    };
  }

  const EPISODE = { occurredAt: '2026-06-01', source: 'chat', content: 'hi' };
  it.each([
    ['a number for String!', 'query($n: String!) { dataset(name: $n) { name } }', { n: 5 }, '$n'],
    ['a float for Int', 'query($f: Int) { datasets(first: $f) { totalCount } }', { f: 1.5 }, '$f'],
    [
      'an Int out of range',
      'query($f: Int) { datasets(first: $f) { totalCount } }',
      { f: 2 ** 31 },
      '$f',
    ],
    [
      'an unknown enum value',
      'query($s: [FactState!]) { dataset(name: "user_42") { facts(states: $s) { totalCount } } }',
      { s: ['NOPE'] },
      '$s',
    ],
    [
      'a string for Boolean',
      'query($b: Boolean) { allMemories(includeArchived: $b) { memoryId } }',
      { b: 'yes' },
      '$b',
    ],
    ['an object for ID!', 'query($id: ID!) { node(id: $id) { id } }', { id: { $ne: null } }, '$id'],
    [
      'an unknown input field',
      'mutation($i: RecordEpisodeInput!) { recordEpisode(dataset: "user_42", input: $i) { alreadyRecorded } }',
      { i: { episode: EPISODE, bogus: 1 } },
      '$i',
    ],
    [
      'a required input field left out',
      'mutation($i: MemoryInput!) { createMemory(dataset: "user_42", input: $i) { memoryId } }',
      { i: { memoryKind: 'fact', scope: 'user', sourceType: 'chat' } },
      '$i',
    ],
  ])(
    'GraphQL: a variable of the wrong type (%s) is BAD_USER_INPUT, not a 500',
    async (_what, query, variables, name) => {
      // Read-only key: these mutations could not write even if the input were accepted.
      const { status, body } = await post({ query, variables }, readKey);
      expect(status).toBeLessThan(500);
      expect(body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
      expect(body.errors?.[0]?.message).toContain(name);
    },
  );

  it.each([
    [
      'a required variable left out',
      { query: 'query($n: String!) { dataset(name: $n) { name } }' },
    ],
    [
      'a required variable given null',
      { query: 'query($n: String!) { dataset(name: $n) { name } }', variables: { n: null } },
    ],
    [
      'the depth limit',
      {
        query: `{ dataset(name: "user_42") { facts { edges { node { ${'supersededBy { '.repeat(10)} factId ${'} '.repeat(10)} } } } } }`,
      },
    ],
    [
      'the alias limit',
      { query: `{ ${Array.from({ length: 20 }, (_, i) => `a${i}: viewer { keyId }`).join(' ')} }` },
    ],
    ['the directive limit', { query: `{ viewer ${'@include(if: true) '.repeat(40)} { keyId } }` }],
    [
      'the cost limit',
      {
        query:
          '{ dataset(name: "user_42") { facts(first: 100) { edges { node { factId subject predicate object state history { history { factId } } } } } } }',
      },
    ],
    ['a subscription', { query: 'subscription { viewer { keyId } }' }],
  ])('GraphQL: every error carries extensions.code (%s)', async (_what, request) => {
    const { status, body } = await post(request);
    expect(status).toBeLessThan(500);
    expect(body.errors?.length).toBeGreaterThan(0);
    for (const error of body.errors ?? []) {
      expect(error, JSON.stringify(error)).toMatchObject({
        message: expect.any(String),
        extensions: { code: expect.any(String) },
      });
    }
  });

  it.each(['Nope:x', 'DateTime:x', 'FactState:x'])(
    'GraphQL: node(id) of an unknown or non-object type (%s) is not a 500',
    async (raw) => {
      const id = Buffer.from(raw).toString('base64');
      const { status, body } = await post({
        query: 'query($id: ID!) { node(id: $id) { id } }',
        variables: { id },
      });
      expect(status).toBeLessThan(500);
      expect(body.data).toEqual({ node: null });
      for (const error of body.errors ?? []) expect(error.extensions?.code).toBe('BAD_USER_INPUT');
    },
  );

  it.each([
    [`${BASE}/datasets/user_42/facts?limit=1&limit=abc`, `${BASE}/datasets/user_42/facts?limit=1`],
    [`${BASE}/datasets/user_42/facts?q=car&q=zzz`, `${BASE}/datasets/user_42/facts?q=car`],
    [
      '/api/memories?include_archived=true&include_archived=nope',
      '/api/memories?include_archived=true',
    ],
  ])(
    'REST: a parameter given twice is read from its first occurrence (%s)',
    async (twice, once) => {
      counts.rest += 2;
      const expected = await t.request(once, { key: readWriteKey });
      const actual = await t.request(twice, { key: readWriteKey });
      expect(expected.status).toBe(200);
      expect({ status: actual.status, body: await actual.json() }).toEqual({
        status: 200,
        body: await expected.json(),
      });
    },
  );
});

it('stored data is byte-for-byte unchanged after every generated request', async () => {
  console.log(
    `fuzz total: ${counts.rest} REST + ${counts.graphql} GraphQL + ${counts.mcp} MCP requests`,
  );
  expect(await snapshot(t.database.db)).toEqual(before);
});

// ---------------------------------------------------------------------------------------
// GraphQL requests.

const FACT_SELECTION =
  'id factId dataset subject predicate object objectIsEntity confidence sourceQuote validAt validUntil recordedAt invalidAt invalidReason episodeId state';
const MEMORY_SELECTION =
  'id memoryId workspaceId dataset text memoryKind scope sourceType sourceId projectId userId importance salience pinned version archivedAt createdAt updatedAt lastUsedAt validFrom validUntil supersededBy';
const COUNTS_SELECTION = 'facts entities episodes memories restoredFacts';

/** Fixed documents: every Query field (and every Dataset field) and the mutations. */
const DOCUMENTS = {
  viewer: 'query Viewer { viewer { keyId workspaceId workspace scopes } }',
  datasets: `query Datasets($first: Int, $after: String) {
    datasets(first: $first, after: $after) {
      totalCount pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
      edges { cursor node { id name createdAt } }
    }
  }`,
  facts: `query Facts($dataset: String!, $q: String, $first: Int, $after: String, $includeInvalidated: Boolean,
      $asOf: DateTime, $validAt: DateTime, $knownAt: DateTime, $episodeId: ID, $states: [FactState!], $at: DateTime,
      $recordedAfter: DateTime, $recordedBy: DateTime, $invalidatedAfter: DateTime, $invalidatedBy: DateTime,
      $stateValidAt: DateTime, $stateKnownAt: DateTime) {
    dataset(name: $dataset) {
      id name createdAt
      facts(q: $q, first: $first, after: $after, includeInvalidated: $includeInvalidated, asOf: $asOf,
          validAt: $validAt, knownAt: $knownAt, episodeId: $episodeId, states: $states,
          recordedAfter: $recordedAfter, recordedBy: $recordedBy, invalidatedAfter: $invalidatedAfter,
          invalidatedBy: $invalidatedBy) {
        totalCount pageInfo { hasNextPage endCursor }
        edges { cursor node { ${FACT_SELECTION} stateAt: state(at: $at)
          stateOnAxes: state(at: $at, validAt: $stateValidAt, knownAt: $stateKnownAt)
          supersededBy { factId } episode { episodeId } subjectEntity { name } objectEntity { name }
          history(first: $first) { factId } } }
      }
    }
  }`,
  lookups: `query Lookups($dataset: String!, $factId: ID!, $entity: String!, $episodeId: ID!, $asOf: DateTime,
      $includeInvalidated: Boolean) {
    dataset(name: $dataset) {
      fact(id: $factId) { ${FACT_SELECTION} }
      entity(name: $entity) { id entityId name type updatedAt facts(asOf: $asOf, includeInvalidated: $includeInvalidated) { factId } }
      episode(id: $episodeId) { id episodeId content source occurredAt recordedAt facts { factId } }
      allEntities { entityId name type }
    }
  }`,
  lists: `query Lists($dataset: String!, $first: Int, $entitiesAfter: String, $episodesAfter: String,
      $memoriesAfter: String, $type: EntityType, $asOf: DateTime, $includeArchived: Boolean,
      $includeSuperseded: Boolean) {
    dataset(name: $dataset) {
      entities(first: $first, after: $entitiesAfter, type: $type) { totalCount pageInfo { endCursor } edges { cursor node { id name type } } }
      episodes(first: $first, after: $episodesAfter) { totalCount pageInfo { endCursor } edges { cursor node { id episodeId } } }
      memories(first: $first, after: $memoriesAfter, asOf: $asOf, includeArchived: $includeArchived,
          includeSuperseded: $includeSuperseded) {
        totalCount pageInfo { endCursor } edges { cursor node { ${MEMORY_SELECTION} } }
      }
    }
  }`,
  node: `query Node($id: ID!) {
    node(id: $id) {
      id __typename
      ... on Fact { factId } ... on Entity { name } ... on Episode { episodeId }
      ... on Memory { memoryId text } ... on Dataset { name }
    }
  }`,
  memories: `query Memories($first: Int, $after: String, $asOf: DateTime, $includeArchived: Boolean,
      $includeSuperseded: Boolean) {
    memories(first: $first, after: $after, asOf: $asOf, includeArchived: $includeArchived,
        includeSuperseded: $includeSuperseded) {
      totalCount pageInfo { hasNextPage endCursor } edges { cursor node { ${MEMORY_SELECTION} } }
    }
    allMemories(asOf: $asOf, includeArchived: $includeArchived) { memoryId version }
  }`,
  deleteFact: `mutation DeleteFact($dataset: String!, $id: ID!) {
    deleteFact(dataset: $dataset, id: $id) { factId deleted fact { factId invalidAt } }
  }`,
  restoreFact:
    'mutation RestoreFact($dataset: String!, $id: ID!) { restoreFact(dataset: $dataset, id: $id) { factId } }',
  eraseDataset: `mutation EraseDataset($name: String!) { eraseDataset(name: $name) { ${COUNTS_SELECTION} } }`,
  eraseEpisode: `mutation EraseEpisode($dataset: String!, $id: ID!) { eraseEpisode(dataset: $dataset, id: $id) { ${COUNTS_SELECTION} } }`,
  recordEpisode: `mutation RecordEpisode($dataset: String!, $input: RecordEpisodeInput!) {
    recordEpisode(dataset: $dataset, input: $input) {
      alreadyRecorded supersededIds episode { episodeId } facts { factId } superseded { factId }
    }
  }`,
  createMemory: `mutation CreateMemory($dataset: String!, $input: MemoryInput!) {
    createMemory(dataset: $dataset, input: $input) { ${MEMORY_SELECTION} }
  }`,
  updateMemory: `mutation UpdateMemory($dataset: String!, $memoryId: ID!, $expectedVersion: Int, $patch: MemoryPatch!) {
    updateMemory(dataset: $dataset, memoryId: $memoryId, expectedVersion: $expectedVersion, patch: $patch) { memoryId version }
  }`,
  versioned: (
    field: string,
  ) => `mutation Versioned($dataset: String!, $memoryId: ID!, $expectedVersion: Int) {
    ${field}(dataset: $dataset, memoryId: $memoryId, expectedVersion: $expectedVersion) { memoryId version }
  }`,
  supersedeMemory: `mutation SupersedeMemory($dataset: String!, $memoryId: ID!, $expectedVersion: Int, $input: MemoryInput!) {
    supersedeMemory(dataset: $dataset, memoryId: $memoryId, expectedVersion: $expectedVersion, input: $input) {
      previous { memoryId } memory { memoryId }
    }
  }`,
};

/** JSON values of the wrong type, or out of range, for any variable. */
const garbageJson: fc.Arbitrary<unknown> = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(2 ** 31, -(2 ** 31) - 1, 1e308, 0.1, -0),
  garbageText,
  fc.constant({ $ne: null }),
  fc.constant({ $gt: '' }),
  fc.constant(['x']),
  fc.constant({}),
  fc.jsonValue({ maxDepth: 2 }),
);
/** An optional variable: often left out, mostly of the expected kind, sometimes garbage. */
const v = (valid: fc.Arbitrary<unknown>) =>
  fc.oneof(
    { weight: 8, arbitrary: valid },
    { weight: 1, arbitrary: garbageJson },
    { weight: 4, arbitrary: fc.constant(undefined) },
  );
/** An optional variable mostly left out (arguments that rarely come together). */
const rarely = (valid: fc.Arbitrary<unknown>) =>
  fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: v(valid) });
/** A required variable: mostly of the expected kind, rarely garbage or left out. */
const req = (valid: fc.Arbitrary<unknown>) =>
  fc.oneof(
    { weight: 18, arbitrary: valid },
    { weight: 1, arbitrary: garbageJson },
    { weight: 1, arbitrary: fc.constant(undefined) },
  );

const gDataset = fc.oneof(
  { weight: 6, arbitrary: fc.constant('user_42') },
  {
    weight: 2,
    arbitrary: fc.constantFrom('USER_42', 'nope', '', 'x'.repeat(500), 'x'.repeat(501)),
  },
  { weight: 1, arbitrary: anyText },
);
/** Mostly a valid value, sometimes an edge or invalid one of the right JSON type. */
const mostly = <T>(valid: fc.Arbitrary<T>, edge: fc.Arbitrary<T>) =>
  fc.oneof({ weight: 8, arbitrary: valid }, { weight: 2, arbitrary: edge });

const gFirst = mostly(
  fc.integer({ min: 1, max: 100 }),
  fc.constantFrom(0, 101, -1, 1000, -(2 ** 31)),
);
/** A cursor of a connection: well-formed for `kind` (but pointing anywhere), or malformed. */
const cursorFor = (kind: string) =>
  mostly(
    fc
      .tuple(fc.date({ noInvalidDate: true }), fc.uuid())
      .map(([d, id]) => Buffer.from(JSON.stringify([kind, d.getTime(), id])).toString('base64url')),
    fc.oneof(
      fc
        .tuple(
          fc.constantFrom('fact', 'entity', 'episode', 'memory', 'dataset', kind),
          fc.array(fc.oneof(fc.integer(), fc.double(), anyText, fc.uuid()), { maxLength: 3 }),
        )
        .map(([k, parts]) => Buffer.from(JSON.stringify([k, ...parts])).toString('base64url')),
      fc.constantFrom('', 'zz', 'WyJmYWN0Il0', Buffer.from('not json').toString('base64url')),
      anyText,
      fc.string({ unit: 'grapheme-ascii', minLength: 999, maxLength: 1200 }),
    ),
  );
/** Left out mostly (a first page), else a cursor. */
const gAfter = (kind: string) =>
  fc.oneof(
    { weight: 3, arbitrary: fc.constant(undefined) },
    { weight: 2, arbitrary: cursorFor(kind) },
  );
const gInstant = mostly(
  fc.oneof(
    fc
      .date({
        min: new Date('1970-01-01T00:00:00Z'),
        max: new Date('2100-01-01T00:00:00Z'),
        noInvalidDate: true,
      })
      .map((d) => d.toISOString()),
    fc
      .date({
        min: new Date('2026-01-01T00:00:00Z'),
        max: new Date('2027-12-31T00:00:00Z'),
        noInvalidDate: true,
      })
      .map((d) => d.toISOString().slice(0, 10)),
    fc.constantFrom('2026-06-01', '2026-08-16T09:14:02.000Z', '2026-06-01T12:00:00+02:00'),
  ),
  instantish,
);
const gEpisodeId = mostly(fc.oneof(fc.constantFrom(...DEMO_EPISODE_IDS), fc.uuid()), garbageText);
const gStates = fc.oneof(
  { weight: 9, arbitrary: fc.subarray(['LIVE', 'SUPERSEDED', 'EXPIRED', 'FUTURE']) },
  { weight: 1, arbitrary: fc.array(fc.constantFrom('LIVE', 'live', 'NOPE', ''), { maxLength: 3 }) },
);
const globalId = (type: string, key: string) => Buffer.from(`${type}:${key}`).toString('base64');
const gNodeId = fc.oneof(
  fc
    .tuple(
      fc.constantFrom('Fact', 'Entity', 'Episode', 'Memory'),
      fc.constantFrom('user_42', 'USER_42', 'nope'),
      fc.oneof(
        fc.constantFrom(
          ...DEMO_FACT_IDS,
          ...DEMO_EPISODE_IDS,
          ...DEMO_MEMORY_IDS,
          ...DEMO_ENTITY_NAMES,
        ),
        fc.uuid(),
        anyText,
      ),
    )
    .map(([type, ds, id]) => globalId(type, JSON.stringify([ds, id]))),
  fc.constantFrom('user_42', 'nope', '').map((name) => globalId('Dataset', name)),
  fc
    .tuple(
      fc.constantFrom(
        'Fact',
        'Nope',
        'Query',
        'Viewer',
        'PageInfo',
        'DateTime',
        'FactState',
        'Dataset',
        '',
      ),
      garbageText,
    )
    .map(([type, key]) => globalId(type, key)),
  fc.constantFrom('zz', '', '====', 'RmFjdA==', 'RmFjdDo='),
  anyText,
);
/** An id that cannot name a stored document: a random UUID that is not the demo's, or garbage. */
const gWriteId = fc.oneof(
  { weight: 3, arbitrary: uuidNotDemo },
  { weight: 1, arbitrary: garbageText.filter((s) => !mentionsDemoId(s)) },
);
const gEntityType = mostly(fc.constantFrom(...ENTITY_TYPES), fc.constantFrom('NOPE', 'person', ''));

const gEpisodeInput = fc.record(
  {
    episodeId: v(fc.oneof(uuidNotDemo, garbageText)),
    occurredAt: v(gInstant),
    source: v(fc.oneof(fc.constant('chat'), anyText, hugeText)),
    content: v(fc.oneof(fc.constant('user: hi'), anyText, hugeText)),
    bogus: v(garbageJson),
  },
  { requiredKeys: [] },
);
const gFactInput = fc.record(
  {
    subject: v(fc.oneof(fc.constant('user'), anyText)),
    predicate: v(fc.oneof(fc.constant('likes'), anyText)),
    object: v(fc.oneof(fc.constant('tea'), anyText, hugeText)),
    objectIsEntity: v(fc.boolean()),
    confidence: v(fc.oneof(fc.double({ min: -1, max: 2, noNaN: true }), fc.constantFrom(0, 1))),
    sourceQuote: v(anyText),
    validAt: v(gInstant),
    validUntil: v(gInstant),
    supersedes: v(fc.array(gWriteId, { maxLength: 3 })),
    replaceExisting: v(fc.boolean()),
    $where: v(garbageJson),
  },
  { requiredKeys: [] },
);
const gRecordEpisodeInput = fc.record(
  {
    episode: v(gEpisodeInput),
    entities: v(
      fc.array(
        fc.record(
          { name: v(fc.oneof(anyText, hugeText)), type: v(gEntityType) },
          { requiredKeys: [] },
        ),
        { maxLength: 3 },
      ),
    ),
    facts: v(fc.array(gFactInput, { maxLength: 3 })),
    extra: v(garbageJson),
  },
  { requiredKeys: [] },
);
const gMemoryInput = fc.record(
  {
    memoryId: v(fc.oneof(uuidNotDemo, garbageText)),
    text: v(fc.oneof(fc.constant('The user likes tea.'), anyText, hugeText)),
    memoryKind: v(fc.oneof(fc.constant('fact'), anyText)),
    scope: v(fc.oneof(fc.constant('user'), anyText)),
    sourceType: v(fc.oneof(fc.constant('conversation'), anyText)),
    sourceId: v(fc.oneof(fc.uuid(), garbageText)),
    projectId: v(fc.oneof(fc.uuid(), garbageText)),
    userId: v(fc.oneof(fc.uuid(), garbageText)),
    importance: v(fc.double({ min: -1, max: 2, noNaN: true })),
    salience: v(fc.double({ min: -1, max: 2, noNaN: true })),
    pinned: v(fc.boolean()),
    validFrom: v(gInstant),
    version: v(garbageJson),
  },
  { requiredKeys: [] },
);
const gPatch = fc.record(
  {
    text: v(fc.oneof(anyText, hugeText)),
    memoryKind: v(anyText),
    scope: v(anyText),
    sourceType: v(anyText),
    importance: v(fc.double({ min: -1, max: 2, noNaN: true })),
    salience: v(fc.double({ min: -1, max: 2, noNaN: true })),
    version: v(garbageJson),
    archivedAt: v(gInstant),
  },
  { requiredKeys: [] },
);
const gExpectedVersion = fc.oneof(fc.constantFrom(1, 2, 3, 0, -1), fc.integer());
const INVALID_FACT = { subject: 'user', predicate: 'likes', object: 'tea', confidence: 1.5 };

/** Tokens for random documents: GraphQL punctuation, keywords, the schema's names, literals. */
const TOKENS = [
  ...'{ } ( ) [ ] : $ ! = @ ... | & , # " """ query mutation subscription fragment on true false null __typename __schema __type @deprecated viewer datasets dataset facts fact edges node totalCount entities entity episodes memories allMemories allEntities history supersededBy factId subject id deleteFact recordEpisode createMemory eraseDataset keyId DateTime FactState 1e999 0x1 é'.split(
    ' ',
  ),
  '@include(if: true)',
  '@skip(if: $x)',
  'name: "user_42"',
  'first: 100',
  'first: -1',
  'asOf: "2026-06-01"',
  'asOf: 5',
  'q: "car"',
  '$x: Int',
  '$x: String!',
  '"\\u0000"',
  '"\\uD800"',
];
const rawDocument = fc.oneof(
  fc.array(fc.constantFrom(...TOKENS), { maxLength: 40 }).map((ts) => ts.join(' ')),
  fc.array(fc.constantFrom(...TOKENS), { maxLength: 20 }).map((ts) => `{ ${ts.join(' ')} }`),
  fc
    .constantFrom(...Object.values(DOCUMENTS).filter((d): d is string => typeof d === 'string'))
    .chain((doc) =>
      fc
        .tuple(fc.nat({ max: doc.length }), fc.nat({ max: 20 }), fc.constantFrom(...TOKENS))
        .map(([at, cut, token]) => `${doc.slice(0, at)} ${token} ${doc.slice(at + cut)}`),
    ),
  fc
    .tuple(
      fc.integer({ min: 10, max: 40 }),
      fc.constantFrom('supersededBy', 'history', 'episode { facts'),
    )
    .map(
      ([depth, field]) =>
        `{ dataset(name: "user_42") { facts { edges { node { ${`${field} { `.repeat(depth)} factId ${'} '.repeat(depth)} } } } } }`,
    ),
  fc
    .integer({ min: 10, max: 40 })
    .map((n) => `{ ${Array.from({ length: n }, (_, i) => `a${i}: viewer { keyId }`).join(' ')} }`),
  fc.integer({ min: 2900, max: 3200 }).map((n) => `{ viewer { ${'keyId '.repeat(n)} } }`),
  anyText,
  hugeText,
);

interface GraphqlCase {
  name: string;
  document: string;
  variables: unknown;
  operationName?: unknown;
  key: KeyChoice;
  raw: boolean;
  mutation: boolean;
}

/** Strips the `undefined`s (left-out variables), as JSON would. */
const vars = (o: Record<string, unknown>) => JSON.parse(JSON.stringify(o)) as unknown;

function graphqlRequest(): fc.Arbitrary<GraphqlCase> {
  const anyKey = keyChoice();
  const query = (name: keyof typeof DOCUMENTS, variables: fc.Arbitrary<Record<string, unknown>>) =>
    fc.tuple(variables, anyKey).map(
      ([vs, key]): GraphqlCase => ({
        name,
        document: DOCUMENTS[name] as string,
        variables: vars(vs),
        key,
        raw: false,
        mutation: false,
      }),
    );
  const mutation = (
    name: string,
    document: string,
    variables: fc.Arbitrary<Record<string, unknown>>,
    key: KeyChoice,
  ) =>
    variables
      .map(
        (vs): GraphqlCase => ({
          name,
          document,
          variables: vars(vs),
          key,
          raw: false,
          mutation: true,
        }),
      )
      // Nothing a mutation gets may name a stored document (see the file comment).
      .filter((c) => !mentionsDemoId(JSON.stringify(c.variables)));
  const readOnly: KeyChoice = { kind: 'read' };
  const readWrite: KeyChoice = { kind: 'readWrite' };
  return fc.oneof(
    query('viewer', fc.record({ extra: v(garbageJson) }, { requiredKeys: [] })),
    query(
      'datasets',
      fc.record({ first: v(gFirst), after: gAfter('dataset') }, { requiredKeys: [] }),
    ),
    {
      weight: 4,
      arbitrary: query(
        'facts',
        fc.record(
          {
            dataset: req(gDataset),
            q: v(
              mostly(
                fc.oneof(fc.constantFrom('car', 'honda civic', 'user', ''), anyText),
                hugeText,
              ),
            ),
            first: v(gFirst),
            after: gAfter('fact'),
            includeInvalidated: v(fc.boolean()),
            asOf: v(gInstant),
            validAt: rarely(gInstant),
            knownAt: rarely(gInstant),
            episodeId: v(gEpisodeId),
            states: v(gStates),
            at: rarely(gInstant),
            recordedAfter: rarely(gInstant),
            recordedBy: rarely(gInstant),
            invalidatedAfter: rarely(gInstant),
            invalidatedBy: rarely(gInstant),
            stateValidAt: rarely(gInstant),
            stateKnownAt: rarely(gInstant),
          },
          { requiredKeys: [] },
        ),
      ),
    },
    {
      weight: 2,
      arbitrary: query(
        'lookups',
        fc.record(
          {
            dataset: req(gDataset),
            factId: req(
              mostly(fc.oneof(fc.constantFrom(...DEMO_FACT_IDS), fc.uuid()), garbageText),
            ),
            entity: req(
              mostly(
                fc.oneof(fc.constantFrom(...DEMO_ENTITY_NAMES, 'HONDA CIVIC'), anyText),
                hugeText,
              ),
            ),
            episodeId: req(gEpisodeId),
            asOf: v(gInstant),
            includeInvalidated: v(fc.boolean()),
          },
          { requiredKeys: [] },
        ),
      ),
    },
    {
      weight: 2,
      arbitrary: query(
        'lists',
        fc.record(
          {
            dataset: req(gDataset),
            first: v(gFirst),
            entitiesAfter: gAfter('entity'),
            episodesAfter: gAfter('episode'),
            memoriesAfter: gAfter('memory'),
            type: v(gEntityType),
            asOf: v(gInstant),
            includeArchived: v(fc.boolean()),
            includeSuperseded: v(fc.boolean()),
          },
          { requiredKeys: [] },
        ),
      ),
    },
    { weight: 2, arbitrary: query('node', fc.record({ id: req(gNodeId) }, { requiredKeys: [] })) },
    query(
      'memories',
      fc.record(
        {
          first: v(gFirst),
          after: gAfter('memory'),
          asOf: v(gInstant),
          includeArchived: v(fc.boolean()),
          includeSuperseded: v(fc.boolean()),
        },
        { requiredKeys: [] },
      ),
    ),
    {
      weight: 2,
      arbitrary: mutation(
        'deleteFact',
        DOCUMENTS.deleteFact,
        fc.record({ dataset: req(gDataset), id: req(gWriteId) }, { requiredKeys: [] }),
        readWrite,
      ),
    },
    mutation(
      'restoreFact',
      DOCUMENTS.restoreFact,
      fc.record({ dataset: req(gDataset), id: req(gWriteId) }, { requiredKeys: [] }),
      readWrite,
    ),
    mutation(
      'eraseDataset',
      DOCUMENTS.eraseDataset,
      fc.record({ name: req(gDataset) }, { requiredKeys: [] }),
      readWrite,
    ),
    mutation(
      'eraseEpisode',
      DOCUMENTS.eraseEpisode,
      fc.record({ dataset: req(gDataset), id: req(gWriteId) }, { requiredKeys: [] }),
      readWrite,
    ),
    {
      weight: 2,
      arbitrary: fc.boolean().chain((withWriteKey) =>
        mutation(
          'recordEpisode',
          DOCUMENTS.recordEpisode,
          fc
            .record(
              { dataset: req(gDataset), input: req(gRecordEpisodeInput) },
              { requiredKeys: [] },
            )
            .map((vs) =>
              withWriteKey
                ? {
                    ...vs,
                    // Always refused by validation: one fact's confidence is out of range.
                    input: {
                      ...(isPlainObject(vs.input) ? vs.input : {}),
                      facts: [
                        ...(isPlainObject(vs.input) && Array.isArray(vs.input.facts)
                          ? vs.input.facts
                          : []),
                        INVALID_FACT,
                      ],
                    },
                  }
                : vs,
            ),
          withWriteKey ? readWrite : readOnly,
        ),
      ),
    },
    mutation(
      'createMemory',
      DOCUMENTS.createMemory,
      fc.record({ dataset: req(gDataset), input: req(gMemoryInput) }, { requiredKeys: [] }),
      readOnly,
    ),
    mutation(
      'updateMemory',
      DOCUMENTS.updateMemory,
      fc.record(
        {
          dataset: req(gDataset),
          memoryId: req(gWriteId),
          expectedVersion: v(gExpectedVersion),
          patch: req(gPatch),
        },
        { requiredKeys: [] },
      ),
      readWrite,
    ),
    fc.constantFrom('archiveMemory', 'unarchiveMemory', 'pinMemory', 'unpinMemory').chain((field) =>
      mutation(
        field,
        DOCUMENTS.versioned(field),
        fc.record(
          {
            dataset: req(gDataset),
            memoryId: req(gWriteId),
            expectedVersion: v(gExpectedVersion),
          },
          { requiredKeys: [] },
        ),
        readWrite,
      ),
    ),
    mutation(
      'supersedeMemory',
      DOCUMENTS.supersedeMemory,
      fc.record(
        {
          dataset: req(gDataset),
          memoryId: req(gWriteId),
          expectedVersion: v(gExpectedVersion),
          input: req(gMemoryInput),
        },
        { requiredKeys: [] },
      ),
      readWrite,
    ),
    {
      weight: 3,
      arbitrary: fc
        .tuple(
          rawDocument,
          fc.option(garbageJson, { freq: 2 }),
          fc.option(fc.oneof(anyText, garbageJson), { freq: 4 }),
        )
        .map(
          ([document, variables, operationName]): GraphqlCase => ({
            name: 'raw',
            document,
            variables: variables ?? undefined,
            ...(operationName !== null ? { operationName } : {}),
            // Read-only: whatever a random document asks for, it cannot write.
            key: readOnly,
            raw: true,
            mutation: false,
          }),
        ),
    },
  );
}

// ---------------------------------------------------------------------------------------
// MCP requests.

interface McpCase {
  name: string;
  key: KeyChoice;
  body: string;
  /** A tools/call (its answer is a tool result to check). */
  call: boolean;
  /** A write tool with a key that could write: it must be refused. */
  writes: boolean;
}

const TOOL_NAMES = MCP_TOOLS.map((tool) => tool.name);

/** Each tool's arguments: mostly of its shape, with the writes defused (see the file comment). */
const TOOL_ARGUMENTS: Record<string, fc.Arbitrary<Record<string, unknown>>> = {
  recall: fc.record(
    {
      dataset: req(gDataset),
      query: req(fc.oneof(fc.constant('car'), anyText, hugeText)),
      limit: v(gFirst),
      asOf: rarely(gInstant),
      validAt: v(gInstant),
      knownAt: v(gInstant),
      explain: v(fc.boolean()),
      memories: v(fc.boolean()),
    },
    { requiredKeys: [] },
  ),
  list_facts: fc.record(
    {
      dataset: req(gDataset),
      q: v(anyText),
      limit: v(gFirst),
      cursor: v(anyText),
      includeInvalidated: v(fc.boolean()),
      asOf: rarely(gInstant),
      validAt: v(gInstant),
      knownAt: v(gInstant),
      episodeId: v(fc.oneof(fc.constantFrom(...DEMO_EPISODE_IDS), garbageText)),
    },
    { requiredKeys: [] },
  ),
  entity_facts: fc.record(
    {
      dataset: req(gDataset),
      entity: req(fc.oneof(fc.constantFrom('user', 'honda civic'), anyText)),
      limit: v(fc.integer({ min: -5, max: 2000 })),
      validAt: v(gInstant),
      knownAt: v(gInstant),
    },
    { requiredKeys: [] },
  ),
  fact_history: fc.record(
    {
      dataset: req(gDataset),
      factId: req(fc.oneof(fc.constantFrom(...DEMO_FACT_IDS), garbageText)),
      limit: v(gFirst),
    },
    { requiredKeys: [] },
  ),
  what_changed: fc.record(
    { dataset: req(gDataset), after: v(anyText), limit: v(gFirst) },
    { requiredKeys: [] },
  ),
  list_datasets: fc.record({ limit: v(gFirst), cursor: v(anyText) }, { requiredKeys: [] }),
  record_episode: fc
    .record({ dataset: req(gDataset), input: req(gRecordEpisodeInput) }, { requiredKeys: [] })
    .map((args) => {
      // A fact of confidence 1.5: refused by the input's rules, whatever else it holds.
      const input = args.input;
      if (isPlainObject(input)) {
        const facts = Array.isArray(input.facts) ? input.facts : [];
        input.facts = [...facts, { subject: 'x', predicate: 'y', object: 'z', confidence: 1.5 }];
      }
      return args;
    }),
  delete_fact: fc.record({ dataset: req(gDataset), factId: req(gWriteId) }, { requiredKeys: [] }),
  create_memory: fc.record(
    { dataset: req(gDataset), input: req(gMemoryInput) },
    { requiredKeys: [] },
  ),
  update_memory: fc.record(
    {
      dataset: req(gDataset),
      memoryId: req(gWriteId),
      expectedVersion: v(fc.integer()),
      patch: req(gPatch),
    },
    { requiredKeys: [] },
  ),
};

const WRITE_TOOLS = new Set(['record_episode', 'delete_fact', 'create_memory', 'update_memory']);

function mcpRequest(): fc.Arbitrary<McpCase> {
  const call = fc
    .record({
      tool: fc.oneof(
        { weight: 12, arbitrary: fc.constantFrom(...TOOL_NAMES) },
        // Unknown names, Object.prototype's among them.
        { weight: 1, arbitrary: fc.oneof(anyText, fc.constantFrom('constructor', '__proto__')) },
      ),
      key: keyChoice(),
    })
    .chain(({ tool, key }) =>
      (Object.hasOwn(TOOL_ARGUMENTS, tool)
        ? TOOL_ARGUMENTS[tool]!
        : fc.dictionary(anyText, garbageJson, { maxKeys: 3 })
      ).map((args) => {
        // create_memory never runs with a key that could write (see the file comment).
        const k: KeyChoice =
          tool === 'create_memory' && key.kind === 'readWrite' ? { kind: 'read' } : key;
        return {
          name: `tools/call ${tool}`,
          key: k,
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method: 'tools/call',
            params: { name: tool, arguments: args },
          }),
          call: true,
          writes: WRITE_TOOLS.has(tool) && k.kind === 'readWrite',
        };
      }),
    );
  const raw = fc
    .record({
      key: keyChoice().map((k): KeyChoice => (k.kind === 'readWrite' ? { kind: 'read' } : k)),
      body: fc.oneof(
        fc.json({ maxDepth: 3 }),
        anyText,
        fc
          .record({
            jsonrpc: fc.oneof(fc.constant('2.0'), anyText),
            id: fc.oneof(fc.integer(), anyText, fc.constant(null)),
            method: fc.oneof(
              fc.constantFrom('initialize', 'tools/list', 'tools/call', 'ping', 'resources/list'),
              anyText,
            ),
            params: garbageJson,
          })
          .map((m) => JSON.stringify(m)),
      ),
    })
    .map(({ key, body }) => ({ name: 'raw', key, body, call: false, writes: false }));
  return fc.oneof({ weight: 4, arbitrary: call }, { weight: 1, arbitrary: raw });
}
