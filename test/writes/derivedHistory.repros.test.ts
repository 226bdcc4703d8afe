import { beforeAll, describe, expect, it } from 'vitest';
import type { Collections } from '../../src/store/collections.js';
import { eraseEpisode } from '../../src/store/erasure.js';
import { deleteFact, restoreFact } from '../../src/store/factLifecycle.js';
import { listFacts } from '../../src/store/facts.js';
import { type EpisodeInput, episodeFactId, recordEpisode } from '../../src/store/recordEpisode.js';
import type { Tenant } from '../../src/store/tenant.js';
import { importJsonl } from '../../src/transfer/importJsonl.js';
import { openTestDatabase } from '../helpers/database.js';
import { episodeInput, factInput, testTenant } from '../helpers/episodeInput.js';

/**
 * Histories that once answered wrong, each kept as a named test (the property test,
 * derivedHistory.property.test.ts, runs them as sequences too). The rule they hold the
 * store to: the history is derived from what was recorded, said wrong, deleted, restored
 * and erased, so a view answers from those records alone, whatever order the writes ran
 * in and whatever was erased since (an erased episode is as if it had never been
 * recorded).
 *
 * The running example of docs/TEMPORAL_MODEL.md: "user drives a Honda" from July 1st and
 * "user drives a Toyota" from August 16th, each replacing, each in its own episode.
 */

const JULY_1 = new Date('2026-07-01T00:00:00.000Z');
const JULY_15 = new Date('2026-07-15T00:00:00.000Z');
const AUGUST_16 = new Date('2026-08-16T00:00:00.000Z');
const SEPTEMBER_15 = new Date('2026-09-15T00:00:00.000Z');

let db: Collections;
let datasets = 0;

beforeAll(async () => {
  db = (await openTestDatabase()).collections;
});

/** A dataset of its own for each history. */
const freshTenant = (): Tenant => testTenant('derived history', `repro-${datasets++}`);

/** The writes' clock: each call a minute after the last, in 2027 (after every valid time). */
function clock(): () => Date {
  let t = Date.UTC(2027, 0, 1);
  return () => {
    t += 60_000;
    return new Date(t);
  };
}

const drives = (object: string, validAt: Date): EpisodeInput =>
  episodeInput([factInput('user', 'drives', object, { validAt, replaceExisting: true })]);

/** The one fact of a one-fact episode. */
const factOf = (tenant: Tenant, episode: EpisodeInput) =>
  episodeFactId(tenant, episode.episodeId, 0);

interface Shown {
  fact: string;
  validAt: string;
  validUntil: string | null;
}

/**
 * What `facts(validAt, knownAt)` answers: each document as the fact it is a version of
 * (named by `names`), with the valid time it shows; sorted, duplicates kept.
 */
async function factsAt(
  tenant: Tenant,
  names: Map<string, string>,
  validAt: Date,
  knownAt: Date,
): Promise<Shown[]> {
  const page = await listFacts(
    db,
    tenant,
    { selection: { kind: 'point', validAt, knownAt } },
    { first: 500 },
  );
  return page.facts
    .map((f) => {
      const id = f.correctionOf ?? f.factId;
      return {
        fact: names.get(id) ?? `an unknown fact ${id}`,
        validAt: f.validAt.toISOString(),
        validUntil: f.validUntil?.toISOString() ?? null,
      };
    })
    .sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));
}

const hondaFromJuly: Shown = { fact: 'Honda', validAt: JULY_1.toISOString(), validUntil: null };

describe('the history is derived from the records', () => {
  it('a deleted fact stays deleted after an unrelated erasure', async () => {
    const tenant = freshTenant();
    const now = clock();
    const honda = drives('Honda', JULY_1);
    const toyota = drives('Toyota', AUGUST_16);
    const names = new Map([
      [factOf(tenant, honda), 'Honda'],
      [factOf(tenant, toyota), 'Toyota'],
    ]);
    await recordEpisode(db, tenant, honda, now());
    await recordEpisode(db, tenant, toyota, now());
    await deleteFact(db, tenant, factOf(tenant, honda), now());
    // The Toyota's erasure takes its replacement back, not the delete.
    await eraseEpisode(db, tenant, toyota.episodeId, { keyId: 'test' }, now());
    const afterErasure = now();
    for (const validAt of [afterErasure, JULY_15, SEPTEMBER_15]) {
      expect(
        await factsAt(tenant, names, validAt, afterErasure),
        `true on ${validAt.toISOString()}`,
      ).toEqual([]);
    }
    // Still deleted, so it can be restored, and then it is the one value again.
    await restoreFact(db, tenant, factOf(tenant, honda), now());
    const restored = now();
    expect(await factsAt(tenant, names, restored, restored), 'true now').toEqual([hondaFromJuly]);
    expect(await factsAt(tenant, names, JULY_15, restored), 'true in July').toEqual([
      hondaFromJuly,
    ]);
  });

  it('erasure does not depend on arrival order', async () => {
    // The same two episodes in either order, then the Toyota's erased: what is left is
    // the Honda alone, open-ended, as if the Toyota had never been recorded.
    for (const order of ['Toyota first, the Honda late', 'the Honda first'] as const) {
      const tenant = freshTenant();
      const now = clock();
      const honda = drives('Honda', JULY_1);
      const toyota = drives('Toyota', AUGUST_16);
      const names = new Map([
        [factOf(tenant, honda), 'Honda'],
        [factOf(tenant, toyota), 'Toyota'],
      ]);
      const episodes = order === 'the Honda first' ? [honda, toyota] : [toyota, honda];
      for (const episode of episodes) await recordEpisode(db, tenant, episode, now());
      await eraseEpisode(db, tenant, toyota.episodeId, { keyId: 'test' }, now());
      const after = now();
      for (const validAt of [after, SEPTEMBER_15, JULY_15]) {
        expect(
          await factsAt(tenant, names, validAt, after),
          `${order}: true on ${validAt.toISOString()}`,
        ).toEqual([hondaFromJuly]);
      }
    }
  });

  it('racing writers leave a history some order could', {
    timeout: 120_000,
  }, async () => {
    // Five replacing values of one subject and predicate, recorded all at once, each call
    // with its own instant (a few milliseconds apart, in a shuffled order, as on replicas
    // whose clocks and requests interleave). Whatever ran first, the view known at any
    // instant is the one the records up to that instant give: the latest value begun by
    // January 14th among those recorded by then, until the next one recorded by then.
    const JANUARY_14 = new Date('2026-01-14T00:00:00.000Z');
    const starts = [1, 6, 11, 16, 21].map((d) => new Date(Date.UTC(2026, 0, d)));
    for (let round = 0; round < 10; round++) {
      const tenant = freshTenant();
      const cities = starts.map((validAt, i) =>
        episodeInput([
          factInput('user', 'lives in', `city${i}`, { validAt, replaceExisting: true }),
        ]),
      );
      const names = new Map(cities.map((c, i) => [factOf(tenant, c), `city${i}`]));
      const base = Date.UTC(2027, 0, 1) + round * 60_000;
      const instants = shuffled(cities.map((_, i) => base + 3 * i));
      await Promise.all(
        cities.map((city, i) => recordEpisode(db, tenant, city, new Date(instants[i]!))),
      );
      const knownAts = [
        ...new Set([...instants.flatMap((t) => [t - 1, t, t + 1]), base + 3_600_000]),
      ].sort((a, b) => a - b);
      for (const knownAt of knownAts) {
        const recorded = starts
          .map((validAt, i) => ({ i, validAt, at: instants[i]! }))
          .filter((c) => c.at <= knownAt);
        const begun = recorded.filter((c) => c.validAt <= JANUARY_14);
        const current = begun.sort((a, b) => b.validAt.getTime() - a.validAt.getTime())[0];
        const next = recorded
          .filter((c) => c.validAt > JANUARY_14)
          .sort((a, b) => a.validAt.getTime() - b.validAt.getTime())[0];
        const expected: Shown[] = current
          ? [
              {
                fact: `city${current.i}`,
                validAt: current.validAt.toISOString(),
                validUntil: next?.validAt.toISOString() ?? null,
              },
            ]
          : [];
        const shown = await factsAt(tenant, names, JANUARY_14, new Date(knownAt));
        const what = `round ${round}, city0..city4 recorded at +${instants.map((t) => t - base).join(', +')} ms, known at +${knownAt - base} ms`;
        expect(shown.length, `${what}: at most one city`).toBeLessThanOrEqual(1);
        expect(shown, what).toEqual(expected);
      }
    }
  });
});

describe('import derives too', () => {
  it('"works at acme" then "works at globex", replacing, imported without derived fields: what recording them answers', async () => {
    const line = (factId: string, object: string, validAt: string, recordedAt: string) =>
      JSON.stringify({
        type: 'fact',
        dataset: 'imported',
        factId,
        subject: 'user',
        predicate: 'works at',
        object,
        confidence: 0.9,
        validAt,
        recordedAt,
        replaceExisting: true,
      });
    const acme = '00000000-0000-4000-8000-00000000a001';
    const globex = '00000000-0000-4000-8000-00000000a002';
    const outcome = await importJsonl(db, {
      workspace: 'derived history',
      now: new Date('2027-01-01T00:00:00.000Z'),
      content: [
        line(acme, 'acme', '2026-01-01T00:00:00.000Z', '2026-01-02T00:00:00.000Z'),
        line(globex, 'globex', '2026-06-01T00:00:00.000Z', '2026-06-02T00:00:00.000Z'),
      ].join('\n'),
    });
    expect(outcome.ok).toBe(true);

    // The same two recorded, at the same instants, on a dataset of their own.
    const recorded = freshTenant();
    const first = episodeInput([
      factInput('user', 'works at', 'acme', {
        validAt: new Date('2026-01-01T00:00:00.000Z'),
        replaceExisting: true,
      }),
    ]);
    const second = episodeInput([
      factInput('user', 'works at', 'globex', {
        validAt: new Date('2026-06-01T00:00:00.000Z'),
        replaceExisting: true,
      }),
    ]);
    await recordEpisode(db, recorded, first, new Date('2026-01-02T00:00:00.000Z'));
    await recordEpisode(db, recorded, second, new Date('2026-06-02T00:00:00.000Z'));

    const imported = testTenant('derived history', 'imported');
    const names = new Map([
      [acme, 'acme'],
      [globex, 'globex'],
      [factOf(recorded, first), 'acme'],
      [factOf(recorded, second), 'globex'],
    ]);
    for (const validAt of ['2026-03-01', '2026-07-01']) {
      for (const knownAt of ['2026-03-01', '2026-07-01', '2027-02-01']) {
        const at = [
          new Date(`${validAt}T00:00:00.000Z`),
          new Date(`${knownAt}T00:00:00.000Z`),
        ] as const;
        expect(await factsAt(imported, names, ...at), `${validAt} as known ${knownAt}`).toEqual(
          await factsAt(recorded, names, ...at),
        );
      }
    }
    // Acme, as known now: true until globex began, through its corrected version.
    expect(
      await factsAt(
        imported,
        names,
        new Date('2026-03-01T00:00:00.000Z'),
        new Date('2027-02-01T00:00:00.000Z'),
      ),
    ).toEqual([
      { fact: 'acme', validAt: '2026-01-01T00:00:00.000Z', validUntil: '2026-06-01T00:00:00.000Z' },
    ]);
  });
});

function shuffled<T>(items: T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}
