import { stemmer } from 'stemmer';
import { eng } from 'stopword';
import { words } from './searchTerms.js';

/**
 * Text analysis for recall, shared by what is stored and what is asked: the words of
 * `searchTerms` (runs of letters, marks and digits; NFC; lower case; accents kept), minus
 * English stop words, each reduced to its stem by the Porter stemmer (`peanuts` and
 * `peanut` are both `peanut`, `interested` is `interest`). Words with letters outside a-z
 * keep their accents (`café`, `müller`): the stemmer leaves what it does not know.
 */

const STOP_WORDS = new Set(eng);

/** The analyzed words of a text, in order, repeats included (a term's frequency counts them). */
export function analyze(text: string): string[] {
  return words(text)
    .filter((word) => !STOP_WORDS.has(word))
    .map((word) => stemmer(word));
}

/** The analyzed terms of a text, distinct, in first-seen order: what is stored and indexed. */
export function recallTerms(text: string): string[] {
  return [...new Set(analyze(text))];
}

/** The text of a fact that recall reads: its subject, predicate and object together. */
export function factText(fact: { subject: string; predicate: string; object: string }): string {
  return `${fact.subject} ${fact.predicate} ${fact.object}`;
}

/** The terms stored on a fact. */
export function factRecallTerms(fact: { subject: string; predicate: string; object: string }) {
  return recallTerms(factText(fact));
}

/** The terms of a fact's source quote: recall's second field (domain/recall.ts). */
export function quoteRecallTerms(fact: { sourceQuote: string | null }) {
  return recallTerms(fact.sourceQuote ?? '');
}
