import { randomUUID } from 'node:crypto';
import {
  type BulkWriteResult,
  type CommandStartedEvent,
  MongoBulkWriteError,
  type WriteError,
} from 'mongodb';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { prng } from '../../bench/generate.js';
import { normalizeUuid } from '../../src/domain/ids.js';
import type { Collections } from '../../src/store/collections.js';
import type { Database } from '../../src/store/database.js';
import {
  type FactDoc,
  factDocumentId,
  type InvalidationClaimDoc,
  invalidationClaimId,
} from '../../src/store/documents.js';
import { FactNotFoundError, invalidateFact, restoreFact } from '../../src/store/facts.js';
import {
  type EpisodeInput,
  episodeFactId,
  type FactInput,
  type RecordedEpisode,
  recordEpisode,
} from '../../src/store/recordEpisode.js';
import type { Tenant } from '../../src/store/tenant.js';
import { everyDocument, openTestDatabase } from '../helpers/database.js';
import { episodeInput, factInput, testTenant } from '../helpers/episodeInput.js';

/** A target another fact already took is refused, and that is all. */
async function refusedOrDone(write: Promise<unknown>): Promise<void> {
  try {
    await write;
  } catch (error) {
    if (!(error instanceof FactNotFoundError)) throw error;
  }
}

/**
 * Supersession when recording an episode (`supersedes` and `replaceExisting`): the same
 * few database commands whatever the number of facts and targets, the same result as a
 * plain fact-by-fact reference of the rule (domain/replacement.ts, docs/TEMPORAL_MODEL.md
 * "One value per subject and predicate"), and retries that change nothing.
 */

const DATASET = 'user_42';
const T0 = new Date('2026-10-01T00:00:00.000Z');
const T_MID = new Date('2026-11-01T00:00:00.000Z');
const T = new Date('2026-11-20T17:00:00.000Z');
const T_LATE = new Date('2026-12-01T00:00:00.000Z');
const HOUR = 3_600_000;

let database: Database;
let db: Collections;

beforeAll(async () => {
  database = await openTestDatabase();
  db = database.collections;
});

/** Facts valid from the start of 2026 unless told otherwise. */
const fact = (subject: string, predicate: string, object: string, more: Partial<FactInput> = {}) =>
  factInput(subject, predicate, object, {
    validAt: new Date('2026-01-01T00:00:00.000Z'),
    ...more,
  });
const episode = (facts: FactInput[]) => episodeInput(facts);

/** The commands the database client sends while `run` runs, by name. */
async function commandsOf<T>(
  db: Database,
  run: () => Promise<T>,
): Promise<{ result: T; commands: Record<string, number> }> {
  const commands: Record<string, number> = {};
  const count = (event: CommandStartedEvent) => {
    commands[event.commandName] = (commands[event.commandName] ?? 0) + 1;
  };
  db.client.on('commandStarted', count);
  try {
    return { result: await run(), commands };
  } finally {
    db.client.off('commandStarted', count);
  }
}

describe('the database commands of an episode that supersedes', () => {
  /**
   * In a database of its own (so the sizes do not share a collection): `n` subject /
   * predicate pairs with two live facts each, then an episode of `n` facts, each replacing
   * one pair (and, with `listed`, also superseding a third fact of its subject by id).
   */
  async function supersedingEpisode(n: number, listed: boolean) {
    const db = await openTestDatabase({ monitorCommands: true });
    const tenant = testTenant('commands', DATASET);
    const perPair = listed ? 3 : 2;
    const old = await recordEpisode(
      db.collections,
      tenant,
      episode(
        Array.from({ length: n }, (_, i) => [
          fact(`person ${i % 7}`, `trait ${i}`, 'a'),
          fact(`person ${i % 7}`, `trait ${i}`, 'b'),
          ...(listed ? [fact(`person ${i % 7}`, `other trait ${i}`, 'c')] : []),
        ]).flat(),
      ),
      T0,
    );
    const input = episode(
      Array.from({ length: n }, (_, i) =>
        fact(`person ${i % 7}`, `trait ${i}`, 'd', {
          replaceExisting: true,
          supersedes: listed ? [old.facts[perPair * i + 2]!.factId] : [],
        }),
      ),
    );
    const { result, commands } = await commandsOf(db, () =>
      recordEpisode(db.collections, tenant, input, T),
    );
    // Every old fact of the replaced pairs (and every listed one) was superseded.
    expect(result.superseded).toHaveLength(perPair * n);
    const byNewFact = new Map(result.facts.map((f, i) => [f.factId, i]));
    for (const f of result.superseded) {
      expect(f.invalidAt).toEqual(T);
      expect(Math.floor(old.facts.findIndex((o) => o.factId === f.factId) / perPair)).toBe(
        byNewFact.get(f.supersededBy!),
      );
    }
    return commands;
  }

  // The embedded FerretDB reads the whole collection for each statement of an update
  // command, so 200 superseding facts take a while there; MongoDB uses the _id index.
  it('replaceExisting: one fact, 50 and 200 facts send the same commands', {
    timeout: 180_000,
  }, async () => {
    const one = await supersedingEpisode(1, false);
    expect(await supersedingEpisode(50, false)).toEqual(one);
    expect(await supersedingEpisode(200, false)).toEqual(one);
  });

  it('replaceExisting and supersedes together: one fact and 50 send the same commands', async () => {
    const one = await supersedingEpisode(1, true);
    expect(await supersedingEpisode(50, true)).toEqual(one);
  });
});

// ---- Scripts: the same history played by the store and by the fact-by-fact reference ----

/** A fact of a script; `supersedes` names facts by label (`e<episode>.<position>`). */
interface ScriptFact {
  subject: string;
  predicate: string;
  object: string;
  validAt?: Date;
  validUntil?: Date | null;
  replaceExisting?: boolean;
  supersedes?: string[];
}

type ScriptStep =
  | { kind: 'episode'; label: string; at: Date; facts: ScriptFact[]; dataset?: string }
  | { kind: 'delete' | 'restore'; fact: string; at: Date };

type Recorder = (
  db: Collections,
  tenant: Tenant,
  input: EpisodeInput,
  at: Date,
) => Promise<RecordedEpisode>;

/**
 * The rule, fact by fact and read by read, written plainly beside the store's batched
 * version: the episode is recorded without its supersessions, each fact first given the
 * validUntil the rule gives it (the earliest later validAt among its successors: the
 * facts of its subject and predicate already recorded, believed or not, that replace and
 * are of another episode, and, for a replaceExisting fact, the episode's other facts of
 * them); then each listed target is invalidated by the first fact that lists it, one by
 * one, and so is every believed corrected version of it; then, until a round changes
 * nothing, for each subject and predicate of the episode, every fact is read and each
 * believed one before a replaceExisting fact of another episode (validAt, recordedAt,
 * factId), believed or not, whose valid time reaches past it is superseded by the first
 * such fact, one `invalidateFact` at a time, with a corrected version ending where that
 * fact begins if it began before it.
 */
const factByFact: Recorder = async (db, tenant, input, at) => {
  const pairOf = (f: { subject: string; predicate: string }) => ({
    subjectKey: f.subject.toLowerCase(),
    predicateKey: f.predicate.toLowerCase(),
  });
  const samePair = (f: { subject: string; predicate: string }, g: typeof f) =>
    JSON.stringify(pairOf(g)) === JSON.stringify(pairOf(f));
  const ids = input.facts.map((_, i) => episodeFactId(tenant, input.episodeId, i));
  const everyFactOf = (f: { subject: string; predicate: string }) =>
    db.facts.find({ ...tenant, ...pairOf(f) }).toArray();
  const bare: FactInput[] = [];
  for (const [i, f] of input.facts.entries()) {
    let validUntil = f.validUntil;
    const successors = [
      ...(await everyFactOf(f)).filter(
        (d) => !ids.includes(d.factId) && d.replaceExisting === true,
      ),
      ...(f.replaceExisting ? input.facts.filter((g, j) => j !== i && samePair(f, g)) : []),
    ];
    for (const o of successors) {
      if (o.validAt > f.validAt && (validUntil === null || o.validAt < validUntil)) {
        validUntil = o.validAt;
      }
    }
    bare.push({ ...f, validUntil, supersedes: [], replaceExisting: false });
  }
  const recorded = await recordEpisode(db, tenant, { ...input, facts: bare }, at);
  const flagged = ids.filter((_, i) => input.facts[i]!.replaceExisting);
  await db.facts.updateMany(
    { ...tenant, factId: { $in: flagged } },
    { $set: { replaceExisting: true } },
  );
  const taken = new Set<string>();
  for (const [i, f] of input.facts.entries()) {
    for (const target of f.supersedes.map(normalizeUuid)) {
      if (ids.includes(target) || taken.has(target)) continue;
      taken.add(target);
      const doc = (await db.facts.findOne({ ...tenant, factId: target }))!;
      const wrong = (x: FactDoc) =>
        refusedOrDone(
          invalidateFact(db, tenant, x.factId, {
            reason: 'superseded',
            at: latest(at, x.recordedAt),
            supersededBy: ids[i]!,
          }),
        );
      await wrong(doc);
      for (;;) {
        const versions = await db.facts
          .find({ ...tenant, correctionOf: doc.correctionOf ?? doc.factId, invalidAt: null })
          .toArray();
        if (versions.length === 0) break;
        for (const v of versions) await wrong(v);
      }
    }
  }
  for (let changed = true; changed; ) {
    changed = false;
    for (const f of input.facts) {
      const every = (await everyFactOf(f)).sort(
        (a, b) =>
          a.validAt.getTime() - b.validAt.getTime() ||
          a.recordedAt.getTime() - b.recordedAt.getTime() ||
          (a.factId < b.factId ? -1 : 1),
      );
      for (const [n, x] of every.entries()) {
        if (x.invalidAt !== null) continue;
        const by = every
          .slice(n + 1)
          .find(
            (y) =>
              y.replaceExisting === true &&
              y.episodeId !== x.episodeId &&
              (x.validUntil === null || x.validUntil > y.validAt),
          );
        if (!by) continue;
        changed = true;
        await refusedOrDone(
          invalidateFact(db, tenant, x.factId, {
            reason: 'superseded',
            at: latest(at, x.recordedAt, by.recordedAt),
            supersededBy: by.factId,
            correctedUntil: x.validAt < by.validAt ? by.validAt : null,
          }),
        );
      }
    }
  }
  return recorded;
};

const latest = (...instants: Date[]) => new Date(Math.max(...instants.map((d) => d.getTime())));

/** A played script: fact labels to ids and back, and each episode's result. */
interface Played {
  ids: Map<string, string>;
  labels: Map<string, string>;
  results: Map<string, RecordedEpisode>;
}

/** Episode ids per script, so the store and the reference record the same episodes. */
const episodeIds = new WeakMap<ScriptStep, string>();

async function play(
  workspace: string,
  script: ScriptStep[],
  record: Recorder = recordEpisode,
  after?: (played: Played) => Promise<void>,
): Promise<Played> {
  const played: Played = { ids: new Map(), labels: new Map(), results: new Map() };
  const tenant = testTenant(workspace, DATASET);
  for (const step of script) {
    if (step.kind === 'episode') {
      const t = testTenant(workspace, step.dataset ?? DATASET);
      if (!episodeIds.has(step)) episodeIds.set(step, randomUUID());
      const episodeId = episodeIds.get(step)!;
      step.facts.forEach((_, p) => {
        const id = episodeFactId(t, episodeId, p);
        played.ids.set(`${step.label}.${p}`, id);
        played.labels.set(id, `${step.label}.${p}`);
        played.labels.set(factDocumentId(t, id), `${step.label}.${p}`);
      });
      const input: EpisodeInput = {
        ...episode([]),
        episodeId,
        facts: step.facts.map((f) =>
          fact(f.subject, f.predicate, f.object, {
            validAt: f.validAt ?? new Date('2026-01-01T00:00:00.000Z'),
            validUntil: f.validUntil ?? null,
            replaceExisting: f.replaceExisting ?? false,
            supersedes: (f.supersedes ?? []).map((label) => played.ids.get(label)!),
          }),
        ),
      };
      played.results.set(step.label, await record(db, t, input, step.at));
    } else {
      const id = played.ids.get(step.fact)!;
      if (step.kind === 'delete') {
        await refusedOrDone(invalidateFact(db, tenant, id, { reason: 'deleted', at: step.at }));
      } else {
        await refusedOrDone(restoreFact(db, tenant, id, 'deleted', step.at));
      }
    }
    await after?.(played);
  }
  return played;
}

/** The supersession state of a workspace, by label: every fact and every claim. */
async function stateOf(workspace: string, played: Played) {
  const { workspaceId } = testTenant(workspace, DATASET);
  const facts = await db.facts.find({ workspaceId }).toArray();
  // A corrected version by the fact it corrects and the fact that ends it (its id is
  // derived from the tenant, which differs between the workspaces compared).
  const versions = new Map<string, string>();
  const label = (id: string | null): string | null =>
    id === null ? null : (played.labels.get(id) ?? versions.get(id) ?? id);
  for (const f of facts) {
    if (f.correctionOf) {
      versions.set(f.factId, `${label(f.correctionOf)}~${label(f.correctedBy ?? null)}`);
      versions.set(f._id, versions.get(f.factId)!);
    }
  }
  const claims = await db.claims.find({ workspaceId }).toArray();
  return {
    facts: facts
      .map((f) => ({
        fact: label(f.factId),
        dataset: f.dataset,
        validAt: f.validAt,
        validUntil: f.validUntil,
        recordedAt: f.recordedAt,
        invalidAt: f.invalidAt,
        invalidReason: f.invalidReason,
        supersededBy: label(f.supersededBy),
        restorations: f.restorations ?? 0,
      }))
      .sort((a, b) => (a.fact! < b.fact! ? -1 : 1)),
    claims: claims
      .map((claim) => ({
        claim: claim._id
          .split(':')
          .map((part) => label(part))
          .join(':'),
        fact: label(claim.factId),
        reason: claim.reason,
        invalidAt: claim.invalidAt,
        supersededBy: label(claim.supersededBy),
        applied: claim.applied,
      }))
      .sort((a, b) => (a.claim < b.claim ? -1 : 1)),
  };
}

/**
 * The history of the semantics test: one pair ("user lives in") with facts before, beside
 * and after in valid time, in every state, others beside it, and an episode at T whose
 * facts compete for the same targets.
 */
const FEB = new Date('2026-02-01T00:00:00.000Z');
const MAR = new Date('2026-03-01T00:00:00.000Z');
const JUN = new Date('2026-06-01T00:00:00.000Z');
const NEXT_YEAR = new Date('2027-01-01T00:00:00.000Z');
const SCRIPT: ScriptStep[] = [
  {
    kind: 'episode',
    label: 'old',
    at: T0,
    facts: [
      { subject: 'user', predicate: 'lives in', object: 'paris' }, // 0: listed by new.4
      { subject: 'User', predicate: 'Lives In', object: 'lyon', validAt: JUN }, // 1: later than new's: kept
      { subject: 'user', predicate: 'likes', object: 'tea' }, // 2: other predicate
      { subject: 'alice', predicate: 'lives in', object: 'rome' }, // 3: other subject
      {
        subject: 'user',
        predicate: 'lives in',
        object: 'berlin',
        validUntil: new Date('2026-10-15T00:00:00.000Z'),
      }, // 4: ends after new.0 begins: replaced by it
      {
        subject: 'user',
        predicate: 'lives in',
        object: 'bonn',
        validAt: new Date('2025-01-01T00:00:00.000Z'),
        validUntil: new Date('2025-06-01T00:00:00.000Z'),
      }, // 5: ends before new.0 begins: kept
      { subject: 'user', predicate: 'lives in', object: 'madrid', validAt: NEXT_YEAR }, // 6: later: kept
      { subject: 'user', predicate: 'works at', object: 'acme' }, // 7: listed by new.2
      { subject: 'user', predicate: 'works at', object: 'globex' }, // 8: replaced by new.3
      { subject: 'user', predicate: 'lives in', object: 'vienna' }, // 9: deleted before new
      { subject: 'user', predicate: 'lives in', object: 'prague' }, // 10: deleted, restored
      { subject: 'user', predicate: 'lives in', object: 'kyoto' }, // 11: superseded by mid.0
    ],
  },
  {
    kind: 'episode',
    label: 'elsewhere',
    at: T0,
    dataset: 'another dataset',
    facts: [{ subject: 'user', predicate: 'lives in', object: 'paris' }],
  },
  { kind: 'delete', fact: 'old.10', at: new Date(T_MID.getTime() - HOUR) },
  { kind: 'restore', fact: 'old.10', at: T_MID },
  {
    kind: 'episode',
    label: 'mid',
    at: T_MID,
    facts: [{ subject: 'user', predicate: 'lives in', object: 'oslo', supersedes: ['old.11'] }],
  },
  {
    kind: 'episode',
    label: 'same instant',
    at: T,
    facts: [{ subject: 'user', predicate: 'lives in', object: 'nice', validAt: FEB }],
  },
  {
    kind: 'episode',
    label: 'later',
    at: T_LATE,
    facts: [{ subject: 'user', predicate: 'lives in', object: 'tokyo' }],
  },
  { kind: 'delete', fact: 'old.9', at: T_LATE },
  {
    kind: 'episode',
    label: 'new',
    at: T,
    facts: [
      { subject: 'user', predicate: 'lives in', object: 'london', replaceExisting: true },
      {
        subject: 'USER',
        predicate: 'lives in',
        object: 'bergen',
        validAt: MAR,
        replaceExisting: true,
      },
      {
        subject: 'user',
        predicate: 'works at',
        object: 'initech',
        validAt: FEB,
        supersedes: ['old.7'],
      },
      { subject: 'user', predicate: 'works at', object: 'umbrella', replaceExisting: true },
      { subject: 'alice', predicate: 'likes', object: 'cats', supersedes: ['old.0'] },
      { subject: 'bob', predicate: 'likes', object: 'jazz', replaceExisting: true },
    ],
  },
];

describe('what an episode supersedes', () => {
  let played: Played;
  let state: Awaited<ReturnType<typeof stateOf>>;

  beforeAll(async () => {
    played = await play('semantics', SCRIPT);
    state = await stateOf('semantics', played);
  });

  const stateOfFact = (label: string) => state.facts.find((f) => f.fact === label);

  it('supersedes the listed facts, and the believed facts of the pair that begin before a replacing fact and reach past it', () => {
    const superseded = Object.fromEntries(
      state.facts
        .filter((f) => f.invalidReason === 'superseded')
        .map((f) => [f.fact, f.supersededBy]),
    );
    expect(superseded).toEqual({
      'old.0': 'new.4', // listed: a listed target goes to the fact that lists it
      'old.4': 'new.0', // began before london and ended after london began
      'old.10': 'new.0', // restored, so believed again
      'old.11': 'mid.0',
      'mid.0': 'new.0', // recorded later than old ones, but valid from the same day: still before
      'same instant.0': 'new.1', // nice (February) is before bergen (March), which replaces it
      'later.0': 'new.1', // tokyo: recorded after new, valid from January: before bergen
      'old.7': 'new.2',
      'old.8': 'new.3',
    });
    for (const label of ['old.0', 'old.4', 'old.10', 'mid.0', 'same instant.0', 'old.7', 'old.8']) {
      expect(stateOfFact(label)).toMatchObject({ invalidAt: T, invalidReason: 'superseded' });
    }
    // Never superseded before it was recorded.
    expect(stateOfFact('later.0')).toMatchObject({ invalidAt: T_LATE });
    expect(
      played.results
        .get('new')!
        .superseded.map((f) => played.labels.get(f.factId))
        .sort(),
    ).toEqual(['later.0', 'mid.0', 'old.0', 'old.10', 'old.4', 'old.7', 'old.8', 'same instant.0']);
  });

  it('a replacing fact ends where its earliest successor begins: a later replacing fact of another episode, or any later fact of its own', () => {
    // london (January) ends where its own episode's bergen (March) begins: nice
    // (February) does not replace, so it ends nothing, and neither does lyon (June), so
    // bergen is open; umbrella (January) ends where its own episode's initech (February)
    // begins.
    expect(stateOfFact('new.0')).toMatchObject({ validUntil: MAR, invalidAt: null });
    expect(stateOfFact('new.1')).toMatchObject({ validUntil: null, invalidAt: null });
    expect(stateOfFact('new.3')).toMatchObject({ validUntil: FEB, invalidAt: null });
    // The facts without replaceExisting keep their own validity.
    expect(stateOfFact('new.2')).toMatchObject({ validUntil: null, invalidAt: null });
    expect(stateOfFact('new.5')).toMatchObject({ validUntil: null, invalidAt: null });
  });

  it('records a corrected version of each fact it replaced that began before its successor', () => {
    const versions = state.facts
      .filter((f) => f.fact!.includes('~'))
      .map(({ fact, validAt, validUntil, recordedAt, invalidAt }) => ({
        fact,
        validAt,
        validUntil,
        recordedAt,
        invalidAt,
      }));
    // nice (February) was true until bergen (March), which replaced it; tokyo (January,
    // recorded after new but before it in no order: london, from the same day, was
    // recorded first) until bergen too, as known from tokyo's recording on. The facts
    // london replaced begin with it (January 1st): they were never the value alone.
    expect(versions).toEqual([
      {
        fact: 'later.0~new.1',
        validAt: new Date('2026-01-01T00:00:00.000Z'),
        validUntil: MAR,
        recordedAt: T_LATE,
        invalidAt: null,
      },
      {
        fact: 'same instant.0~new.1',
        validAt: FEB,
        validUntil: MAR,
        recordedAt: T,
        invalidAt: null,
      },
    ]);
  });

  it('leaves other predicates, subjects, datasets, facts after the replacing ones in valid time and facts that end before them', () => {
    for (const label of [
      'old.1', // lyon, from June: after london and bergen
      'old.2', // another predicate
      'old.3', // another subject
      'old.5', // bonn, ended before london began
      'old.6', // madrid, next year
      'elsewhere.0', // another dataset
      'new.0',
      'new.1', // the same pair as new.0: facts of one episode never supersede each other
      'new.2',
      'new.3',
      'new.4',
      'new.5',
    ]) {
      expect(stateOfFact(label), label).toMatchObject({
        invalidAt: null,
        invalidReason: null,
        supersededBy: null,
      });
    }
    // Deleted before: already invalidated, left as it is.
    expect(stateOfFact('old.9')).toMatchObject({
      invalidAt: T_LATE,
      invalidReason: 'deleted',
      supersededBy: null,
    });
    // Superseded before T: keeps its first supersession.
    expect(stateOfFact('old.11')).toMatchObject({ invalidAt: T_MID, supersededBy: 'mid.0' });
  });

  it('each through one applied claim, in the generation the fact is in', () => {
    const ofNew = state.claims.filter((claim) => claim.supersededBy?.startsWith('new.'));
    expect(ofNew.map((claim) => claim.claim).sort()).toEqual(
      [
        'invalidate:later.0',
        'invalidate:mid.0',
        'invalidate:old.0',
        'invalidate:old.4',
        'invalidate:old.7',
        'invalidate:old.8',
        // Restored once, so its claim is the second generation's.
        'invalidate:old.10:1',
        'invalidate:same instant.0',
      ].sort(),
    );
    for (const claim of ofNew) {
      expect(claim).toMatchObject({ reason: 'superseded', applied: true });
    }
    expect(stateOfFact('old.10')!.restorations).toBe(1);
  });

  it('ends exactly as the rule applied fact by fact does, step by step', async () => {
    const reference = await play('semantics reference', SCRIPT, factByFact);
    expect(await stateOf('semantics reference', reference)).toEqual(state);
  });
});

/**
 * A random history over a few subjects and predicates (spelt in different cases):
 * episodes recorded in order, at the same instant as the one before, or before it; facts
 * valid before or after their recording, some expiring; replaceExisting and listed
 * targets; deletes and restores in between.
 */
function randomScript(seed: number): ScriptStep[] {
  const next = prng(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  const subjects = ['user', 'User', 'alice'];
  const predicates = ['lives in', 'Lives In', 'likes', 'owns'];
  const day = 24 * HOUR;
  const script: ScriptStep[] = [];
  const labels: string[] = [];
  let at = T0.getTime();
  for (let e = 0; e < 10; e++) {
    const roll = next();
    at = roll < 0.2 ? at : roll < 0.35 ? at - 2 * HOUR : at + day;
    if (labels.length > 0 && next() < 0.3) {
      script.push({
        kind: pick(['delete', 'restore'] as const),
        fact: pick(labels),
        at: new Date(at),
      });
    }
    const facts: ScriptFact[] = Array.from({ length: 1 + Math.floor(next() * 6) }, () => {
      // An episode's own minute: two episodes never tie on validAt, so the factId (which
      // differs between the two workspaces compared) never decides between them. Ties are
      // the race tests' (recordEpisode.store.test.ts) and the rule's unit tests'.
      const validAt = at + (Math.floor(next() * 60) - 40) * day + e * 60_000;
      return {
        subject: pick(subjects),
        predicate: pick(predicates),
        object: pick(['a', 'b', 'c']),
        validAt: new Date(validAt),
        validUntil: next() < 0.25 ? new Date(validAt + Math.floor(next() * 60) * day) : null,
        replaceExisting: next() < 0.6,
        supersedes: labels.length > 0 && next() < 0.3 ? [pick(labels), pick(labels)] : [],
      };
    });
    script.push({ kind: 'episode', label: `e${e}`, at: new Date(at), facts });
    facts.forEach((_, p) => {
      labels.push(`e${e}.${p}`);
    });
  }
  return script;
}

describe('the same as superseding fact by fact, on random histories', () => {
  it.each([1, 2, 3, 4, 5])('history %i', async (seed) => {
    const script = randomScript(seed);
    const states: unknown[] = [];
    await play(`random ${seed} reference`, script, factByFact, async (played) => {
      states.push(await stateOf(`random ${seed} reference`, played));
    });
    let step = 0;
    await play(`random ${seed}`, script, recordEpisode, async (played) => {
      expect(await stateOf(`random ${seed}`, played), `after step ${step}`).toEqual(states[step]);
      step++;
    });
    // Not a vacuous comparison: the history superseded something, and recorded a corrected
    // version of something.
    expect(JSON.stringify(states.at(-1))).toContain('"superseded"');
    expect(JSON.stringify(states.at(-1))).toContain('~');
  });
});

// ---- Races, failures and retries ----

const snapshot = () => everyDocument(database.db);

async function storedFact(tenant: Tenant, factId: string): Promise<FactDoc> {
  return (await db.facts.findOne({ _id: factDocumentId(tenant, factId) }))!;
}

/** Two live facts of "user lives in" and one of "user works at", recorded at T0. */
async function oldFacts(tenant: Tenant): Promise<string[]> {
  const old = await recordEpisode(
    db,
    tenant,
    episode([
      fact('user', 'lives in', 'paris'),
      fact('user', 'lives in', 'lyon'),
      fact('user', 'works at', 'acme'),
    ]),
    T0,
  );
  return old.facts.map((f) => f.factId);
}

const replacing = (old: string[]) =>
  episode([
    fact('user', 'lives in', 'london', { replaceExisting: true }),
    fact('user', 'works at', 'initech', { supersedes: [old[2]!] }),
  ]);

describe('a retry', () => {
  it('of a recorded episode changes nothing and answers the same', async () => {
    const tenant = testTenant('retry', DATASET);
    const old = await oldFacts(tenant);
    const input = replacing(old);
    const first = await recordEpisode(db, tenant, input, T);
    expect(first.superseded.map((f) => f.factId).sort()).toEqual([...old].sort());

    const before = await snapshot();
    const retry = await recordEpisode(db, tenant, input, new Date(T.getTime() + HOUR));
    expect(retry.outcome).toBe('alreadyRecorded');
    expect(retry.episode).toEqual(first.episode);
    expect(retry.facts).toEqual(first.facts);
    expect(retry.superseded).toEqual(first.superseded);
    expect(await snapshot()).toEqual(before);
  });
});

describe('claims taken by someone else', () => {
  it('a target another caller claimed gets that claim, not ours; the other targets ours', async () => {
    const tenant = testTenant('claimed', DATASET);
    const old = await oldFacts(tenant);
    const [other] = (
      await recordEpisode(db, tenant, episode([fact('user', 'moved to', 'rome')]), T0)
    ).facts;
    // Another caller claimed old[0] and stopped before stamping it.
    const taken: InvalidationClaimDoc = {
      _id: invalidationClaimId(factDocumentId(tenant, old[0]!)),
      ...tenant,
      factId: old[0]!,
      reason: 'superseded',
      invalidAt: new Date(T.getTime() - HOUR),
      supersededBy: other!.factId,
      applied: false,
    };
    await db.claims.insertOne(taken);

    const result = await recordEpisode(db, tenant, replacing(old), T);
    expect(result.superseded.map((f) => f.factId).sort()).toEqual([old[1]!, old[2]!].sort());
    expect(await storedFact(tenant, old[0]!)).toMatchObject({
      invalidAt: taken.invalidAt,
      invalidReason: 'superseded',
      supersededBy: other!.factId,
    });
    expect(await storedFact(tenant, old[1]!)).toMatchObject({
      invalidAt: T,
      supersededBy: result.facts[0]!.factId,
    });
    expect(await db.claims.findOne({ _id: taken._id })).toEqual({ ...taken, applied: true });
    expect(await db.claims.countDocuments({ ...tenant, applied: false })).toBe(0);
  });
});

describe('a failed claims insert', () => {
  const failures: [string, () => Error][] = [
    [
      'a bulk write error with no write errors (a lost connection)',
      () =>
        new MongoBulkWriteError(
          { message: 'connection lost', code: 11000, writeErrors: [] },
          {} as BulkWriteResult,
        ),
    ],
    [
      'a duplicate key beside another write error',
      () =>
        new MongoBulkWriteError(
          {
            message: 'write errors',
            code: 11000,
            writeErrors: [
              { code: 11000, index: 0, errmsg: 'duplicate key' },
              { code: 121, index: 1, errmsg: 'document failed validation' },
            ] as unknown as WriteError[],
          },
          {} as BulkWriteResult,
        ),
    ],
    [
      'a network error',
      () => Object.assign(new Error('socket closed'), { name: 'MongoNetworkError' }),
    ],
  ];

  it.each(failures)('is thrown, not taken for lost races: %s', async (name, failure) => {
    const tenant = testTenant(`failed ${name}`, DATASET);
    const old = await oldFacts(tenant);
    const input = replacing(old);
    const spy = vi.spyOn(db.claims, 'insertMany').mockRejectedValueOnce(failure());
    try {
      await expect(recordEpisode(db, tenant, input, T)).rejects.toThrow(failure().message);
    } finally {
      spy.mockRestore();
    }
    // Nothing was superseded, and the record is left for a retry to complete.
    for (const id of old) expect(await storedFact(tenant, id)).toMatchObject({ invalidAt: null });
    expect(await db.episodeRecords.countDocuments({ ...tenant, completedAt: null })).toBe(1);

    // The retry finishes it, and the supersessions carry its time: until then, the store
    // believed the old facts (they were not superseded yet).
    const retryAt = new Date(T.getTime() + HOUR);
    const retry = await recordEpisode(db, tenant, input, retryAt);
    expect(retry.outcome).toBe('completed');
    expect(retry.superseded.map((f) => f.factId).sort()).toEqual([...old].sort());
    for (const id of old) {
      expect(await storedFact(tenant, id)).toMatchObject({ invalidAt: retryAt });
    }
    expect(await db.claims.countDocuments({ ...tenant, applied: false })).toBe(0);
  });
});
