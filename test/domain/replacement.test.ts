import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  boundedValidUntil,
  compareTimeline,
  replacedFacts,
  type TimelineFact,
} from '../../src/domain/replacement.js';

/** The rule of replaceExisting (src/domain/replacement.ts), without a database. */

const day = (n: number) => new Date(Date.UTC(2026, 0, 1 + n));
const fact = (id: string, more: Partial<TimelineFact> = {}): TimelineFact => ({
  factId: id,
  episodeId: `episode of ${id}`,
  validAt: day(0),
  validUntil: null,
  recordedAt: day(100),
  replaceExisting: true,
  ...more,
});

describe('the order: validAt, then recordedAt, then factId', () => {
  it('each breaks the ties of the one before', () => {
    const facts = [
      fact('b', { validAt: day(1), recordedAt: day(5) }),
      fact('a', { validAt: day(1), recordedAt: day(5) }),
      fact('c', { validAt: day(1), recordedAt: day(4) }),
      fact('d', { validAt: day(0), recordedAt: day(9) }),
    ];
    expect([...facts].sort(compareTimeline).map((f) => f.factId)).toEqual(['d', 'c', 'a', 'b']);
  });
});

describe('boundedValidUntil: a replacing fact ends where the next one begins', () => {
  it('the earliest strictly later validAt, or its own validUntil if earlier', () => {
    const f = { validAt: day(10), validUntil: null };
    expect(boundedValidUntil(f, [])).toBeNull();
    expect(boundedValidUntil(f, [{ validAt: day(30) }, { validAt: day(20) }])).toEqual(day(20));
    // Earlier and equal validAt do not bound it (an empty validity would be no fact).
    expect(boundedValidUntil(f, [{ validAt: day(5) }, { validAt: day(10) }])).toBeNull();
    expect(
      boundedValidUntil({ validAt: day(10), validUntil: day(15) }, [{ validAt: day(20) }]),
    ).toEqual(day(15));
    expect(
      boundedValidUntil({ validAt: day(10), validUntil: day(25) }, [{ validAt: day(20) }]),
    ).toEqual(day(20));
  });
});

describe('replacedFacts: who supersedes whom', () => {
  it('a fact before a replacing fact of another episode, overlapping it, is superseded by the first such fact', () => {
    const replaced = replacedFacts([
      fact('old', { validAt: day(0), replaceExisting: false }),
      fact('mid', { validAt: day(5) }),
      fact('new', { validAt: day(9) }),
    ]);
    expect(Object.fromEntries(replaced)).toEqual({ old: 'mid', mid: 'new' });
  });

  it('a fact that ends before the replacing one begins, or is after it, is kept', () => {
    const replaced = replacedFacts([
      fact('ended', { validAt: day(0), validUntil: day(5), replaceExisting: false }),
      fact('bounded', { validAt: day(5), validUntil: day(6) }),
      fact('replacing', { validAt: day(6) }),
      fact('later', { validAt: day(9), replaceExisting: false }),
    ]);
    expect(Object.fromEntries(replaced)).toEqual({});
  });

  it('only replaceExisting facts replace; facts of one episode never replace each other', () => {
    expect(
      Object.fromEntries(
        replacedFacts([
          fact('a', { validAt: day(0) }),
          fact('b', { validAt: day(1), replaceExisting: false }),
          fact('c', { validAt: day(2), episodeId: 'one' }),
          fact('d', { validAt: day(3), episodeId: 'one' }),
        ]),
      ),
    ).toEqual({ a: 'c', b: 'c' });
  });

  it('ties in validAt: the later recordedAt, then the greater factId, wins', () => {
    const replaced = replacedFacts([
      fact('x', { recordedAt: day(1) }),
      fact('z', { recordedAt: day(2) }),
      fact('y', { recordedAt: day(2) }),
    ]);
    expect(Object.fromEntries(replaced)).toEqual({ x: 'y', y: 'z' });
  });

  it('on any believed set of replacing facts from different episodes, applying it leaves one open fact, the latest, and no overlap', () => {
    const arbitraryFact = fc.record({
      validAt: fc.integer({ min: 0, max: 20 }),
      length: fc.option(fc.integer({ min: 1, max: 10 }), { nil: null }),
      recordedAt: fc.integer({ min: 0, max: 3 }),
    });
    fc.assert(
      fc.property(fc.array(arbitraryFact, { minLength: 1, maxLength: 12 }), (specs) => {
        // The latest is open-ended, as a replacing fact nothing follows is stored.
        const facts = specs.map((s, i) =>
          fact(`f${String(i).padStart(2, '0')}`, {
            validAt: day(s.validAt),
            validUntil: s.length === null ? null : day(s.validAt + s.length),
            recordedAt: day(100 + s.recordedAt),
          }),
        );
        const ordered = [...facts].sort(compareTimeline);
        ordered[ordered.length - 1] = { ...ordered.at(-1)!, validUntil: null };
        const replaced = replacedFacts(ordered);
        const left = ordered.filter((f) => !replaced.has(f.factId));
        expect(left.at(-1)).toBe(ordered.at(-1));
        expect(left.filter((f) => f.validUntil === null)).toEqual([ordered.at(-1)]);
        for (let i = 0; i + 1 < left.length; i++) {
          expect(left[i]!.validUntil!.getTime()).toBeLessThanOrEqual(
            left[i + 1]!.validAt.getTime(),
          );
        }
        // Every successor comes later in the order.
        const rank = new Map(ordered.map((f, i) => [f.factId, i]));
        for (const [from, to] of replaced) expect(rank.get(to)!).toBeGreaterThan(rank.get(from)!);
      }),
    );
  });
});
