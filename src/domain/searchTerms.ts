/**
 * Words, as recall and `q` read text (domain/recallTerms.ts analyzes them further): runs of
 * Unicode letters, combining marks and digits; case-insensitive and accent-sensitive
 * ("café" is not "cafe"). Text is NFC-normalised first so a decomposed "é" and a composed
 * one are the same word.
 */

export const MAX_QUERY_LENGTH = 1000;

const WORD = /[\p{L}\p{M}\p{N}]+/gu;

/** The lower-cased words of a text, in order, repeats included. */
export function words(text: string): string[] {
  return text.normalize('NFC').toLowerCase().match(WORD) ?? [];
}
