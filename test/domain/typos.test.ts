import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  deletions,
  editDistance,
  nearestTerms,
  typoDistanceFor,
  typoKeys,
} from '../../src/domain/typos.js';
import { propertySeed } from '../helpers/propertySeed.js';

describe('typos', () => {
  it('distance allowed: 1 for 5 to 7 characters, 2 for longer, never for short words or digits', () => {
    expect(typoDistanceFor('car')).toBe(0);
    expect(typoDistanceFor('plai')).toBe(0);
    expect(typoDistanceFor('toyta')).toBe(1);
    expect(typoDistanceFor('corolla')).toBe(1);
    expect(typoDistanceFor('saxophon')).toBe(2);
    expect(typoDistanceFor('20000')).toBe(0);
    expect(typoDistanceFor('a4paper')).toBe(0);
    expect(typoKeys('car')).toEqual([]);
    expect(typoKeys('20000')).toEqual([]);
  });

  it('edit distance counts insertions, deletions, substitutions and neighbour swaps as 1', () => {
    expect(editDistance('toyta', 'toyota')).toBe(1);
    expect(editDistance('hybird', 'hybrid')).toBe(1);
    expect(editDistance('saxaphonn', 'saxophon')).toBe(2);
    expect(editDistance('münchen', 'munchen')).toBe(1);
    expect(editDistance('', 'abc')).toBe(3);
  });

  it('nearest first, then in code-point order; never the word itself or a short term', () => {
    expect(nearestTerms('toyta', ['toyotb', 'toyota', 'toyt', 'toyta', 'tokyo'])).toEqual([
      { term: 'toyota', distance: 1 },
    ]);
    expect(nearestTerms('toyotta', ['toyotb', 'toyota', 'tokyo'])).toEqual([
      { term: 'toyota', distance: 1 },
    ]);
    expect(nearestTerms('hybird', ['hybrid', 'hybris', 'hybirds'])).toEqual([
      { term: 'hybirds', distance: 1 },
      { term: 'hybrid', distance: 1 },
    ]);
    expect(nearestTerms('cat', ['cats'])).toEqual([]);
  });

  it('a term within the distance always shares a deletion key with the word (symmetric deletion)', () => {
    const letters = fc.constantFrom(...'abcdeé');
    const word = fc.array(letters, { minLength: 5, maxLength: 10 }).map((cs) => cs.join(''));
    const edit = fc.tuple(
      fc.constantFrom('insert', 'delete', 'substitute', 'swap'),
      fc.nat(),
      letters,
    );
    let checked = 0;
    fc.assert(
      fc.property(word, fc.array(edit, { minLength: 1, maxLength: 2 }), (w, edits) => {
        const term = [...w];
        for (const [kind, at, c] of edits) {
          const i = at % (term.length + 1);
          if (kind === 'insert') term.splice(i, 0, c);
          else if (kind === 'delete' && term.length > 0) term.splice(i % term.length, 1);
          else if (kind === 'substitute' && term.length > 0) term[i % term.length] = c;
          else if (kind === 'swap' && term.length > 1) {
            const j = i % (term.length - 1);
            [term[j], term[j + 1]] = [term[j + 1]!, term[j]!];
          }
        }
        const t = term.join('');
        const distance = editDistance(w, t);
        const limit = typoDistanceFor(w);
        if (distance === 0 || distance > limit || typoKeys(t).length === 0) return;
        checked++;
        const keys = new Set(typoKeys(t));
        expect(
          deletions(w, limit).some((k) => keys.has(k)),
          `${w} ~ ${t}`,
        ).toBe(true);
        expect(nearestTerms(w, [t])).toEqual([{ term: t, distance }]);
      }),
      { numRuns: 2000, seed: propertySeed('typo keys') },
    );
    expect(checked).toBeGreaterThan(500);
  });
});
