import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  FACT_STATES,
  type FactTimes,
  factStateAt,
  factStateAtPoint,
  matchesBitemporal,
  resolveTemporalSelection,
} from '../../src/domain/factState.js';
import { propertySeed } from '../helpers/propertySeed.js';

const T0 = Date.UTC(2026, 0, 1);
const DAY = 86_400_000;
/** Day `n` after 2026-01-01, plus `ms` milliseconds. */
const day = (n: number, ms = 0): Date => new Date(T0 + n * DAY + ms);

const fact = (times: Partial<FactTimes> = {}): FactTimes => ({
  validAt: day(10),
  validUntil: null,
  recordedAt: day(10),
  invalidAt: null,
  ...times,
});

describe('factStateAt', () => {
  it('gives each of the four states', () => {
    const f = fact({ validAt: day(10), validUntil: day(20), invalidAt: day(30) });
    expect(factStateAt(f, day(5))).toBe('future');
    expect(factStateAt(f, day(15))).toBe('live');
    expect(factStateAt(f, day(25))).toBe('expired');
    expect(factStateAt(f, day(35))).toBe('superseded');
  });

  it('checks superseded first: it wins over future and expired', () => {
    const invalidatedEarly = fact({ validAt: day(10), validUntil: day(20), invalidAt: day(2) });
    expect(factStateAt(invalidatedEarly, day(5))).toBe('superseded'); // also future
    expect(factStateAt(invalidatedEarly, day(15))).toBe('superseded'); // also live
    expect(factStateAt(invalidatedEarly, day(25))).toBe('superseded'); // also expired
  });

  it('checks future before expired', () => {
    // Not a valid stored interval (validUntil <= validAt), but the order is the rule.
    const inverted = fact({ validAt: day(10), validUntil: day(5) });
    expect(factStateAt(inverted, day(7))).toBe('future');
    expect(factStateAt(inverted, day(12))).toBe('expired');
  });

  it('is superseded from the instant invalidAt == t on', () => {
    const f = fact({ validAt: day(0), invalidAt: day(5) });
    expect(factStateAt(f, day(5, -1))).toBe('live');
    expect(factStateAt(f, day(5))).toBe('superseded');
    expect(factStateAt(f, day(5, 1))).toBe('superseded');
  });

  it('is not future at validAt == t', () => {
    const f = fact({ validAt: day(5) });
    expect(factStateAt(f, day(5, -1))).toBe('future');
    expect(factStateAt(f, day(5))).toBe('live');
  });

  it('is expired from the instant validUntil == t on', () => {
    const f = fact({ validAt: day(0), validUntil: day(5) });
    expect(factStateAt(f, day(5, -1))).toBe('live');
    expect(factStateAt(f, day(5))).toBe('expired');
    expect(factStateAt(f, day(5, 1))).toBe('expired');
  });

  it('with validAt == validUntil == invalidAt == t, superseded wins', () => {
    const f = fact({ validAt: day(5), validUntil: day(5), invalidAt: day(5) });
    expect(factStateAt(f, day(5))).toBe('superseded');
  });

  it('open intervals: null validUntil never expires, null invalidAt is never superseded', () => {
    const f = fact({ validAt: day(0), validUntil: null, invalidAt: null });
    expect(factStateAt(f, day(100_000))).toBe('live');
    expect(factStateAt(f, day(-1))).toBe('future');
  });

  it('ignores recordedAt (the state table is about validity and invalidation only)', () => {
    const f = fact({ validAt: day(0), recordedAt: day(50) });
    expect(factStateAt(f, day(10))).toBe('live');
  });

  it('agrees with the state table of docs/TEMPORAL_MODEL.md on random facts and instants', () => {
    const instant = fc.integer({ min: -5, max: 5 }).map((n) => day(0, n));
    fc.assert(
      fc.property(
        instant,
        fc.option(instant),
        instant,
        fc.option(instant),
        instant,
        (validAt, validUntil, recordedAt, invalidAt, t) => {
          const f = { validAt, validUntil, recordedAt, invalidAt };
          const superseded = invalidAt !== null && invalidAt <= t;
          const future = validAt > t;
          const expired = validUntil !== null && validUntil <= t;
          const expected = superseded
            ? 'superseded'
            : future
              ? 'future'
              : expired
                ? 'expired'
                : 'live';
          const state = factStateAt(f, t);
          expect(state).toBe(expected);
          expect(FACT_STATES).toContain(state);
        },
      ),
      { numRuns: 2000, seed: propertySeed('fact states') },
    );
  });
});

describe('factStateAtPoint (validAt T, knownAt K)', () => {
  // Valid on days 10..20, invalidated on day 30.
  const f = fact({ validAt: day(10), validUntil: day(20), invalidAt: day(30) });

  it('K alone decides SUPERSEDED, from invalidAt == K on, whatever T says', () => {
    for (const t of [day(5), day(15), day(25)]) {
      expect(factStateAtPoint(f, t, day(30, -1))).not.toBe('superseded');
      expect(factStateAtPoint(f, t, day(30))).toBe('superseded');
      expect(factStateAtPoint(f, t, day(30, 1))).toBe('superseded');
    }
  });

  it('T alone decides FUTURE, LIVE and EXPIRED while K is before invalidAt', () => {
    const k = day(29);
    expect(factStateAtPoint(f, day(10, -1), k)).toBe('future');
    expect(factStateAtPoint(f, day(10), k)).toBe('live'); // validAt == T is not future
    expect(factStateAtPoint(f, day(20, -1), k)).toBe('live');
    expect(factStateAtPoint(f, day(20), k)).toBe('expired'); // validUntil == T is expired
    // The same T read with a K after invalidAt is superseded instead.
    expect(factStateAtPoint(f, day(15), day(35))).toBe('superseded');
  });

  it('corrected history and audit: the two axes apart', () => {
    // Valid at day 15 as known on day 35: superseded (the store no longer believes it) ...
    expect(factStateAtPoint(f, day(15), day(35))).toBe('superseded');
    // ... valid on day 35 as known on day 15: expired in the world, still believed.
    expect(factStateAtPoint(f, day(35), day(15))).toBe('expired');
    // ... valid on day 5 as known on day 15: not valid yet.
    expect(factStateAtPoint(f, day(5), day(15))).toBe('future');
  });

  it('ignores recordedAt, like factStateAt', () => {
    const late = fact({ validAt: day(0), recordedAt: day(50) });
    expect(factStateAtPoint(late, day(10), day(10))).toBe('live');
  });

  it('factStateAt(fact, t) is the case T = K = t, and the table holds on each axis', () => {
    const instant = fc.integer({ min: -5, max: 5 }).map((n) => day(0, n));
    fc.assert(
      fc.property(
        instant,
        fc.option(instant),
        instant,
        fc.option(instant),
        instant,
        instant,
        (validAt, validUntil, recordedAt, invalidAt, t, k) => {
          const f = { validAt, validUntil, recordedAt, invalidAt };
          expect(factStateAtPoint(f, t, t)).toBe(factStateAt(f, t));
          const expected =
            invalidAt !== null && invalidAt <= k
              ? 'superseded'
              : validAt > t
                ? 'future'
                : validUntil !== null && validUntil <= t
                  ? 'expired'
                  : 'live';
          expect(factStateAtPoint(f, t, k)).toBe(expected);
        },
      ),
      { numRuns: 2000, seed: propertySeed('fact states at a point') },
    );
  });
});

describe('matchesBitemporal', () => {
  const f = fact({
    validAt: day(10),
    validUntil: day(20),
    recordedAt: day(15),
    invalidAt: day(25),
  });

  it('valid-time axis alone: [validAt, validUntil) contains T', () => {
    const k = day(17); // known at K
    expect(matchesBitemporal(f, day(10, -1), k)).toBe(false);
    expect(matchesBitemporal(f, day(10), k)).toBe(true); // validAt == T matches
    expect(matchesBitemporal(f, day(20, -1), k)).toBe(true);
    expect(matchesBitemporal(f, day(20), k)).toBe(false); // validUntil == T does not
  });

  it('transaction-time axis alone: [recordedAt, invalidAt) contains K', () => {
    const t = day(12); // valid at T
    expect(matchesBitemporal(f, t, day(15, -1))).toBe(false);
    expect(matchesBitemporal(f, t, day(15))).toBe(true); // recordedAt == K matches
    expect(matchesBitemporal(f, t, day(25, -1))).toBe(true);
    expect(matchesBitemporal(f, t, day(25))).toBe(false); // invalidAt == K does not
  });

  it('both axes: corrected history differs from audit', () => {
    // Valid from day 10, but only recorded on day 15: at T = day 12 ...
    // ... what we know now (K = day 17) says it was true;
    expect(matchesBitemporal(f, day(12), day(17))).toBe(true);
    // ... what the store believed on day 12 does not contain it yet;
    expect(matchesBitemporal(f, day(12), day(12))).toBe(false);
    // ... and after its invalidation (K = day 30) it is not believed any more.
    expect(matchesBitemporal(f, day(12), day(30))).toBe(false);
    // Expired in the world on day 20, though still believed on day 22.
    expect(matchesBitemporal(f, day(22), day(22))).toBe(false);
  });

  it('open intervals match any later point', () => {
    const open = fact({ validAt: day(0), recordedAt: day(0) });
    expect(matchesBitemporal(open, day(100_000), day(100_000))).toBe(true);
    expect(matchesBitemporal(open, day(-1), day(100_000))).toBe(false);
    expect(matchesBitemporal(open, day(100_000), day(-1))).toBe(false);
  });

  it('at T = K = t it is "live at t" and "recorded by t"', () => {
    const instant = fc.integer({ min: -4, max: 4 }).map((n) => day(0, n));
    fc.assert(
      fc.property(
        instant,
        fc.option(instant),
        instant,
        fc.option(instant),
        instant,
        (validAt, validUntil, recordedAt, invalidAt, t) => {
          const f = { validAt, validUntil, recordedAt, invalidAt };
          expect(matchesBitemporal(f, t, t)).toBe(
            factStateAt(f, t) === 'live' && recordedAt.getTime() <= t.getTime(),
          );
        },
      ),
      { numRuns: 2000, seed: propertySeed('matchesBitemporal') },
    );
  });
});

describe('resolveTemporalSelection', () => {
  const now = day(100);
  const t = day(3);
  const k = day(7);
  const point = (validAt: Date, knownAt: Date) => ({ kind: 'point', validAt, knownAt });
  const EPISODE = '0b7d3c1e-5a2f-4c8e-9d14-6f3a2b1c0e9d';

  it('defaults to live now', () => {
    expect(resolveTemporalSelection({}, now)).toEqual(point(now, now));
    expect(
      resolveTemporalSelection(
        { includeInvalidated: false, asOf: null, validAt: null, knownAt: null, episodeId: null },
        now,
      ),
    ).toEqual(point(now, now));
  });

  it('includeInvalidated selects every fact', () => {
    expect(resolveTemporalSelection({ includeInvalidated: true }, now)).toEqual({ kind: 'all' });
  });

  it('asOf sets both axes and overrides includeInvalidated', () => {
    expect(resolveTemporalSelection({ asOf: t }, now)).toEqual(point(t, t));
    expect(resolveTemporalSelection({ asOf: t, includeInvalidated: true }, now)).toEqual(
      point(t, t),
    );
  });

  it('validAt alone defaults knownAt to now (corrected history)', () => {
    expect(resolveTemporalSelection({ validAt: t }, now)).toEqual(point(t, now));
  });

  it('knownAt alone defaults validAt to now (audit)', () => {
    expect(resolveTemporalSelection({ knownAt: k }, now)).toEqual(point(now, k));
  });

  it('validAt and knownAt together give that point', () => {
    expect(resolveTemporalSelection({ validAt: t, knownAt: k }, now)).toEqual(point(t, k));
  });

  it('episodeId alone selects every fact, whatever its state', () => {
    expect(resolveTemporalSelection({ episodeId: EPISODE }, now)).toEqual({ kind: 'all' });
  });

  it('asOf with episodeId gives the point', () => {
    expect(resolveTemporalSelection({ episodeId: EPISODE, asOf: t }, now)).toEqual(point(t, t));
    expect(
      resolveTemporalSelection({ episodeId: EPISODE, asOf: t, includeInvalidated: true }, now),
    ).toEqual(point(t, t));
  });

  it('an explicit validAt / knownAt point also wins over episodeId and includeInvalidated', () => {
    // The temporal model names only asOf here; the implementation treats every explicit point alike.
    expect(resolveTemporalSelection({ episodeId: EPISODE, validAt: t }, now)).toEqual(
      point(t, now),
    );
    expect(resolveTemporalSelection({ includeInvalidated: true, knownAt: k }, now)).toEqual(
      point(now, k),
    );
  });
});
