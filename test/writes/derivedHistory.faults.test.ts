import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prng } from '../../bench/generate.js';
import { type Collections, collections } from '../../src/store/collections.js';
import { eraseEpisode } from '../../src/store/erasure.js';
import { deleteFact, restoreFact } from '../../src/store/factLifecycle.js';
import { FactNotFoundError, listFacts } from '../../src/store/facts.js';
import { repairFactHistories } from '../../src/store/materialise.js';
import {
  type EpisodeInput,
  episodeFactId,
  recordEpisode,
  repairEpisodeRecords,
} from '../../src/store/recordEpisode.js';
import type { Tenant } from '../../src/store/tenant.js';
import { openTestDatabase, testServerUri } from '../helpers/database.js';
import { episodeInput, factInput, testTenant } from '../helpers/episodeInput.js';

/**
 * The history is derived from the records (docs/TEMPORAL_MODEL.md), so a write that fails
 * half-way, or two writers at once, must end where a clean run in arrival order ends:
 *
 * - a fault at any database command of a write leaves no view showing a fact twice, and
 *   the write's retry (or the start-up repair, then the client's retry) leaves every view
 *   as the write without the fault does, and after the writes that follow, every view and
 *   the served feed are the clean run's;
 * - episodes of one subject and predicate recorded at once, over several connections or
 *   from two processes, each at its own instant, answer every view as the same episodes
 *   recorded one by one in the order of their instants.
 *
 * Views are compared by what they show: each document named by the fact it is a version
 * of (fact ids are derived from the dataset, so two datasets' ids differ), with its times.
 */

const ROOT = new URL('../../', import.meta.url);

let databaseName: string;
let db: Collections;
let datasets = 0;

beforeAll(async () => {
  const database = await openTestDatabase();
  db = database.collections;
  databaseName = database.db.databaseName;
});

/** A dataset of its own for each run. */
const freshTenant = (what: string): Tenant =>
  testTenant('derived history faults', `${what}-${datasets++}`);

/** The writes' clock: the n-th write of a sequence (from 0), a minute apart, in 2027. */
const WRITES_FROM = Date.UTC(2027, 0, 1);
const MINUTE = 60_000;
const instant = (n: number) => new Date(WRITES_FROM + (n + 1) * MINUTE);

const day = (date: string) => new Date(`${date}T00:00:00.000Z`);

/** One fact, "user <predicate> <object>", replacing, in an episode of its own. */
const replacing = (episodeId: string, predicate: string, object: string, validAt: Date) =>
  episodeInput([factInput('user', predicate, object, { validAt, replaceExisting: true })], {
    episodeId,
  });

// ---------------------------------------------------------------------------------------
// What a view and the feed show, named so that two datasets compare.

/** Ids of a dataset (its facts', its episodes') to what they are. */
type Names = Map<string, string>;

function namesOf(tenant: Tenant, episodes: Record<string, EpisodeInput>): Names {
  const names: Names = new Map();
  for (const [name, input] of Object.entries(episodes)) {
    names.set(episodeFactId(tenant, input.episodeId, 0), name);
    names.set(input.episodeId, `${name}'s episode`);
  }
  return names;
}

const nameOf = (names: Names, id: string | null | undefined) =>
  id == null ? null : (names.get(id) ?? `an unknown id ${id}`);

/** An instant as a reader of a failure wants it: a write by its number, a day by its date. */
function when(d: Date | null | undefined): string {
  if (!d) return 'open';
  const n = (d.getTime() - WRITES_FROM) / MINUTE;
  if (Number.isInteger(n) && n >= 1 && n <= 100) return `write ${n}`;
  const text = d.toISOString();
  return text.endsWith('T00:00:00.000Z') ? text.slice(0, 10) : text;
}

const viewKey = (validAt: Date, knownAt: Date) =>
  `true on ${when(validAt)}, known at ${when(knownAt)}`;

/**
 * What `facts(validAt, knownAt)` shows: each document as the fact it is (a version of),
 * its valid time and the time it is believed; sorted, repeats kept.
 */
async function view(
  db: Collections,
  tenant: Tenant,
  names: Names,
  validAt: Date,
  knownAt: Date,
): Promise<string[]> {
  const page = await listFacts(
    db,
    tenant,
    { selection: { kind: 'point', validAt, knownAt } },
    { first: 500 },
  );
  expect(page.hasNextPage).toBe(false);
  return page.facts
    .map((f) => {
      const ended = f.invalidAt
        ? ` (${f.invalidReason}${f.supersededBy ? ` by ${nameOf(names, f.supersededBy)}` : ''})`
        : '';
      return [
        `${nameOf(names, f.correctionOf ?? f.factId)}${f.correctionOf ? ' (a version)' : ''}:`,
        `valid ${when(f.validAt)}..${when(f.validUntil)}`,
        f.correctedBy ? `(ended by ${nameOf(names, f.correctedBy)})` : '',
        `believed ${when(f.recordedAt)}..${when(f.invalidAt)}${ended}`,
        `"${f.object}"`,
      ]
        .filter(Boolean)
        .join(' ');
    })
    .sort();
}

/** Every view of `validAts` x `knownAts`. */
async function views(
  db: Collections,
  tenant: Tenant,
  names: Names,
  validAts: readonly Date[],
  knownAts: readonly Date[],
): Promise<Record<string, string[]>> {
  const keys = knownAts.flatMap((knownAt) => validAts.map((validAt) => ({ validAt, knownAt })));
  const shown = await Promise.all(
    keys.map(({ validAt, knownAt }) => view(db, tenant, names, validAt, knownAt)),
  );
  return Object.fromEntries(
    keys.map(({ validAt, knownAt }, n) => [viewKey(validAt, knownAt), shown[n]!]),
  );
}

/** The fact a shown document is (of). */
const factOfShown = (shown: string) => shown.split(':')[0]!.replace(' (a version)', '');

/** The views in which some fact shows twice (two documents of one fact): none may. */
function twice(shown: Record<string, string[]>): string[] {
  const out: string[] = [];
  for (const [where, facts] of Object.entries(shown)) {
    const seen = new Set<string>();
    for (const f of facts) {
      const fact = factOfShown(f);
      if (seen.has(fact)) out.push(`${where}, ${fact} shows twice: ${facts.join('; ')}`);
      seen.add(fact);
    }
  }
  return out;
}

/** The views that differ: how many, and the one known latest, both ways (null: none). */
function viewsDiffer(got: Record<string, string[]>, want: Record<string, string[]>): string | null {
  const differ = Object.keys(want).filter(
    (key) => JSON.stringify(got[key]) !== JSON.stringify(want[key]),
  );
  const key = differ.at(-1);
  if (key === undefined) return null;
  const list = (facts: string[] | undefined) => (facts?.length ? facts.join('; ') : 'nothing');
  return `${differ.length} of ${Object.keys(want).length} views differ; ${key} shows\n      ${list(got[key])}\n    not\n      ${list(want[key])}`;
}

/** How a served feed differs from the clean run's (null: it does not). */
function feedDiffers(got: string[], want: string[]): string | null {
  if (JSON.stringify(got) === JSON.stringify(want)) return null;
  const without = (from: string[], taken: string[]) => {
    const left = [...from];
    for (const t of taken) {
      const n = left.indexOf(t);
      if (n >= 0) left.splice(n, 1);
    }
    return left;
  };
  const extra = without(got, want);
  const missing = without(want, got);
  if (extra.length === 0 && missing.length === 0) {
    const from = got.findIndex((c, n) => c !== want[n]);
    return `the feed serves the clean run's changes in another order, from change ${from + 1}:\n      ${got.slice(from).join('\n      ')}\n    not\n      ${want.slice(from).join('\n      ')}`;
  }
  return [
    extra.length > 0
      ? `the feed serves changes the clean run's does not:\n      ${extra.join('\n      ')}`
      : '',
    missing.length > 0
      ? `the feed lacks changes the clean run's serves:\n      ${missing.join('\n      ')}`
      : '',
  ]
    .filter(Boolean)
    .join('\n    ');
}

/** The feed as served (redacted changes are not), in order: its kind and what it is about. */
async function feed(db: Collections, tenant: Tenant, names: Names): Promise<string[]> {
  // A version's id is derived from the dataset too: named by what its document says.
  const local: Names = new Map(names);
  for (const v of await db.facts.find({ ...tenant, correctionOf: { $ne: null } }).toArray()) {
    local.set(
      v.factId,
      `${nameOf(names, v.correctionOf)}'s version believed from ${when(v.recordedAt)}, valid until ${when(v.validUntil)}`,
    );
  }
  const changes = await db.changes
    .find({ ...tenant, redacted: false })
    .sort({ seq: 1 })
    .toArray();
  const about = (id: string | null) =>
    id === null ? null : (local.get(id) ?? `a fact the store does not hold (${id})`);
  return changes.map((c) =>
    [c.kind, about(c.factId), c.episodeId ? `of ${about(c.episodeId)}` : '', `at ${when(c.at)}`]
      .filter(Boolean)
      .join(' '),
  );
}

// ---------------------------------------------------------------------------------------
// Faults: the k-th database command of a call fails.

/** The collection methods that send a command (a cursor's, when it is read). */
const COMMANDS = new Set([
  'insertOne',
  'insertMany',
  'updateOne',
  'updateMany',
  'replaceOne',
  'bulkWrite',
  'deleteOne',
  'deleteMany',
  'find',
  'findOne',
  'findOneAndUpdate',
  'findOneAndReplace',
  'findOneAndDelete',
  'countDocuments',
  'estimatedDocumentCount',
  'distinct',
  'aggregate',
]);
/** Commands that only read: a fault after one is the same as one before it. */
const READS = new Set([
  'find',
  'findOne',
  'countDocuments',
  'estimatedDocumentCount',
  'distinct',
  'aggregate',
]);
const CURSORS = new Set(['find', 'aggregate']);
/** What reading a cursor does: where a cursor's command fails. */
const CURSOR_READS = new Set(['toArray', 'next', 'tryNext', 'hasNext', 'forEach']);

/**
 * Where the fault is: the `at`-th command fails, `before` it reaches the database (nothing
 * written), or `after` it ran (written, the answer lost, as a lost connection leaves it).
 */
interface Fault {
  at: number;
  when: 'before' | 'after';
}

class InjectedFault extends Error {
  override name = 'InjectedFault';
}

/** A cursor whose first read fails (after running it, for `after`). */
function failingCursor<C extends object>(cursor: C, fault: Fault, what: string): C {
  const fail = async (read?: () => Promise<unknown>) => {
    if (fault.when === 'after' && read) await read().catch(() => {});
    throw new InjectedFault(`injected fault: ${what}`);
  };
  const proxy: C = new Proxy(cursor, {
    get(target, prop, receiver) {
      if (prop === Symbol.asyncIterator) {
        return () => ({
          next: () => fail(),
          return: async () => ({ done: true, value: undefined }),
        });
      }
      const value = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function') return value;
      if (typeof prop === 'string' && CURSOR_READS.has(prop)) {
        return () =>
          fail(() => (target as unknown as { toArray: () => Promise<unknown> }).toArray());
      }
      // Building the cursor (sort, batchSize, projection...) goes on with the failing one.
      return (...args: unknown[]) => {
        const out = value.apply(target, args);
        return out === target ? proxy : out;
      };
    },
  });
  return proxy;
}

/** `real` whose `fault.at`-th command fails; `sent` lists the commands sent through it. */
function withFault(real: Collections, fault: Fault | null) {
  const sent: string[] = [];
  const wrapped = Object.fromEntries(
    Object.entries(real).map(([name, collection]) => [
      name,
      new Proxy(collection as object, {
        get(target, prop, receiver) {
          const value = Reflect.get(target, prop, receiver);
          if (typeof prop !== 'string' || !COMMANDS.has(prop) || typeof value !== 'function') {
            return value;
          }
          return (...args: unknown[]) => {
            sent.push(`${name}.${prop}`);
            if (!fault || sent.length !== fault.at) return value.apply(target, args);
            const what = `command ${fault.at}, ${name}.${prop}, ${fault.when}`;
            if (CURSORS.has(prop)) return failingCursor(value.apply(target, args), fault, what);
            return (async () => {
              if (fault.when === 'after') await value.apply(target, args).catch(() => {});
              throw new InjectedFault(`injected fault: ${what}`);
            })();
          };
        },
      }),
    ]),
  ) as unknown as Collections;
  return { db: wrapped, sent };
}

// ---------------------------------------------------------------------------------------
// 1. The running example, and a fault at every command of each of its writes.

const EPISODES = {
  Honda: replacing('0b6c1a10-1f6e-4c3a-9d0e-1a2b3c4d5e01', 'drives', 'Honda', day('2026-07-01')),
  Toyota: replacing('0b6c1a10-1f6e-4c3a-9d0e-1a2b3c4d5e02', 'drives', 'Toyota', day('2026-08-16')),
  // Learned late: in between the two, from July 20th.
  Fiat: replacing('0b6c1a10-1f6e-4c3a-9d0e-1a2b3c4d5e03', 'drives', 'Fiat', day('2026-07-20')),
};

interface Op {
  name: string;
  /** The write as the client first makes it. */
  run: (db: Collections, tenant: Tenant, now: Date) => Promise<unknown>;
  /** The client's retry of it, at the same instant (a refusal because the first won is an answer). */
  retry: (db: Collections, tenant: Tenant, now: Date) => Promise<unknown>;
  /** Whether the write's claim is stored, so that the start-up repair alone finishes it. */
  claimed: (db: Collections, tenant: Tenant) => Promise<boolean>;
}

const honda = (tenant: Tenant) => episodeFactId(tenant, EPISODES.Honda.episodeId, 0);

/** A delete or restore refused: the first attempt's claim may have won. */
const refusalIsAnAnswer = (error: unknown) => {
  if (!(error instanceof FactNotFoundError)) throw error;
  return error.reason;
};

const recordOp = (name: keyof typeof EPISODES): Op => ({
  name: `record the ${name}`,
  run: (db, tenant, now) => recordEpisode(db, tenant, EPISODES[name], now),
  retry: (db, tenant, now) => recordEpisode(db, tenant, EPISODES[name], now),
  claimed: async (db, tenant) =>
    (await db.episodeRecords.countDocuments({ ...tenant, episodeId: EPISODES[name].episodeId })) >
    0,
});

const lifecycleOp = (kind: 'deleted' | 'restored'): Op => {
  const write = kind === 'deleted' ? deleteFact : restoreFact;
  return {
    name: kind === 'deleted' ? 'delete the Honda' : 'restore the Honda',
    run: (db, tenant, now) => write(db, tenant, honda(tenant), now),
    retry: (db, tenant, now) => write(db, tenant, honda(tenant), now).catch(refusalIsAnAnswer),
    claimed: async (db, tenant) =>
      (await db.factRecords.countDocuments({ ...tenant, factId: honda(tenant), kind })) > 0,
  };
};

const erase = (db: Collections, tenant: Tenant, now: Date) =>
  eraseEpisode(db, tenant, EPISODES.Toyota.episodeId, { keyId: 'test' }, now);

const OPS: Op[] = [
  recordOp('Honda'),
  recordOp('Toyota'),
  recordOp('Fiat'),
  lifecycleOp('deleted'),
  lifecycleOp('restored'),
  // An erasure keeps no claim: its repeat finishes it.
  { name: "erase the Toyota's episode", run: erase, retry: erase, claimed: async () => false },
];

/** Valid instants: before every value, in each value's time, and after. */
const VALID_ATS = ['2026-06-15', '2026-07-10', '2026-07-25', '2026-08-20', '2027-06-01'].map(day);
/** Each write's instant, and one after them all. */
const KNOWN_ATS = OPS.map((_, n) => instant(n)).concat(instant(OPS.length));

interface Reference {
  /** The views after each write. */
  after: Record<string, string[]>[];
  feed: string[];
}

async function cleanRun(): Promise<Reference> {
  const tenant = freshTenant('clean');
  const names = namesOf(tenant, EPISODES);
  const after: Record<string, string[]>[] = [];
  for (const [n, op] of OPS.entries()) {
    await op.run(db, tenant, instant(n));
    after.push(await views(db, tenant, names, VALID_ATS, KNOWN_ATS));
  }
  return { after, feed: await feed(db, tenant, names) };
}

/** The commands write i sends without a fault, after the writes before it. */
async function commandsOf(i: number): Promise<string[]> {
  const tenant = freshTenant(`commands-${i}`);
  for (let n = 0; n < i; n++) await OPS[n]!.run(db, tenant, instant(n));
  const counted = withFault(db, null);
  await OPS[i]!.run(counted.db, tenant, instant(i));
  return counted.sent;
}

/**
 * One fault, in a dataset of its own: the writes before write i, then write i with the
 * fault; what readers see; the retry (odd k: after the start-up repair); the writes
 * after; what readers and the feed see. Answers what differed from the clean run.
 */
async function faultCase(
  db: Collections,
  i: number,
  fault: Fault,
  reference: Reference,
): Promise<string[]> {
  const op = OPS[i]!;
  const tenant = freshTenant(`fault-${i}-${fault.when}-${fault.at}`);
  const names = namesOf(tenant, EPISODES);
  const seen = () => views(db, tenant, names, VALID_ATS, KNOWN_ATS);
  const problems: string[] = [];
  const compare = (
    moment: string,
    got: Record<string, string[]>,
    want: Record<string, string[]>,
  ) => {
    const differs = viewsDiffer(got, want);
    if (differs) problems.push(`${moment}, ${differs}`);
  };
  for (let n = 0; n < i; n++) await OPS[n]!.run(db, tenant, instant(n));

  const now = instant(i);
  const faulty = withFault(db, fault);
  const outcome = await op.run(faulty.db, tenant, now).then(
    () => 'done',
    (error: unknown) => error,
  );
  if (outcome !== 'done' && !(outcome instanceof InjectedFault)) {
    problems.push(`the write failed with ${String(outcome)}, not with the fault`);
  }
  if (faulty.sent.length < fault.at) {
    problems.push(`the write sent ${faulty.sent.length} commands, fewer than without the fault`);
  }

  // (a) No read shows two values, whatever the fault left.
  problems.push(...twice(await seen()));

  // (b) The client retries at once, or the process restarts first (the start-up repair,
  // then the client's retry). Either way the write is then done as the clean run did it.
  const viaRepair = fault.at % 2 === 1;
  if (viaRepair) {
    await repairFactHistories(db);
    await repairEpisodeRecords(db, now);
    if (await op.claimed(db, tenant)) {
      compare('after the start-up repair', await seen(), reference.after[i]!);
    }
  }
  await op.retry(db, tenant, now);
  compare('after the retry', await seen(), reference.after[i]!);

  for (let n = i + 1; n < OPS.length; n++) await OPS[n]!.run(db, tenant, instant(n));
  if (i + 1 < OPS.length) {
    compare('after the writes that follow', await seen(), reference.after.at(-1)!);
  }
  const differs = feedDiffers(await feed(db, tenant, names), reference.feed);
  if (differs) problems.push(differs);
  const how = viaRepair ? 'the start-up repair and the retry' : 'the retry';
  return problems.map(
    (p) =>
      `${op.name} at write ${i + 1}, fault ${fault.when} command ${fault.at} (${faulty.sent[fault.at - 1]}), then ${how}: ${p}`,
  );
}

/**
 * Which commands of write i get a fault: every command of a delete, a restore and the
 * erasure; every third of a recording, starting at a different one for each of the three
 * (they send the same commands), so that together they cover every command of a
 * recording. FAULT_EVERY=1 tries every command of every write.
 */
function sampled(i: number, commands: number): number[] {
  const recordings = OPS.slice(0, i + 1).filter((op) => op.name.startsWith('record'));
  const recording = OPS[i]!.name.startsWith('record');
  const every = Number(process.env.FAULT_EVERY ?? (recording ? 3 : 1));
  const offset = recording ? recordings.length % every : 0;
  return Array.from({ length: commands }, (_, n) => n + 1).filter((k) => k % every === offset);
}

describe('a write cut short at any database command', () => {
  let reference: Reference;

  beforeAll(async () => {
    reference = await cleanRun();
  }, 120_000);

  it('the clean run tells the example', () => {
    const last = reference.after.at(-1)!;
    const shown = (validAt: string) =>
      last[viewKey(day(validAt), instant(OPS.length))]!.map(factOfShown);
    // The Toyota erased: the Honda (restored) until the Fiat begins, then the Fiat.
    expect(shown('2026-06-15')).toEqual([]);
    expect(shown('2026-07-10')).toEqual(['Honda']);
    expect(shown('2026-07-25')).toEqual(['Fiat']);
    expect(shown('2026-08-20')).toEqual(['Fiat']);
    expect(reference.feed).toContain("FACT_DELETED Honda of Honda's episode at write 4");
    expect(reference.feed).toContain("FACT_RESTORED Honda of Honda's episode at write 5");
    expect(reference.feed.filter((c) => c.includes('Toyota'))).toEqual([]);
  });

  for (const [i, op] of OPS.entries()) {
    it(`${op.name}: a fault before a command or after a write, then the retry or the start-up repair`, {
      timeout: 300_000,
    }, async () => {
      const commands = await commandsOf(i);
      const problems: string[] = [];
      for (const k of sampled(i, commands.length)) {
        problems.push(...(await faultCase(db, i, { at: k, when: 'before' }, reference)));
        // A read's answer lost is the same as the read failing.
        if (!READS.has(commands[k - 1]!.split('.')[1]!)) {
          problems.push(...(await faultCase(db, i, { at: k, when: 'after' }, reference)));
        }
      }
      expect(problems.length, `${problems.length} problems:\n\n${problems.join('\n\n')}`).toBe(0);
    });
  }
});

// ---------------------------------------------------------------------------------------
// 2 and 3. Writers at once.

/** Replacing values of one pair, each in an episode of its own: city0 from January 1st, city1 from the 6th, city2 from the 11th... */
function cityEpisodes(count: number): Record<string, EpisodeInput> {
  return Object.fromEntries(
    Array.from({ length: count }, (_, i) => [
      `city${i}`,
      replacing(randomUUID(), 'lives in', `city${i}`, new Date(Date.UTC(2026, 0, 1 + 5 * i))),
    ]),
  );
}

/** Distinct instants a few milliseconds apart, in an order of their own (seeded). */
function shuffledInstants(count: number, base: number, seed: number): Date[] {
  const random = prng(seed);
  const order = Array.from({ length: count }, (_, i) => i).sort(() => random() - 0.5);
  return order.map((slot) => new Date(base + 3 * slot));
}

/** Views on each start, between two, before and after; known at each instant, just before, and after. */
function cityInstants(starts: Date[], instants: Date[]) {
  const DAY = 86_400_000;
  const validAts = [
    new Date(starts[0]!.getTime() - DAY),
    ...starts.flatMap((s) => [s, new Date(s.getTime() + 2 * DAY)]),
  ];
  const sorted = [...instants].sort((a, b) => a.getTime() - b.getTime());
  const knownAts = [
    ...sorted.flatMap((t) => [new Date(t.getTime() - 1), t]),
    new Date(sorted.at(-1)!.getTime() + MINUTE),
  ];
  return { validAts, knownAts };
}

/** The same episodes recorded one by one, in the order of their instants, in another dataset. */
async function oneByOne(episodes: EpisodeInput[], instants: Date[]) {
  const tenant = freshTenant('one-by-one');
  const order = episodes
    .map((_, i) => i)
    .sort((a, b) => instants[a]!.getTime() - instants[b]!.getTime());
  for (const i of order) await recordEpisode(db, tenant, episodes[i]!, instants[i]!);
  return tenant;
}

/** What readers see of `raced` differs from what they see of `sequential`: the first view, or null. */
async function racedAgainstOneByOne(
  raced: Tenant,
  sequential: Tenant,
  episodes: Record<string, EpisodeInput>,
  instants: Date[],
): Promise<string | null> {
  const { validAts, knownAts } = cityInstants(
    Object.values(episodes).map((e) => e.facts[0]!.validAt),
    instants,
  );
  const got = await views(db, raced, namesOf(raced, episodes), validAts, knownAts);
  const want = await views(db, sequential, namesOf(sequential, episodes), validAts, knownAts);
  const never = twice(got);
  if (never.length > 0) return never.join('\n');
  return viewsDiffer(got, want);
}

describe('episodes of one pair recorded at once over separate connections', () => {
  let clients: MongoClient[];

  beforeAll(async () => {
    clients = await Promise.all(
      Array.from({ length: 5 }, () => new MongoClient(testServerUri()).connect()),
    );
  });

  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close()));
  });

  it('every view is what the five recorded one by one in the order of their instants give (5 rounds)', {
    timeout: 120_000,
  }, async () => {
    const problems: string[] = [];
    for (let round = 0; round < 5; round++) {
      const episodes = cityEpisodes(5);
      const inputs = Object.values(episodes);
      const instants = shuffledInstants(inputs.length, WRITES_FROM + round * MINUTE, round + 1);
      const raced = freshTenant('raced');
      // Each over its own connection pool, as replicas of the gateway share one database.
      await Promise.all(
        inputs.map((input, i) =>
          recordEpisode(collections(clients[i]!.db(databaseName)), raced, input, instants[i]!),
        ),
      );
      const sequential = await oneByOne(inputs, instants);
      const differs = await racedAgainstOneByOne(raced, sequential, episodes, instants);
      if (differs) {
        problems.push(
          `round ${round}, city0..city4 recorded at ${instants.map((t) => `+${t.getTime() - WRITES_FROM - round * MINUTE} ms`).join(', ')}: ${differs}`,
        );
      }
    }
    expect(problems.length, problems.join('\n\n')).toBe(0);
  });
});

/**
 * A second Node process recording episodes through the store, as another replica would: it
 * reads jobs (a tenant, episodes and their instants) on stdin, one JSON line each, records
 * each job's episodes at once, and answers a line with the errors, if any.
 */
const RECORDER = `
const { MongoClient } = await import('mongodb');
const { collections } = await import(new URL('src/store/collections.ts', process.env.ROOT_URL).href);
const { recordEpisode } = await import(new URL('src/store/recordEpisode.ts', process.env.ROOT_URL).href);
const { createInterface } = await import('node:readline');
const client = await new MongoClient(process.env.MONGODB_URI).connect();
const db = collections(client.db(process.env.MONGODB_DB));
const revive = (e) => ({
  ...e,
  occurredAt: new Date(e.occurredAt),
  facts: e.facts.map((f) => ({
    ...f,
    validAt: new Date(f.validAt),
    validUntil: f.validUntil === null ? null : new Date(f.validUntil),
  })),
});
console.log('ready');
for await (const line of createInterface({ input: process.stdin })) {
  const job = JSON.parse(line);
  const settled = await Promise.allSettled(
    job.episodes.map((e) => recordEpisode(db, job.tenant, revive(e.input), new Date(e.at))),
  );
  const errors = settled.filter((s) => s.status === 'rejected').map((s) => String(s.reason?.stack ?? s.reason));
  console.log(JSON.stringify({ errors }));
}
await client.close();
`;

describe('episodes of one pair recorded at once by two processes', () => {
  let child: ChildProcessWithoutNullStreams;
  let lines: AsyncIterator<string>;
  let output = '';

  beforeAll(async () => {
    child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', RECORDER], {
      cwd: ROOT,
      env: {
        ...process.env,
        ROOT_URL: ROOT.href,
        MONGODB_URI: testServerUri(),
        MONGODB_DB: databaseName,
      },
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
    const first = await lines.next();
    expect(first.value, `the second process started: ${output}`).toBe('ready');
  }, 60_000);

  afterAll(() => {
    child?.kill();
  });

  it('every view is what the episodes recorded one by one in the order of their instants give (4 rounds)', {
    timeout: 120_000,
  }, async () => {
    const problems: string[] = [];
    for (let round = 0; round < 4; round++) {
      // Six values; this process records the even ones, the other process the odd ones.
      const episodes = cityEpisodes(6);
      const inputs = Object.values(episodes);
      const base = WRITES_FROM + (10 + round) * MINUTE;
      const instants = shuffledInstants(inputs.length, base, 100 + round);
      const raced = freshTenant('two-processes');
      const theirs = inputs.flatMap((input, i) =>
        i % 2 === 1 ? [{ input, at: instants[i]! }] : [],
      );
      child.stdin.write(`${JSON.stringify({ tenant: raced, episodes: theirs })}\n`);
      const [, answer] = await Promise.all([
        Promise.all(
          inputs.flatMap((input, i) =>
            i % 2 === 0 ? [recordEpisode(db, raced, input, instants[i]!)] : [],
          ),
        ),
        lines.next(),
      ]);
      expect(JSON.parse(answer.value as string), output).toEqual({ errors: [] });
      const sequential = await oneByOne(inputs, instants);
      const differs = await racedAgainstOneByOne(raced, sequential, episodes, instants);
      if (differs) {
        problems.push(
          `round ${round}, city0..city5 recorded at ${instants.map((t) => `+${t.getTime() - base} ms`).join(', ')} (odd ones by the other process): ${differs}`,
        );
      }
    }
    expect(problems.length, problems.join('\n\n')).toBe(0);
  });
});
