/**
 * Search-term normalisation behind `q`: words are runs of Unicode letters, combining marks
 * and digits; matching is case-insensitive and accent-sensitive ("café" is not "cafe").
 * Text is NFC-normalised first so a decomposed "é" and a composed one are the same word.
 */

export const MAX_QUERY_LENGTH = 1000;

const WORD = /[\p{L}\p{M}\p{N}]+/gu;

/** The lower-cased words of a text, in order, repeats included. */
export function words(text: string): string[] {
  return text.normalize('NFC').toLowerCase().match(WORD) ?? [];
}

/** The distinct lower-cased words of a text, in first-seen order. */
export function searchTerms(text: string): string[] {
  return [...new Set(words(text))];
}

/** The tokens stored on a fact: the words of subject, predicate and object together. */
export function factSearchTerms(fact: {
  subject: string;
  predicate: string;
  object: string;
}): string[] {
  return searchTerms(`${fact.subject} ${fact.predicate} ${fact.object}`);
}
