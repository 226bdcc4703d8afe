/**
 * The store's fact queries against a reference model, on random histories.
 *
 * Each case generates a few dozen facts spread over two workspaces × two datasets, writes
 * them through the import path, then runs random queries through `listFacts` (walking
 * every page), `countFacts` and `factsOfEntities`, and compares every answer with plain
 * array filtering over the temporal rules (docs/TEMPORAL_MODEL.md), re-stated here on
 * millisecond numbers (not the domain functions the store is built on).
 *
 * The same history also goes into an embedded database started without the store's scalar
 * declarations, which filters, sorts, limits and counts in Go as upstream FerretDB does;
 * every answer of the test's database must be byte-identical to its answer, and the test's
 * database must really have served the fact list from an index (embedded-db/README.md).
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { stemmer } from 'stemmer';
import { eng } from 'stopword';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  FACT_STATES,
  type FactState,
  resolveTemporalSelection,
  type TemporalArgs,
} from '../../src/domain/factState.js';
import { type RunningFerretDb, startFerretDb } from '../../src/embedded/ferretdb.js';
import type { Collections } from '../../src/store/collections.js';
import { type Database, openDatabase } from '../../src/store/database.js';
import type { FactDoc, FactView } from '../../src/store/documents.js';
import type { FactCursor } from '../../src/store/factFilters.js';
import { countFacts, type FactQuery, factsOfEntities, listFacts } from '../../src/store/facts.js';
import type { Tenant } from '../../src/store/tenant.js';
import { workspaceIdFor } from '../../src/store/workspaces.js';
import { parseImportFile } from '../../src/transfer/format.js';
import { importJsonl } from '../../src/transfer/importJsonl.js';
import { openTestDatabase } from '../helpers/database.js';
import { propertySeed } from '../helpers/propertySeed.js';

const HISTORIES = Number(process.env.FACT_PROPERTY_HISTORIES ?? 40);
const QUERIES_PER_HISTORY = Number(process.env.FACT_PROPERTY_QUERIES ?? 30);

// ---------------------------------------------------------------------------------------
// Time: a ladder of instants around "now", with pairs one millisecond apart, so equal
// instants and 1 ms differences are both frequent.

const NOW = new Date();
const DAY = 86_400_000;
/** Strictly increasing in i; i = 12 is NOW, odd steps are 1 ms after the even ones. */
const instantMs = (i: number): number => {
  const j = i - 12;
  return NOW.getTime() + Math.floor(j / 2) * DAY + (((j % 2) + 2) % 2);
};

/** An instant as import text: `toISOString()`, or the same instant with a +02:00 offset. */
const instantText = (ms: number, withOffset: boolean): string =>
  withOffset
    ? new Date(ms + 2 * 3_600_000).toISOString().replace('Z', '+02:00')
    : new Date(ms).toISOString();

// ---------------------------------------------------------------------------------------
// Ids: valid lower-case v4-shaped UUIDs derived from small integers, so ids repeat across
// tenants (the same factId in two datasets) and the id order is not the integer order.

function mix(n: number, salt: number): number {
  let h = Math.imul(n + 1, 0x9e3779b1) ^ Math.imul(salt + 7, 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 16), 0x7feb352d);
  h = Math.imul(h ^ (h >>> 15), 0x846ca68b);
  return (h ^ (h >>> 16)) >>> 0;
}
const hex8 = (n: number, salt: number): string => mix(n, salt).toString(16).padStart(8, '0');
function uuidOf(kind: 'fact' | 'episode', n: number): string {
  const s = kind === 'fact' ? 0 : 100;
  const a = hex8(n, s);
  const b = hex8(n, s + 1);
  const c = hex8(n, s + 2);
  const d = hex8(n, s + 3);
  const variant = '89ab'[mix(n, s + 4) & 3];
  return `${a}-${b.slice(0, 4)}-4${b.slice(5, 8)}-${variant}${c.slice(1, 4)}-${c.slice(4)}${d}`;
}

// ---------------------------------------------------------------------------------------
// Vocabulary: mixed case, accents, decomposed forms, punctuation and non-Latin scripts.

const NAMES = [
  'Alice',
  'alice',
  'ALICE',
  'Bob',
  'Café Rouge',
  'café rouge',
  'Cafe Rouge',
  'Zoë',
  'Zoe\u0308', // decomposed: the same word as "Zoë" for q, a different name for entity lookup
  'ZOË',
  'München',
  'tea',
  'Tea',
  'New York',
  'user_42',
  '東京',
];
const PREDICATES = ['likes', 'LIKES', 'Likes', 'works at', 'lives_in', 'visited', 'drinks'];
const Q_WORDS = [
  'alice',
  'ALICE',
  'bob',
  'café',
  'CAFÉ',
  'cafe\u0301',
  'cafe',
  'rouge',
  'zoë',
  'ZOE\u0308',
  'zoe',
  'münchen',
  'MUNCHEN',
  'tea',
  'new',
  'york',
  'user',
  '42',
  'user_42',
  '東京',
  '東',
  'likes',
  'works',
  'at',
  'lives',
  'in',
  'visited',
  'drinks',
  'absent',
];
const Q_SEPARATORS = [' ', '  ', ', ', '!', ' - ', '\t'];

// ---------------------------------------------------------------------------------------
// Tenants: 2 workspaces × 2 datasets, plus a dataset nobody wrote to.

const DATASETS = ['d1', 'd 2/é?#'];
const TENANT_COUNT = 4;
const GHOST_TENANT = 4;

let caseNumber = 0;
const workspaceNames = (n: number): [string, string] => [`prop-${n}-a`, `prop-${n}-b`];
function tenantOf(names: [string, string], index: number): Tenant {
  if (index === GHOST_TENANT) return { workspaceId: workspaceIdFor(names[0]), dataset: 'nope' };
  return { workspaceId: workspaceIdFor(names[index >> 1]!), dataset: DATASETS[index & 1]! };
}

// ---------------------------------------------------------------------------------------
// Generated histories.

interface GenFact {
  tenant: number;
  idNum: number;
  subject: string;
  predicate: string;
  object: string;
  episode: number | null;
  validAt: number;
  untilDelta: number | null;
  recordedAt: number | null;
  invalidAt: number | null;
  invalidReason: 'superseded' | 'deleted';
  supersededBy: number | null;
  offsets: boolean;
  confidence: number;
  objectIsEntity: boolean;
}

const genFact: fc.Arbitrary<GenFact> = fc.record({
  tenant: fc.integer({ min: 0, max: TENANT_COUNT - 1 }),
  idNum: fc.integer({ min: 0, max: 60 }),
  subject: fc.constantFrom(...NAMES),
  predicate: fc.constantFrom(...PREDICATES),
  object: fc.constantFrom(...NAMES),
  episode: fc.option(fc.integer({ min: 0, max: 2 }), { nil: null }),
  // Often NOW or the day before, so that many facts share a validAt (the id tie-break).
  validAt: fc.oneof(
    { weight: 3, arbitrary: fc.integer({ min: 0, max: 24 }) },
    { weight: 1, arbitrary: fc.constantFrom(10, 12) },
  ),
  untilDelta: fc.option(fc.integer({ min: 1, max: 8 }), { nil: null }),
  recordedAt: fc.option(fc.integer({ min: 0, max: 28 }), { nil: null }),
  invalidAt: fc.option(fc.integer({ min: 0, max: 28 }), { nil: null, freq: 2 }),
  invalidReason: fc.constantFrom('superseded' as const, 'deleted' as const),
  supersededBy: fc.option(fc.integer({ min: 0, max: 60 }), { nil: null }),
  offsets: fc.boolean(),
  confidence: fc.constantFrom(0, 0.25, 1),
  objectIsEntity: fc.boolean(),
});

const genHistory = fc.uniqueArray(genFact, {
  minLength: 20,
  maxLength: 40,
  selector: (f) => `${f.tenant}:${f.idNum}`,
});

/** The reference's view of a fact: what it should be once imported. */
interface RefFact {
  tenant: number;
  key: string;
  factId: string;
  subject: string;
  predicate: string;
  object: string;
  episodeId: string | null;
  validAt: number;
  validUntil: number | null;
  recordedAt: number;
  invalidAt: number | null;
}

/** Import line (src/transfer/format.ts) and reference fact of a generated fact. */
function materialise(g: GenFact, names: [string, string]): { line: object; ref: RefFact } {
  const validAt = instantMs(g.validAt);
  const validUntil = g.untilDelta === null ? null : instantMs(g.validAt + g.untilDelta);
  const recordedAtGiven = g.recordedAt === null ? null : instantMs(g.recordedAt);
  // invalidAt must not be before recordedAt: with a recordedAt, invalidAt = recordedAt + Δ.
  const invalidAt =
    g.invalidAt === null
      ? null
      : g.recordedAt === null
        ? instantMs(g.invalidAt)
        : instantMs(g.recordedAt + (g.invalidAt % 9));
  // The import format's documented default: without recordedAt the store learned the fact
  // when it became valid, or when it was invalidated if that was earlier.
  const recordedAt =
    recordedAtGiven ?? (invalidAt !== null && invalidAt < validAt ? invalidAt : validAt);
  const factId = uuidOf('fact', g.idNum);
  const episodeId = g.episode === null ? null : uuidOf('episode', g.episode);
  const tenant = tenantOf(names, g.tenant);
  const reason = invalidAt === null ? null : g.invalidReason;
  const line: Record<string, unknown> = {
    type: 'fact',
    dataset: tenant.dataset,
    factId,
    subject: g.subject,
    predicate: g.predicate,
    object: g.object,
    objectIsEntity: g.objectIsEntity,
    confidence: g.confidence,
    sourceQuote: g.objectIsEntity ? null : `${g.subject} ${g.predicate} ${g.object}`,
    validAt: instantText(validAt, g.offsets),
    validUntil: validUntil === null ? null : instantText(validUntil, g.offsets),
    invalidAt: invalidAt === null ? null : instantText(invalidAt, g.offsets),
    episodeId,
    invalidReason: reason,
    supersededBy:
      reason === 'superseded' && g.supersededBy !== null ? uuidOf('fact', g.supersededBy) : null,
  };
  if (recordedAtGiven !== null) line.recordedAt = instantText(recordedAtGiven, g.offsets);
  return {
    line,
    ref: {
      tenant: g.tenant,
      key: `${tenant.workspaceId}|${tenant.dataset}|${factId}`,
      factId,
      subject: g.subject,
      predicate: g.predicate,
      object: g.object,
      episodeId,
      validAt,
      validUntil,
      recordedAt,
      invalidAt,
    },
  };
}

// ---------------------------------------------------------------------------------------
// Generated queries.

type Casing = 'as-is' | 'lower' | 'upper';
const recase = (s: string, casing: Casing): string =>
  casing === 'lower' ? s.toLowerCase() : casing === 'upper' ? s.toUpperCase() : s;
const genCasing = fc.constantFrom<Casing>('as-is', 'lower', 'upper');
const genInstant = fc.integer({ min: -1, max: 30 }).map(instantMs);

type Temporal =
  | { kind: 'default' }
  | { kind: 'includeInvalidated' }
  | { kind: 'asOf'; at: number; includeInvalidated: boolean }
  | { kind: 'validAt'; at: number; includeInvalidated: boolean }
  | { kind: 'knownAt'; at: number; includeInvalidated: boolean }
  | { kind: 'both'; validAt: number; knownAt: number };

const genTemporal: fc.Arbitrary<Temporal> = fc.oneof(
  fc.constant({ kind: 'default' as const }),
  fc.constant({ kind: 'includeInvalidated' as const }),
  fc.record({
    kind: fc.constant('asOf' as const),
    at: genInstant,
    includeInvalidated: fc.boolean(),
  }),
  fc.record({
    kind: fc.constant('validAt' as const),
    at: genInstant,
    includeInvalidated: fc.boolean(),
  }),
  fc.record({
    kind: fc.constant('knownAt' as const),
    at: genInstant,
    includeInvalidated: fc.boolean(),
  }),
  fc.record({ kind: fc.constant('both' as const), validAt: genInstant, knownAt: genInstant }),
);

interface Windows {
  recordedAfter: number | null;
  recordedBy: number | null;
  invalidatedAfter: number | null;
  invalidatedBy: number | null;
}

interface GenQuery {
  tenant: number;
  temporal: Temporal;
  episode: { n: number; upper: boolean } | null;
  subjectPredicate: { subject: string; predicate: string } | null;
  q: string | null;
  states: { states: FactState[]; at: number } | null;
  /** Transaction-time windows: any bound may be absent, and "after" may pass "by". */
  windows: Windows | null;
  pageSize: number;
  /** Names for factsOfEntities, on about one query in three. */
  entityNames: string[] | null;
}

/** null two times in three. */
const sometimes = <T>(arb: fc.Arbitrary<T>): fc.Arbitrary<T | null> =>
  fc.oneof({ weight: 2, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: arb });

const genQ: fc.Arbitrary<string> = fc
  .oneof(
    { weight: 8, arbitrary: fc.array(fc.constantFrom(...Q_WORDS), { minLength: 1, maxLength: 3 }) },
    { weight: 1, arbitrary: fc.constant<string[]>([]) },
  )
  .chain((words) =>
    fc
      .tuple(
        fc.array(fc.constantFrom(...Q_SEPARATORS), {
          minLength: Math.max(words.length - 1, 0),
          maxLength: Math.max(words.length - 1, 0),
        }),
        fc.constantFrom('', ' ', '?!', '…'),
      )
      .map(([seps, edge]) =>
        words.length === 0
          ? edge
          : `${edge}${words.map((w, i) => (i === 0 ? w : `${seps[i - 1]}${w}`)).join('')}${edge}`,
      ),
  );

const genName: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.tuple(fc.constantFrom(...NAMES), genCasing).map(([n, c]) => recase(n, c)),
  },
  { weight: 1, arbitrary: fc.constantFrom('nobody', 'Alic', 'zoe') },
);

const genQuery: fc.Arbitrary<GenQuery> = fc.record({
  tenant: fc.oneof(
    { weight: 12, arbitrary: fc.integer({ min: 0, max: TENANT_COUNT - 1 }) },
    { weight: 1, arbitrary: fc.constant(GHOST_TENANT) },
  ),
  temporal: genTemporal,
  episode: sometimes(fc.record({ n: fc.integer({ min: 0, max: 3 }), upper: fc.boolean() })),
  subjectPredicate: sometimes(
    fc
      .tuple(fc.constantFrom(...NAMES), genCasing, fc.constantFrom(...PREDICATES), genCasing)
      .map(([s, sc, p, pc]) => ({ subject: recase(s, sc), predicate: recase(p, pc) })),
  ),
  q: sometimes(genQ),
  states: sometimes(
    fc.record({
      // Any non-empty list, repeats included.
      states: fc.array(fc.constantFrom(...FACT_STATES), { minLength: 1, maxLength: 4 }),
      at: genInstant,
    }),
  ),
  windows: sometimes(
    fc.record({
      recordedAfter: sometimes(genInstant),
      recordedBy: sometimes(genInstant),
      invalidatedAfter: sometimes(genInstant),
      invalidatedBy: sometimes(genInstant),
    }),
  ),
  // Mostly pages that hold the whole answer in one or two calls; small ones often enough
  // that page boundaries fall between facts with equal validAt.
  pageSize: fc.oneof(
    { weight: 2, arbitrary: fc.integer({ min: 1, max: 3 }) },
    { weight: 3, arbitrary: fc.constantFrom(5, 10, 50) },
  ),
  entityNames: sometimes(fc.array(genName, { minLength: 1, maxLength: 4 })),
});

/**
 * The windows on their own, over the full history (as Dataset.facts asks without a time
 * point): the general queries combine them with so much else that a bound rarely meets a
 * fact exactly on it.
 */
const genWindowsQuery: fc.Arbitrary<GenQuery> = fc
  .record({
    tenant: fc.integer({ min: 0, max: TENANT_COUNT - 1 }),
    windows: fc.record({
      recordedAfter: sometimes(genInstant),
      recordedBy: sometimes(genInstant),
      invalidatedAfter: sometimes(genInstant),
      invalidatedBy: sometimes(genInstant),
    }),
    pageSize: fc.constantFrom(3, 50),
  })
  .map(({ tenant, windows, pageSize }) => ({
    tenant,
    temporal: { kind: 'includeInvalidated' as const },
    episode: null,
    subjectPredicate: null,
    q: null,
    states: null,
    windows,
    pageSize,
    entityNames: null,
  }));

// ---------------------------------------------------------------------------------------
// The reference model: the temporal rules (docs/TEMPORAL_MODEL.md), re-stated on millisecond numbers.

/** Transaction time: recorded by K and not invalidated by K. */
const believedAt = (f: RefFact, k: number) =>
  f.recordedAt <= k && (f.invalidAt === null || f.invalidAt > k);
/** Valid time: [validAt, validUntil) contains T. */
const trueAt = (f: RefFact, t: number) =>
  f.validAt <= t && (f.validUntil === null || f.validUntil > t);

/** The state table of docs/TEMPORAL_MODEL.md, checked in order. */
function refState(f: RefFact, t: number): FactState {
  if (f.invalidAt !== null && f.invalidAt <= t) return 'superseded';
  if (f.validAt > t) return 'future';
  if (f.validUntil !== null && f.validUntil <= t) return 'expired';
  return 'live';
}

/**
 * The temporal arguments as a predicate. `asOf` sets both axes and overrides
 * `includeInvalidated` (and an episode's "everything"); `validAt` / `knownAt` each set
 * one axis with the other at now (taken, like asOf, as an explicit point that also wins
 * over `includeInvalidated` and `episodeId`: the temporal model is silent there); otherwise
 * `includeInvalidated` or an episode alone select every fact; the default is live now,
 * the general rule at T = K = now.
 */
function refTemporal(temporal: Temporal, hasEpisode: boolean): (f: RefFact) => boolean {
  const now = NOW.getTime();
  const point = (t: number, k: number) => (f: RefFact) => trueAt(f, t) && believedAt(f, k);
  switch (temporal.kind) {
    case 'asOf':
      return point(temporal.at, temporal.at);
    case 'validAt':
      return point(temporal.at, now);
    case 'knownAt':
      return point(now, temporal.at);
    case 'both':
      return point(temporal.validAt, temporal.knownAt);
    case 'includeInvalidated':
      return () => true;
    case 'default':
      return hasEpisode ? () => true : point(now, now);
  }
}

/** Words of q: runs of Unicode letters (with their marks) and digits, NFC, lower case. */
const words = (text: string): string[] =>
  text
    .normalize('NFC')
    .toLowerCase()
    .split(/[^\p{L}\p{M}\p{N}]+/u)
    .filter((w) => w !== '');

/** Full text: the words minus English stop words, each stemmed (Porter, as recall). */
const STOP = new Set(eng);
const analyzed = (text: string) =>
  words(text)
    .filter((w) => !STOP.has(w))
    .map((w) => stemmer(w));

function refMatchesQ(f: RefFact, q: string): boolean {
  const have = new Set(analyzed(`${f.subject} ${f.predicate} ${f.object}`));
  return analyzed(q).every((w) => have.has(w));
}

const sameName = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/** validAt descending, then factId descending. */
const refOrder = (a: RefFact, b: RefFact) =>
  b.validAt - a.validAt || (a.factId < b.factId ? 1 : a.factId > b.factId ? -1 : 0);

/** recordedAt in (recordedAfter, recordedBy]; invalidAt set and in (invalidatedAfter, invalidatedBy]. */
function refInWindows(f: RefFact, w: Windows): boolean {
  const within = (ms: number | null, after: number | null, by: number | null) =>
    (after === null || (ms !== null && ms > after)) && (by === null || (ms !== null && ms <= by));
  return (
    within(f.recordedAt, w.recordedAfter, w.recordedBy) &&
    ((w.invalidatedAfter === null && w.invalidatedBy === null) ||
      (f.invalidAt !== null && within(f.invalidAt, w.invalidatedAfter, w.invalidatedBy)))
  );
}

function refList(facts: RefFact[], query: GenQuery): RefFact[] {
  const episodeId = query.episode ? uuidOf('episode', query.episode.n) : null;
  const temporal = refTemporal(query.temporal, episodeId !== null);
  return facts
    .filter((f) => f.tenant === query.tenant)
    .filter(temporal)
    .filter((f) => episodeId === null || f.episodeId === episodeId)
    .filter(
      (f) =>
        query.subjectPredicate === null ||
        (sameName(f.subject, query.subjectPredicate.subject) &&
          sameName(f.predicate, query.subjectPredicate.predicate)),
    )
    .filter((f) => query.q === null || refMatchesQ(f, query.q))
    .filter(
      (f) => query.states === null || query.states.states.includes(refState(f, query.states.at)),
    )
    .filter((f) => query.windows === null || refInWindows(f, query.windows))
    .sort(refOrder);
}

// ---------------------------------------------------------------------------------------
// The store side.

function temporalArgs(query: GenQuery): TemporalArgs {
  const t = query.temporal;
  const episodeId = query.episode ? episodeText(query.episode) : null;
  switch (t.kind) {
    case 'default':
      return { episodeId };
    case 'includeInvalidated':
      return { includeInvalidated: true, episodeId };
    case 'asOf':
      return { asOf: new Date(t.at), includeInvalidated: t.includeInvalidated, episodeId };
    case 'validAt':
      return { validAt: new Date(t.at), includeInvalidated: t.includeInvalidated, episodeId };
    case 'knownAt':
      return { knownAt: new Date(t.at), includeInvalidated: t.includeInvalidated, episodeId };
    case 'both':
      return { validAt: new Date(t.validAt), knownAt: new Date(t.knownAt), episodeId };
  }
}

function episodeText(e: { n: number; upper: boolean }): string {
  const id = uuidOf('episode', e.n);
  return e.upper ? id.toUpperCase() : id;
}

function storeQuery(query: GenQuery): FactQuery {
  return {
    selection: resolveTemporalSelection(temporalArgs(query), NOW),
    q: query.q,
    episodeId: query.episode ? episodeText(query.episode) : null,
    subjectPredicate: query.subjectPredicate,
    states: query.states?.states ?? null,
    statesAt: query.states ? new Date(query.states.at) : NOW,
    windows: query.windows && {
      recordedAfter: dateOrNull(query.windows.recordedAfter),
      recordedBy: dateOrNull(query.windows.recordedBy),
      invalidatedAfter: dateOrNull(query.windows.invalidatedAfter),
      invalidatedBy: dateOrNull(query.windows.invalidatedBy),
    },
  };
}

const dateOrNull = (ms: number | null) => (ms === null ? null : new Date(ms));

const keyOf = (d: FactView) => `${d.workspaceId}|${d.dataset}|${d.factId}`;

// ---------------------------------------------------------------------------------------

let database: Database;
let comparisons = 0;
let queriesRun = 0;
let storeCalls = 0;
let factsWritten = 0;
const mismatches: string[] = [];

let unpushed: Database;
let unpushedServer: RunningFerretDb;
let unpushedDir: string;
let pushdownChecks = 0;

beforeAll(async () => {
  database = await openTestDatabase();
  unpushedDir = mkdtempSync(join(tmpdir(), 'fact-queries-unpushed-'));
  unpushedServer = await startFerretDb(join(unpushedDir, 'db'), undefined, undefined, null);
  unpushed = await openDatabase(unpushedServer.uri, 'fact_queries');
}, 120_000);

afterAll(async () => {
  await unpushed?.close();
  await unpushedServer?.stop();
  rmSync(unpushedDir, { recursive: true, force: true });
});

/** The same store call on the test's database and the unpushed one: byte-identical answers. */
async function bothAnswer<T>(what: string, call: (db: Collections) => Promise<T>): Promise<T> {
  const [answer, plain] = await Promise.all([
    call(database.collections),
    call(unpushed.collections),
  ]);
  const text = (v: unknown) =>
    JSON.stringify(v instanceof Map ? [...v.entries()].sort(([a], [b]) => (a < b ? -1 : 1)) : v);
  comparisons++;
  if (text(answer) !== text(plain)) {
    mismatches.push(`${what}: pushed and unpushed differ\n  ${text(answer)}\n  ${text(plain)}`);
  }
  return answer;
}

/**
 * The fact list's query on the test's database is index-served: on the embedded FerretDB
 * its sort and limit run in SQL; on MongoDB (MONGODB_URI) its plan is an index scan.
 */
async function expectIndexServed(tenant: Tenant): Promise<void> {
  const command = {
    find: 'facts',
    filter: { workspaceId: tenant.workspaceId, dataset: tenant.dataset, validAt: { $lte: NOW } },
    sort: { validAt: -1, factId: -1 },
    limit: 5,
  };
  const plan = await database.db.command({ explain: command });
  if ('filterPushdown' in plan) {
    expect(plan).toMatchObject({ filterPushdown: true, sortPushdown: true, limitPushdown: true });
  } else {
    expect(JSON.stringify(plan.queryPlanner?.winningPlan)).toContain('IXSCAN');
  }
  pushdownChecks++;
}

async function clear(db: Collections): Promise<void> {
  await Promise.all([
    db.facts.deleteMany({}),
    db.episodes.deleteMany({}),
    db.factRecords.deleteMany({}),
    db.datasets.deleteMany({}),
    db.workspaces.deleteMany({}),
  ]);
}

/** The fact documents a file's fact lines state, as the import's parser builds them. */
function factDocsOf(content: string, workspace: string): FactDoc[] {
  const parsed = parseImportFile(content, { workspaceId: workspaceIdFor(workspace), now: NOW });
  if (!parsed.ok) throw new Error(`bad history: ${JSON.stringify(parsed.errors)}`);
  return parsed.records.flatMap((r) => (r.kind === 'fact' ? [r.doc] : []));
}

async function importHistory(history: GenFact[], names: [string, string]): Promise<RefFact[]> {
  const db = database.collections;
  await clear(unpushed.collections);
  const refs: RefFact[] = [];
  for (const ws of [0, 1]) {
    const lines: object[] = [];
    for (const g of history.filter((f) => f.tenant >> 1 === ws)) {
      const { line, ref } = materialise(g, names);
      lines.push(line);
      refs.push(ref);
    }
    // The episodes the facts came from, in both datasets.
    for (const dataset of DATASETS) {
      for (const n of [0, 1, 2]) {
        lines.push({
          type: 'episode',
          dataset,
          episodeId: uuidOf('episode', n),
          occurredAt: new Date(instantMs(n * 4)).toISOString(),
          source: 'chat',
          content: `episode ${n}`,
        });
      }
    }
    const content = lines.map((l) => JSON.stringify(l)).join('\n');
    // The reads are what is checked, on documents in every state the table names: the
    // facts are stored as the file states them (an import would derive their history from
    // records instead, docs/IMPORT_EXPORT.md), the episodes and datasets by the import.
    const facts = factDocsOf(content, names[ws]!);
    const episodes = lines.filter((l) => (l as { type: string }).type === 'episode');
    const episodeContent = episodes.map((l) => JSON.stringify(l)).join('\n');
    for (const target of [db, unpushed.collections]) {
      const outcome = await importJsonl(target, {
        workspace: names[ws]!,
        content: episodeContent,
        now: NOW,
      });
      if (!outcome.ok) throw new Error(`import failed: ${JSON.stringify(outcome.errors)}`);
      if (facts.length > 0) await target.facts.insertMany(facts.map((f) => ({ ...f })));
    }
    expect(facts.length).toBe(lines.length - DATASETS.length * 3);
  }
  factsWritten += refs.length;

  // The import stored exactly the facts and instants the reference model assumes.
  const times = (ms: (number | null)[]) =>
    ms.map((t) => (t === null ? '-' : new Date(t).toISOString()));
  const stored = await db.facts.find({ workspaceId: { $in: names.map(workspaceIdFor) } }).toArray();
  const storedTimes = stored.map((d) =>
    [
      keyOf(d),
      ...times([
        d.validAt.getTime(),
        d.validUntil?.getTime() ?? null,
        d.recordedAt.getTime(),
        d.invalidAt?.getTime() ?? null,
      ]),
    ].join(' '),
  );
  const refTimes = refs.map((f) =>
    [f.key, ...times([f.validAt, f.validUntil, f.recordedAt, f.invalidAt])].join(' '),
  );
  comparisons++;
  expect(storedTimes.sort()).toEqual(refTimes.sort());
  return refs;
}

function describeQuery(query: GenQuery): string {
  const iso = (ms: number) => new Date(ms).toISOString();
  return JSON.stringify(query, (k, v) =>
    typeof v === 'number' &&
    [
      'at',
      'validAt',
      'knownAt',
      'recordedAfter',
      'recordedBy',
      'invalidatedAfter',
      'invalidatedBy',
    ].includes(k)
      ? iso(v)
      : v,
  );
}

function compare(what: string, query: GenQuery, expected: string[], actual: string[]): boolean {
  comparisons++;
  if (expected.length === actual.length && expected.every((k, i) => k === actual[i])) return true;
  mismatches.push(
    `${what} of ${describeQuery(query)}\n  expected ${JSON.stringify(expected)}\n  actual   ${JSON.stringify(actual)}`,
  );
  return false;
}

async function checkQuery(
  refs: RefFact[],
  query: GenQuery,
  names: [string, string],
): Promise<boolean> {
  const tenant = tenantOf(names, query.tenant);
  const fq = storeQuery(query);
  const expected = refList(refs, query).map((f) => f.key);
  let ok = true;

  // Every page, in order, each fact once.
  const walked: string[] = [];
  let after: FactCursor | null = null;
  for (let page = 0; page <= expected.length + 1; page++) {
    storeCalls++;
    const result = await bothAnswer(`listFacts page ${page}`, (db) =>
      listFacts(db, tenant, fq, { first: query.pageSize, after }),
    );
    const keys = result.facts.map(keyOf);
    const from = walked.length;
    ok =
      compare(
        `page ${page} (first ${query.pageSize})`,
        query,
        expected.slice(from, from + query.pageSize),
        keys,
      ) && ok;
    comparisons++;
    if (result.hasNextPage !== from + keys.length < expected.length) {
      mismatches.push(`hasNextPage on page ${page} of ${describeQuery(query)}`);
      ok = false;
    }
    walked.push(...keys);
    if (!result.hasNextPage || result.facts.length === 0) break;
    const last = result.facts[result.facts.length - 1]!;
    after = { validAt: last.validAt, factId: last.factId };
  }
  ok = compare('walk of every page', query, expected, walked) && ok;

  storeCalls++;
  const total = await bothAnswer('countFacts', (db) => countFacts(db, tenant, fq));
  comparisons++;
  if (total !== expected.length) {
    mismatches.push(
      `countFacts of ${describeQuery(query)}: expected ${expected.length}, got ${total}`,
    );
    ok = false;
  }

  // factsOfEntities with the same temporal selection, without the other filters, at most
  // `pageSize` per name: small sizes make one name's facts crowd out another's in the
  // shared query, which the store must read again alone.
  if (query.entityNames !== null) {
    storeCalls++;
    const names = query.entityNames;
    const byName = await bothAnswer('factsOfEntities', (db) =>
      factsOfEntities(db, tenant, names, fq.selection, query.pageSize),
    );
    const temporal = refTemporal(query.temporal, query.episode !== null);
    const keys = [...new Set(query.entityNames.map((n) => n.toLowerCase()))].sort();
    ok = compare('factsOfEntities names', query, keys, [...byName.keys()].sort()) && ok;
    for (const name of keys) {
      const expectedFacts = refs
        .filter((f) => f.tenant === query.tenant && temporal(f))
        .filter((f) => sameName(f.subject, name) || sameName(f.object, name))
        .sort(refOrder)
        .map((f) => f.key)
        .slice(0, query.pageSize);
      const actual = (byName.get(name) ?? []).map(keyOf);
      ok = compare(`factsOfEntities("${name}")`, query, expectedFacts, actual) && ok;
    }
  }
  queriesRun++;
  return ok;
}

it.each([
  ['every argument', genQuery, HISTORIES],
  ['the transaction-time windows alone', genWindowsQuery, Math.ceil(HISTORIES / 4)],
])(
  'listFacts, countFacts and factsOfEntities agree with the reference model on random histories: %s',
  async (what, genQueries, histories) => {
    // Each run counts its own.
    comparisons = 0;
    queriesRun = 0;
    storeCalls = 0;
    factsWritten = 0;
    mismatches.length = 0;
    const started = Date.now();
    try {
      await fc.assert(
        fc.asyncProperty(
          genHistory,
          fc.array(genQueries, { minLength: QUERIES_PER_HISTORY, maxLength: QUERIES_PER_HISTORY }),
          async (history, queries) => {
            const names = workspaceNames(caseNumber++);
            await clear(database.collections);
            const refs = await importHistory(history, names);
            await expectIndexServed(tenantOf(names, 0));
            const results = await Promise.all(queries.map((q) => checkQuery(refs, q, names)));
            return results.every(Boolean);
          },
        ),
        { numRuns: histories, endOnFailure: true, seed: propertySeed(`fact queries (${what})`) },
      );
    } finally {
      console.log(
        `factQueries property: ${histories} histories, ${factsWritten} facts, ${queriesRun} queries, ` +
          `${storeCalls} store calls, ` +
          `${comparisons} comparisons, ${mismatches.length} mismatches, ${Date.now() - started} ms`,
      );
      for (const m of mismatches.slice(0, 10)) console.log(m);
    }
    expect(mismatches.slice(0, 10)).toEqual([]);
    // A run that compared nothing (FACT_PROPERTY_HISTORIES=0, a generator gone empty) fails.
    expect(comparisons).toBeGreaterThan(0);
    expect(pushdownChecks).toBeGreaterThan(0);
  },
  180_000,
);
