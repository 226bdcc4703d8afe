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
  believed: true,
  ...more,
});
/** Who supersedes whom, without the corrected versions' ends. */
const successors = (facts: TimelineFact[]) =>
  Object.fromEntries([...replacedFacts(facts)].map(([id, r]) => [id, r.by]));

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

describe('boundedValidUntil: a new fact ends where its earliest successor begins', () => {
  const other = (validAt: Date, replaceExisting = true) => ({
    validAt,
    episodeId: 'other',
    replaceExisting,
  });
  const own = (validAt: Date) => ({ validAt, episodeId: 'own', replaceExisting: false });
  const f = { validAt: day(10), validUntil: null, episodeId: 'own', replaceExisting: true };

  it('the earliest strictly later successor, or its own validUntil if earlier', () => {
    expect(boundedValidUntil(f, [])).toBeNull();
    expect(boundedValidUntil(f, [other(day(30)), other(day(20))])).toEqual(day(20));
    // Earlier and equal validAt do not bound it (an empty validity would be no fact).
    expect(boundedValidUntil(f, [other(day(5)), other(day(10))])).toBeNull();
    expect(boundedValidUntil({ ...f, validUntil: day(15) }, [other(day(20))])).toEqual(day(15));
    expect(boundedValidUntil({ ...f, validUntil: day(25) }, [other(day(20))])).toEqual(day(20));
  });

  it("another episode's fact bounds only if it replaces; the episode's own facts bound a replacing fact only", () => {
    expect(boundedValidUntil(f, [other(day(20), false)])).toBeNull();
    expect(boundedValidUntil(f, [own(day(20))])).toEqual(day(20));
    const plain = { ...f, replaceExisting: false };
    expect(boundedValidUntil(plain, [own(day(20))])).toBeNull();
    expect(boundedValidUntil(plain, [other(day(20))])).toEqual(day(20));
  });
});

describe('replacedFacts: who supersedes whom', () => {
  it('a fact before a replacing fact of another episode, overlapping it, is superseded by the first such fact', () => {
    const replaced = replacedFacts([
      fact('old', { validAt: day(0), replaceExisting: false }),
      fact('mid', { validAt: day(5) }),
      fact('new', { validAt: day(9) }),
    ]);
    // Each began before its successor: true until it began (its corrected version's end).
    expect(Object.fromEntries(replaced)).toEqual({
      old: { by: 'mid', correctedUntil: day(5) },
      mid: { by: 'new', correctedUntil: day(9) },
    });
  });

  it('a fact that begins with its successor has no corrected version (it was never the value alone)', () => {
    expect(
      Object.fromEntries(replacedFacts([fact('x', { recordedAt: day(1) }), fact('y')])),
    ).toEqual({ x: { by: 'y', correctedUntil: null } });
  });

  it('only believed facts are superseded; every fact is a successor, believed or not', () => {
    expect(
      successors([
        fact('old', { validAt: day(0) }),
        fact('wrong', { validAt: day(5), believed: false }),
        fact('gone', { validAt: day(1), believed: false, replaceExisting: false }),
      ]),
    ).toEqual({ old: 'wrong' });
  });

  it('a fact that ends before the replacing one begins, or is after it, is kept', () => {
    expect(
      successors([
        fact('ended', { validAt: day(0), validUntil: day(5), replaceExisting: false }),
        fact('bounded', { validAt: day(5), validUntil: day(6) }),
        fact('replacing', { validAt: day(6) }),
        fact('later', { validAt: day(9), replaceExisting: false }),
      ]),
    ).toEqual({});
  });

  it('only replaceExisting facts replace; facts of one episode never replace each other', () => {
    expect(
      successors([
        fact('a', { validAt: day(0) }),
        fact('b', { validAt: day(1), replaceExisting: false }),
        fact('c', { validAt: day(2), episodeId: 'one' }),
        fact('d', { validAt: day(3), episodeId: 'one' }),
      ]),
    ).toEqual({ a: 'c', b: 'c' });
  });

  it('ties in validAt: the later recordedAt, then the greater factId, wins', () => {
    expect(
      successors([
        fact('x', { recordedAt: day(1) }),
        fact('z', { recordedAt: day(2) }),
        fact('y', { recordedAt: day(2) }),
      ]),
    ).toEqual({ x: 'y', y: 'z' });
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
        for (const [from, { by: to }] of replaced)
          expect(rank.get(to)!).toBeGreaterThan(rank.get(from)!);
      }),
    );
  });
});
