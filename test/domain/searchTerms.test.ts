import { describe, expect, it } from 'vitest';
import { factRecallTerms, recallTerms } from '../../src/domain/recallTerms.js';
import { MAX_QUERY_LENGTH, words } from '../../src/domain/searchTerms.js';

const COMPOSED = 'caf\u00e9'; // "café" with U+00E9
const DECOMPOSED = 'cafe\u0301'; // "café" as e + U+0301 COMBINING ACUTE ACCENT

const terms = (subject: string, predicate: string, object: string) =>
  factRecallTerms({ subject, predicate, object });

/** The distinct words of a text, in first-seen order. */
const searchTerms = (text: string) => [...new Set(words(text))];

describe('words', () => {
  it('lower-cases words', () => {
    expect(searchTerms('Alice LIKES Tea')).toEqual(['alice', 'likes', 'tea']);
    expect(searchTerms('CAFÉ')).toEqual([COMPOSED]);
  });

  it('keeps accents: "café" and "cafe" are different words', () => {
    expect(searchTerms('café cafe')).toEqual([COMPOSED, 'cafe']);
    expect(searchTerms('Zoë')).not.toEqual(searchTerms('Zoe'));
  });

  it('normalises to NFC: a decomposed "é" is the same word as a composed one', () => {
    expect(DECOMPOSED).not.toBe(COMPOSED);
    expect(searchTerms(DECOMPOSED)).toEqual([COMPOSED]);
    expect(searchTerms(`${COMPOSED} ${DECOMPOSED} CAFE\u0301`)).toEqual([COMPOSED]);
  });

  it('splits on punctuation, spaces and symbols', () => {
    expect(searchTerms("it's user_42, don't-stop: a.b/c")).toEqual([
      'it',
      's',
      'user',
      '42',
      'don',
      't',
      'stop',
      'a',
      'b',
      'c',
    ]);
    expect(searchTerms('tea+milk&sugar')).toEqual(['tea', 'milk', 'sugar']);
    expect(searchTerms('\ttea\n\nmilk  ')).toEqual(['tea', 'milk']);
  });

  it('keeps digits as words, alone or inside words', () => {
    expect(searchTerms('3.14 room101 2026-06-01')).toEqual([
      '3',
      '14',
      'room101',
      '2026',
      '06',
      '01',
    ]);
  });

  it('handles non-Latin scripts', () => {
    expect(searchTerms('東京 タワー')).toEqual(['東京', 'タワー']);
    expect(searchTerms('Москва МОСКВА')).toEqual(['москва']);
    expect(searchTerms('ΣΟΦΊΑ σοφία')).toEqual(['σοφία']);
    expect(searchTerms('مرحبا بالعالم')).toEqual(['مرحبا', 'بالعالم']);
    expect(searchTerms('नमस्ते')).toEqual(['नमस्ते']);
  });

  it('returns distinct words in first-seen order', () => {
    expect(searchTerms('b a B c A')).toEqual(['b', 'a', 'c']);
  });

  it('gives no words for empty or punctuation-only text', () => {
    expect(searchTerms('')).toEqual([]);
    expect(searchTerms('   ')).toEqual([]);
    expect(searchTerms('?!… — ,.;:"\'()[]{}')).toEqual([]);
  });

  it('the query limit is 1000 characters', () => {
    expect(MAX_QUERY_LENGTH).toBe(1000);
  });
});

/**
 * What `q` matches, as the store's filter asks it (store/factFilters.ts, queryFilter):
 * every analyzed term of `q` among the fact's stored recall terms (full text: stemmed,
 * English stop words left out).
 */
const matchesQuery = (factTerms: readonly string[], q: string) =>
  recallTerms(q).every((term) => factTerms.includes(term));

describe('q matches a fact', () => {
  const fact = terms('Alice', 'works at', `${DECOMPOSED} Rouge, Paris 75001`);

  it('is case-insensitive', () => {
    expect(matchesQuery(fact, 'ALICE')).toBe(true);
    expect(matchesQuery(fact, 'alice')).toBe(true);
    expect(matchesQuery(fact, 'CAFÉ')).toBe(true);
  });

  it('needs every term, in any order, as full text: stems match, stop words do not count', () => {
    expect(matchesQuery(fact, 'rouge alice')).toBe(true);
    expect(matchesQuery(fact, 'alice works at café rouge paris 75001')).toBe(true);
    expect(matchesQuery(fact, 'alice bob')).toBe(false);
    expect(matchesQuery(fact, 'ali')).toBe(false);
    expect(matchesQuery(fact, 'work')).toBe(true);
    expect(matchesQuery(fact, 'working')).toBe(true);
    expect(matchesQuery(fact, '7500')).toBe(false);
    const interest = terms('user', 'is interested in', 'toyota corolla hybrid');
    expect(matchesQuery(interest, 'interest')).toBe(true);
    expect(matchesQuery(interest, 'interests in hybrids')).toBe(true);
    expect(matchesQuery(terms('user', 'owns', 'a car'), 'cars')).toBe(true);
    expect(matchesQuery(terms('user', 'owns', 'a car'), 'cart')).toBe(false);
  });

  it('is accent-sensitive but NFC-insensitive', () => {
    expect(matchesQuery(fact, 'cafe')).toBe(false);
    expect(matchesQuery(fact, COMPOSED)).toBe(true);
    expect(matchesQuery(fact, DECOMPOSED)).toBe(true);
    expect(matchesQuery(terms('Bob', 'likes', 'cafe'), COMPOSED)).toBe(false);
    expect(matchesQuery(terms('Bob', 'likes', 'cafe'), 'CAFE')).toBe(true);
  });

  it('treats punctuation in q as a separator', () => {
    expect(matchesQuery(fact, 'alice,rouge!')).toBe(true);
    expect(matchesQuery(fact, '"works-at"')).toBe(true);
    expect(matchesQuery(terms('user_42', 'likes', 'tea'), 'user 42')).toBe(true);
    expect(matchesQuery(terms('user_42', 'likes', 'tea'), 'user_42')).toBe(true);
    expect(matchesQuery(terms('user42', 'likes', 'tea'), 'user_42')).toBe(false);
  });

  it('matches non-Latin words whole', () => {
    const tokyo = terms('東京', 'は', 'МОСКВА');
    expect(matchesQuery(tokyo, '東京')).toBe(true);
    expect(matchesQuery(tokyo, 'москва')).toBe(true);
    expect(matchesQuery(tokyo, '東')).toBe(false);
  });

  it('a q with no terms (empty, punctuation, stop words only) matches everything', () => {
    expect(matchesQuery(fact, '')).toBe(true);
    expect(matchesQuery(fact, '  ?!…,.  ')).toBe(true);
    expect(matchesQuery(fact, 'the of and')).toBe(true);
    expect(matchesQuery([], '—')).toBe(true);
    expect(matchesQuery([], 'x')).toBe(false);
  });
});
