/**
 * Typos in a question (docs/RECALL.md, "Ranked recall"): a question's term that no fact holds is
 * matched to the dataset's terms within a small edit distance. Found without reading the
 * vocabulary whole (symmetric deletion, as SymSpell does): each stored term keeps every
 * string made by deleting up to MAX_TYPO_DISTANCE of its characters (`typoKeys`); a term
 * within distance d of a word shares one of those strings with the word's own deletions up
 * to d, so the lookup is an index search for the word's deletions, and the distance is then
 * checked on what it finds.
 */

/** The largest edit distance a typo is corrected across (words of 8 or more characters). */
const MAX_TYPO_DISTANCE = 2;

/**
 * Words shorter than this are never corrected, nor corrected to: a stem of four letters
 * ("play" is `plai`) too often sits one edit from another word (`plan`).
 */
const MIN_TYPO_LENGTH = 5;

/** A term found through a typo weighs this share of what it would weigh asked as written. */
export const TYPO_DISCOUNT = 0.5;

/**
 * How far a question's word may be from a term to be read as it: 1 for 5 to 7 characters,
 * 2 for longer; 0 (never) for a shorter word or one with a digit (a number, a code).
 */
export function typoDistanceFor(word: string): number {
  const length = [...word].length;
  if (length < MIN_TYPO_LENGTH || /\p{N}/u.test(word)) return 0;
  return length >= 8 ? 2 : 1;
}

/** Every string made by deleting up to `distance` characters of `word`, itself included. */
export function deletions(word: string, distance: number): string[] {
  const found = new Set([word]);
  let edge = [word];
  for (let d = 0; d < distance; d++) {
    const next: string[] = [];
    for (const w of edge) {
      const chars = [...w];
      for (let i = 0; i < chars.length; i++) {
        const shorter = [...chars.slice(0, i), ...chars.slice(i + 1)].join('');
        if (!found.has(shorter)) {
          found.add(shorter);
          next.push(shorter);
        }
      }
    }
    edge = next;
  }
  return [...found];
}

/** What a stored term is found by: its deletions up to MAX_TYPO_DISTANCE, if it can be. */
export function typoKeys(term: string): string[] {
  return typoDistanceFor(term) === 0 ? [] : deletions(term, MAX_TYPO_DISTANCE);
}

/**
 * The optimal string alignment distance (Damerau-Levenshtein without repeated edits of a
 * substring): insertions, deletions, substitutions and swaps of two neighbours count 1.
 * Over code points, so a character outside the BMP is one character, not two.
 */
export function editDistance(a: string, b: string): number {
  const x = [...a];
  const y = [...b];
  const n = y.length;
  // Three rows of the table, reused: a swap reads the row before the previous one. Typed
  // rows rather than a table of arrays make it about ten times faster (docs/ARCHITECTURE.md).
  let before = new Uint32Array(n + 1);
  let previous = new Uint32Array(n + 1);
  let row = new Uint32Array(n + 1);
  for (let j = 0; j <= n; j++) previous[j] = j;
  for (let i = 1; i <= x.length; i++) {
    row[0] = i;
    for (let j = 1; j <= n; j++) {
      const cost = x[i - 1] === y[j - 1] ? 0 : 1;
      let d = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && x[i - 1] === y[j - 2] && x[i - 2] === y[j - 1]) {
        d = Math.min(d, before[j - 2]! + 1);
      }
      row[j] = d;
    }
    const spare = before;
    before = previous;
    previous = row;
    row = spare;
  }
  return previous[n]!;
}

/**
 * The terms among `found` a word may have been meant as: those within the word's distance,
 * the nearest first, then in code-point order. A term shorter than MIN_TYPO_LENGTH, or
 * the word itself, is never one.
 */
export function nearestTerms(
  word: string,
  found: readonly string[],
): { term: string; distance: number }[] {
  const limit = typoDistanceFor(word);
  if (limit === 0) return [];
  return [...new Set(found)]
    .filter((term) => term !== word && [...term].length >= MIN_TYPO_LENGTH)
    .map((term) => ({ term, distance: editDistance(word, term) }))
    .filter((c) => c.distance <= limit)
    .sort((a, b) => a.distance - b.distance || (a.term < b.term ? -1 : a.term > b.term ? 1 : 0));
}
