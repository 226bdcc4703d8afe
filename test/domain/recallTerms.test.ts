import { describe, expect, it } from 'vitest';
import { factRecallTerms, recallTerms } from '../../src/domain/recallTerms.js';

describe('recall text analysis', () => {
  it('stems words, so a form of a word finds the others', () => {
    expect(recallTerms('peanuts')).toEqual(recallTerms('peanut'));
    expect(recallTerms('interested')).toEqual(recallTerms('interest'));
    expect(recallTerms('cars')).toEqual(['car']);
    expect(recallTerms('Driving DRIVES drive')).toEqual(['drive']);
  });

  it('drops English stop words; a text of stop words only has no terms', () => {
    expect(recallTerms('the car of the user')).toEqual(['car', 'user']);
    expect(recallTerms('what is the')).toEqual([]);
    expect(recallTerms('')).toEqual([]);
    expect(recallTerms('?!')).toEqual([]);
  });

  it('keeps accents, and reads a decomposed accent as the composed one', () => {
    expect(recallTerms('Café')).toEqual(['café']);
    expect(recallTerms('cafe\u0301')).toEqual(['café']);
    expect(recallTerms('cafe')).not.toEqual(recallTerms('café'));
  });

  it("a fact's terms are those of its subject, predicate and object together", () => {
    expect(
      factRecallTerms({ subject: 'User', predicate: 'is interested in', object: 'Toyota Corolla' }),
    ).toEqual(['user', 'interest', 'toyota', 'corolla']);
  });
});
