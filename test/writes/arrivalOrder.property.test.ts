import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Collections } from '../../src/store/collections.js';
import { listFacts } from '../../src/store/facts.js';
import { type EpisodeInput, episodeFactId, recordEpisode } from '../../src/store/recordEpisode.js';
import type { Tenant } from '../../src/store/tenant.js';
import { openTestDatabase } from '../helpers/database.js';
import { episodeInput, factInput, testTenant } from '../helpers/episodeInput.js';
import { propertySeed } from '../helpers/propertySeed.js';

/**
 * The temporal rule's first promise (docs/TEMPORAL_MODEL.md, "One value per subject and
 * predicate"): what the store knows after a set of writes does not depend on the order in
 * which they arrived. Generated histories of replacing, plain and explicitly superseding
 * facts over a few subjects and predicates are recorded through `recordEpisode` in several
 * orders, one after another and all at once; after the last write, every (validAt,
 * knownAt) view answers what a reference model, stated here from the rule, says, and so
 * the same whatever the order.
 *
 * The reference: a fact listed in another episode's `supersedes` is wrong, true nowhere.
 * Every other fact F is true from its validAt until its end:
 *
 *   end(F) = the earliest of F's own validUntil and the validAt of every later fact G of
 *            its subject and predicate that ends it: G replaces and is of another
 *            episode, or G is of F's own episode and F replaces,
 *
 * counting every fact G, wrong or not (a fact said wrong still marks where what came
 * before it ended). Within a subject and predicate the facts' validAts differ: two facts
 * valid from the same instant are told apart by arrival, the one thing this test varies.
 *
 * The seed varies per run and is printed; PROPERTY_SEED repeats a run, ARRIVAL_RUNS sets
 * how many histories.
 */

const SUBJECTS = ['user', 'alice'];
const PREDICATES = ['drives', 'lives in'];
const DAY = 86_400_000;
const ORIGIN = Date.UTC(2026, 0, 1);
/** The writes' clock: after every validAt but the future ones. */
const WRITES_AT = Date.UTC(2027, 5, 1);

interface FactSpec {
  pair: number;
  object: string;
  /** Its day after ORIGIN: distinct over the whole history. */
  day: number;
  length: number | null;
  replaceExisting: boolean;
  /** Facts of earlier episodes it lists in `supersedes`, as [episode, position]. */
  supersedes: [number, number][];
}

type History = FactSpec[][];

/** `arbitrary` with weight `some`, null with weight `none`. */
const sometimes = <T>(arbitrary: fc.Arbitrary<T>, some: number, none: number) =>
  fc.oneof({ arbitrary, weight: some }, { arbitrary: fc.constant(null), weight: none });

/** Histories of 2 to 5 episodes of 1 to 3 facts, each fact on its own day. */
const arbitraryHistory: fc.Arbitrary<History> = fc
  .array(
    fc.array(
      fc.record({
        pair: fc.integer({ min: 0, max: SUBJECTS.length * PREDICATES.length - 1 }),
        object: fc.constantFrom('a', 'b', 'c', 'd'),
        // Most facts open-ended, as extracted facts are; a few with an end of their own.
        length: sometimes(fc.integer({ min: 1, max: 400 }), 1, 3),
        replaceExisting: sometimes(fc.constant(true), 2, 1).map((r) => r === true),
        // An explicit `supersedes` now and then.
        listing: sometimes(fc.tuple(fc.nat(), fc.nat()), 1, 5),
      }),
      { minLength: 1, maxLength: 3 },
    ),
    { minLength: 2, maxLength: 5 },
  )
  .chain((episodes) => {
    const count = episodes.flat().length;
    return fc
      .shuffledSubarray(
        Array.from({ length: 700 }, (_, d) => d),
        { minLength: count, maxLength: count },
      )
      .map((days) => {
        let n = 0;
        return episodes.map((facts, e) =>
          facts.map(({ listing, ...f }) => {
            const supersedes: [number, number][] = [];
            if (listing && e > 0) {
              const target = listing[0] % e;
              supersedes.push([target, listing[1] % episodes[target]!.length]);
            }
            return { ...f, day: days[n++]!, supersedes };
          }),
        );
      });
  });

/** Orders of the episodes in which every listed fact's episode comes before its lister's. */
const arbitraryOrder = (history: History): fc.Arbitrary<number[]> =>
  fc
    .array(fc.double({ min: 0, max: 1, noNaN: true }), {
      minLength: history.length,
      maxLength: history.length,
    })
    .map((keys) => {
      const order: number[] = [];
      const placed = new Set<number>();
      const ready = (e: number) =>
        history[e]!.every((f) => f.supersedes.every(([t]) => placed.has(t)));
      while (order.length < history.length) {
        const next = history
          .map((_, e) => e)
          .filter((e) => !placed.has(e) && ready(e))
          .sort((a, b) => keys[a]! - keys[b]!)[0]!;
        order.push(next);
        placed.add(next);
      }
      return order;
    });

const at = (day: number) => new Date(ORIGIN + day * DAY);

/** The episodes of a history, with one id each, as `recordEpisode` takes them. */
function inputsOf(history: History, tenant: Tenant): EpisodeInput[] {
  const inputs = history.map(() => episodeInput([]));
  history.forEach((facts, e) => {
    inputs[e]!.facts = facts.map((f) =>
      factInput(
        SUBJECTS[f.pair % SUBJECTS.length]!,
        PREDICATES[Math.floor(f.pair / SUBJECTS.length)]!,
        f.object,
        {
          validAt: at(f.day),
          validUntil: f.length === null ? null : at(f.day + f.length),
          replaceExisting: f.replaceExisting,
          supersedes: f.supersedes.map(([t, p]) => episodeFactId(tenant, inputs[t]!.episodeId, p)),
        },
      ),
    );
  });
  return inputs;
}

/** The reference: each fact's label and the valid time it is true in, wrong ones left out. */
function referenceTruth(history: History): { label: string; from: number; until: number | null }[] {
  const facts = history.flatMap((facts, e) =>
    facts.map((f, p) => ({ ...f, e, label: `${e}.${p}` })),
  );
  const wrong = new Set(
    facts.flatMap((f) => f.supersedes.filter(([t]) => t !== f.e).map(([t, p]) => `${t}.${p}`)),
  );
  return facts
    .filter((f) => !wrong.has(f.label))
    .map((f) => {
      let until = f.length === null ? null : f.day + f.length;
      for (const g of facts) {
        if (g.pair !== f.pair || g.day <= f.day) continue;
        const ends = g.e === f.e ? f.replaceExisting : g.replaceExisting;
        if (ends && (until === null || g.day < until)) until = g.day;
      }
      return { label: f.label, from: f.day, until };
    });
}

/** The instants worth asking about: every start and end, a millisecond before each, and far out. */
function viewsOf(history: History): Date[] {
  const days = history
    .flat()
    .flatMap((f) => (f.length === null ? [f.day] : [f.day, f.day + f.length]));
  const instants = new Set([ORIGIN - 1000 * DAY, ORIGIN + 5000 * DAY]);
  for (const d of days) {
    instants.add(at(d).getTime());
    instants.add(at(d).getTime() - 1);
    instants.add(at(d).getTime() + DAY / 2);
  }
  return [...instants].sort((a, b) => a - b).map((t) => new Date(t));
}

let db: Collections;
let run = 0;
let lastTenant: Tenant | undefined;

beforeAll(async () => {
  db = (await openTestDatabase()).collections;
});

/**
 * Records the history's episodes in `order` (all at once when `concurrent`, each waiting
 * only for the episodes whose facts it lists) and answers, for each view, the facts true
 * then as known after the last write, by label: `<episode>.<position>` of the fact, or of
 * the fact a corrected version corrects, with the valid time it is true in.
 */
async function recordAndView(history: History, order: number[], concurrent: boolean) {
  const tenant = testTenant(`arrival order ${run++}`, 'd');
  lastTenant = tenant;
  const inputs = inputsOf(history, tenant);
  const labels = new Map<string, string>();
  inputs.forEach((input, e) => {
    input.facts.forEach((_, p) => {
      labels.set(episodeFactId(tenant, input.episodeId, p), `${e}.${p}`);
    });
  });
  if (concurrent) {
    const done = new Map<number, Promise<unknown>>();
    for (const [n, e] of order.entries()) {
      const waitFor = history[e]!.flatMap((f) => f.supersedes.map(([t]) => done.get(t)!));
      done.set(
        e,
        Promise.all(waitFor).then(() =>
          recordEpisode(db, tenant, inputs[e]!, new Date(WRITES_AT + (n % 2))),
        ),
      );
    }
    await Promise.all(done.values());
  } else {
    for (const [n, e] of order.entries()) {
      await recordEpisode(db, tenant, inputs[e]!, new Date(WRITES_AT + n * 1000));
    }
  }
  const views = KNOWN_AT.flatMap((knownAt) =>
    viewsOf(history).map((validAt) => ({ validAt, knownAt })),
  );
  const answers = await Promise.all(
    views.map(async ({ validAt, knownAt }) => {
      const page = await listFacts(
        db,
        tenant,
        { selection: { kind: 'point', validAt, knownAt } },
        { first: 100 },
      );
      return page.facts
        .map((f) => ({
          label: labels.get(f.correctionOf ?? f.factId)!,
          from: Math.round((f.validAt.getTime() - ORIGIN) / DAY),
          until: f.validUntil === null ? null : Math.round((f.validUntil.getTime() - ORIGIN) / DAY),
        }))
        .sort((a, b) => (a.label < b.label ? -1 : 1));
    }),
  );
  return new Map(views.map((v, i) => [viewKey(v), answers[i]!]));
}

/** The transaction-time instants asked: just after the last write, and years later. */
const KNOWN_AT = [new Date(WRITES_AT + 3600_000), new Date(Date.UTC(2040, 0, 1))];
const viewKey = (v: { validAt: Date; knownAt: Date }) =>
  `valid at ${v.validAt.toISOString()}, known at ${v.knownAt.toISOString()}`;

/** What the reference says each view answers. */
function expectedViews(
  history: History,
): Map<string, { label: string; from: number; until: number | null }[]> {
  const truth = referenceTruth(history);
  return new Map(
    KNOWN_AT.flatMap((knownAt) => viewsOf(history).map((validAt) => ({ validAt, knownAt }))).map(
      (v) => {
        const t = v.validAt.getTime();
        return [
          viewKey(v),
          truth
            .filter(
              (f) => at(f.from).getTime() <= t && (f.until === null || t < at(f.until).getTime()),
            )
            .sort((a, b) => (a.label < b.label ? -1 : 1)),
        ];
      },
    ),
  );
}

describe('the same history whatever order the writes arrive in', () => {
  it('every view after the last write answers what the reference says, in every order, sequentially and concurrently', {
    timeout: 600_000,
  }, async () => {
    // Histories in which a write, recorded one after another, came after a fact it ended
    // (so the store recorded a corrected version): counted on the sequential orders, which
    // the seed decides (how the concurrent writes interleave is the machine's).
    const seed = propertySeed('arrival orders');
    const numRuns = Number(process.env.ARRIVAL_RUNS ?? 25);
    let corrected = 0;
    const versionsRecorded = async (tenant: Tenant) =>
      (await db.facts.countDocuments({
        workspaceId: tenant.workspaceId,
        correctionOf: { $ne: null },
      })) > 0;
    await fc.assert(
      fc.asyncProperty(
        arbitraryHistory.chain((history) =>
          fc.tuple(
            fc.constant(history),
            fc.array(arbitraryOrder(history), { minLength: 2, maxLength: 2 }),
            arbitraryOrder(history),
          ),
        ),
        async ([history, sequentialOrders, concurrentOrder]) => {
          const expected = expectedViews(history);
          let versions = false;
          for (const order of sequentialOrders) {
            expect(await recordAndView(history, order, false), `in order ${order}`).toEqual(
              expected,
            );
            versions ||= await versionsRecorded(lastTenant!);
          }
          if (versions) corrected++;
          expect(
            await recordAndView(history, concurrentOrder, true),
            `all at once, ${concurrentOrder}`,
          ).toEqual(expected);
        },
      ),
      { numRuns, seed },
    );
    // Not vacuous: many histories recorded a corrected version. Over half do (127 of 225
    // over four seeds), so any seed reaches a fifth (fewer than 5 of 25: about 1 in 25,000),
    // where "more than 10" failed about one fresh seed in fourteen.
    console.log(`arrival orders: ${corrected} of the histories recorded a corrected version`);
    expect(corrected).toBeGreaterThanOrEqual(Math.ceil(numRuns / 5));
  });
});
