import { describe, expect, it } from 'vitest';
import {
  type AssertedFact,
  derivePairHistory,
  type FactRun,
  type PairRecord,
} from '../../src/domain/pairHistory.js';

/**
 * The pure function behind every write path (docs/TEMPORAL_MODEL.md, "The history is
 * derived"), on the cases its rules were written for; test/writes/derivedHistory.*.test.ts
 * check it through the store against a reference model of their own.
 */

const day = (d: string) => new Date(`2026-${d}T00:00:00.000Z`);
const at = (minute: number) => new Date(Date.UTC(2027, 0, 1, 0, minute));

const fact = (factId: string, validAt: string, more: Partial<AssertedFact> = {}): PairRecord => ({
  kind: 'asserted',
  fact: {
    factId,
    episodeId: `episode-${factId}`,
    validAt: day(validAt),
    validUntil: null,
    replaceExisting: true,
    at: at(0),
    ...more,
  },
});

/** The runs as `id: validAt..validUntil [recordedAt, invalidAt) reason`, in a short form. */
const show = (runs: FactRun[]) =>
  runs.map(
    (r) =>
      `${r.factId}${r.correctionOf ? `'${r.startedBy === 'restore' ? 'r' : 'c'}` : ''} ` +
      `${r.validAt.toISOString().slice(5, 10)}..${r.validUntil?.toISOString().slice(5, 10) ?? 'open'} ` +
      `[${r.recordedAt.getUTCMinutes()},${r.invalidAt?.getUTCMinutes() ?? '-'}) ${r.invalidReason ?? ''}`.trim(),
  );

describe('derivePairHistory', () => {
  it('a value that changed: the old one superseded, with a version ending where the new begins', () => {
    const runs = derivePairHistory([
      fact('honda', '07-01', { at: at(1) }),
      fact('toyota', '08-16', { at: at(2) }),
    ]);
    expect(show(runs)).toEqual([
      'honda 07-01..open [1,2) superseded',
      "honda'c 07-01..08-16 [2,-)",
      'toyota 08-16..open [2,-)',
    ]);
    expect(runs[0]!.supersededBy).toBe('toyota');
    expect(runs[1]).toMatchObject({ correctionOf: 'honda', correctedBy: 'toyota' });
  });

  it('the same two, the old value arriving late: bounded on arrival', () => {
    expect(
      show(
        derivePairHistory([
          fact('toyota', '08-16', { at: at(1) }),
          fact('honda', '07-01', { at: at(2) }),
        ]),
      ),
    ).toEqual(['honda 07-01..08-16 [2,-)', 'toyota 08-16..open [1,-)']);
  });

  it('a delete ends the believed version; a restore begins a new one; a later erasure leaves the delete', () => {
    const honda = fact('honda', '07-01', { at: at(1) });
    const deleted: PairRecord = { kind: 'deleted', factId: 'honda', at: at(3) };
    const withToyota = derivePairHistory([honda, fact('toyota', '08-16', { at: at(2) }), deleted]);
    expect(show(withToyota)).toEqual([
      'honda 07-01..open [1,2) superseded',
      "honda'c 07-01..08-16 [2,3) deleted",
      'toyota 08-16..open [2,-)',
    ]);
    // The Toyota's episode erased: its record goes, the delete stays.
    expect(show(derivePairHistory([honda, deleted]))).toEqual(['honda 07-01..open [1,3) deleted']);
    const restored = derivePairHistory([
      honda,
      deleted,
      { kind: 'restored', factId: 'honda', at: at(5) },
    ]);
    expect(show(restored)).toEqual([
      'honda 07-01..open [1,3) deleted',
      "honda'r 07-01..open [5,-)",
    ]);
  });

  it('a fact said wrong is believed nowhere after, with no version, whatever came before', () => {
    const runs = derivePairHistory([
      fact('honda', '07-01', { at: at(1) }),
      fact('toyota', '08-16', { at: at(2) }),
      { kind: 'saidWrong', factId: 'honda', by: 'bike', at: at(4) },
    ]);
    expect(show(runs)).toEqual([
      'honda 07-01..open [1,2) superseded',
      "honda'c 07-01..08-16 [2,4) superseded",
      'toyota 08-16..open [2,-)',
    ]);
    expect(runs[1]!.supersededBy).toBe('bike');
  });

  it('facts without replaceExisting are ended by a replacing one and end nothing', () => {
    const runs = derivePairHistory([
      fact('likes-tea', '07-01', { at: at(1), replaceExisting: false }),
      fact('likes-coffee', '07-05', { at: at(2), replaceExisting: false }),
      fact('likes-only-water', '08-01', { at: at(3) }),
    ]);
    expect(show(runs)).toEqual([
      'likes-tea 07-01..open [1,3) superseded',
      "likes-tea'c 07-01..08-01 [3,-)",
      'likes-coffee 07-05..open [2,3) superseded',
      "likes-coffee'c 07-05..08-01 [3,-)",
      'likes-only-water 08-01..open [3,-)',
    ]);
  });

  it('a successor from the same instant leaves a fact no time: superseded at once, no version', () => {
    const runs = derivePairHistory([
      fact('a', '07-01', { at: at(1) }),
      fact('b', '07-01', { at: at(2) }),
    ]);
    expect(show(runs)).toEqual(['a 07-01..open [1,2) superseded', 'b 07-01..open [2,-)']);
  });

  it('the same records in any order give the same history', () => {
    const records: PairRecord[] = [
      fact('a', '07-01', { at: at(1) }),
      fact('b', '07-10', { at: at(4) }),
      fact('c', '07-05', { at: at(2), replaceExisting: false }),
      { kind: 'deleted', factId: 'c', at: at(6) },
      { kind: 'restored', factId: 'c', at: at(7) },
      fact('d', '07-20', { at: at(3) }),
    ];
    const expected = show(derivePairHistory(records));
    for (let i = 0; i < 20; i++) {
      const shuffled = [...records].sort(() => Math.random() - 0.5);
      expect(show(derivePairHistory(shuffled))).toEqual(expected);
    }
  });
});
