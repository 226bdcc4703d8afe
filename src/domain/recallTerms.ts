import { stemmer } from 'stemmer';
import { eng } from 'stopword';
import { searchTerms } from './searchTerms.js';

/**
 * Text analysis for recall, shared by what is stored and what is asked: the words of
 * `searchTerms` (runs of letters, marks and digits; NFC; lower case; accents kept), minus
 * English stop words, each reduced to its stem by the Porter stemmer (`peanuts` and
 * `peanut` are both `peanut`, `interested` is `interest`). Words with letters outside a-z
 * keep their accents (`café`, `müller`): the stemmer leaves what it does not know.
 */

const STOP_WORDS = new Set(eng);

/** The analyzed terms of a text, distinct, in first-seen order. */
export function recallTerms(text: string): string[] {
  const terms = new Set<string>();
  for (const word of searchTerms(text)) {
    if (STOP_WORDS.has(word)) continue;
    terms.add(stemmer(word));
  }
  return [...terms];
}

/** The terms stored on a fact: its subject, predicate and object together. */
export function factRecallTerms(fact: { subject: string; predicate: string; object: string }) {
  return recallTerms(`${fact.subject} ${fact.predicate} ${fact.object}`);
}
