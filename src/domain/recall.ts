import { analyze } from './recallTerms.js';

/**
 * Ranked recall, as pure functions: BM25 over the analyzed words of each candidate
 * (domain/recallTerms.ts), then small documented factors, then a score relative to the
 * best candidate. README ("Ranked recall") states the formula with a worked example.
 *
 *   bm25(d) = Σ over the query's distinct terms t found in d of
 *             idf(t) × tf(t, d) × (k1 + 1) / (tf(t, d) + k1 × (1 − b + b × |d| / avgdl))
 *   idf(t)  = ln(1 + (N − df(t) + 0.5) / (df(t) + 0.5))
 *
 * with k1 = 1.2 and b = 0.75; N the documents of the dataset in the recall's view (live
 * facts, or memories), df(t) how many candidates hold t, |d| a candidate's analyzed words
 * and avgdl their mean over the candidates. Candidates are the documents holding at least
 * one query term, so df is exact unless their number reached the cap (store/recall.ts).
 */

const BM25_K1 = 1.2;
const BM25_B = 0.75;

/** A factor the score is multiplied by, and its name (README, "Ranked recall"). */
export interface RecallFactor {
  name: string;
  value: number;
}

/** A candidate: its text (what is analyzed) and the factors its kind applies. */
export interface Candidate<T> {
  item: T;
  text: string;
  /** Multiply the BM25 score: confidence and recency, or a memory's boosts. */
  factors: readonly RecallFactor[];
  /** Ties of the final score: the later first, then the greater id. */
  time: Date;
  id: string;
}

/** What one query term found in a candidate adds to its BM25 score, and why. */
export interface TermWeight {
  term: string;
  /** The term's share of `bm25`. */
  weight: number;
  /** How often the term occurs in the candidate's analyzed words. */
  termFrequency: number;
  /** How many candidates hold the term. */
  documentFrequency: number;
  idf: number;
}

/** Why a candidate ranked where it did: score = bm25 × the product of the factors. */
export interface RecallExplanation {
  /** The query's terms found in the candidate, the largest weight first (ties: the query's order). */
  terms: TermWeight[];
  bm25: number;
  factors: readonly RecallFactor[];
  score: number;
}

export interface Ranked<T> {
  item: T;
  /** In (0, 1]: the candidate's score over the best candidate's. */
  relevanceScore: number;
  explanation: RecallExplanation;
}

/**
 * The candidates that share a term with the query, best first, at most `first`. The query
 * is analyzed like the stored text; a query of stop words only has no terms and ranks
 * nothing.
 */
export function rank<T>(
  query: string,
  candidates: readonly Candidate<T>[],
  documentsInView: number,
  first: number,
): Ranked<T>[] {
  const terms = [...new Set(analyze(query))];
  if (terms.length === 0 || candidates.length === 0) return [];
  const analyzed = candidates.map((c) => analyze(c.text));
  const df = new Map(terms.map((t) => [t, 0]));
  for (const words of analyzed) {
    for (const t of new Set(words)) if (df.has(t)) df.set(t, df.get(t)! + 1);
  }
  const n = Math.max(documentsInView, candidates.length);
  const avgdl = analyzed.reduce((sum, w) => sum + w.length, 0) / analyzed.length || 1;
  const scored = candidates.flatMap((candidate, i) => {
    const words = analyzed[i]!;
    const found: TermWeight[] = [];
    let bm25 = 0;
    for (const t of terms) {
      const tf = words.filter((w) => w === t).length;
      if (tf === 0) continue;
      const d = df.get(t)!;
      const idf = Math.log(1 + (n - d + 0.5) / (d + 0.5));
      const weight =
        (idf * tf * (BM25_K1 + 1)) /
        (tf + BM25_K1 * (1 - BM25_B + (BM25_B * words.length) / avgdl));
      bm25 += weight;
      found.push({ term: t, weight, termFrequency: tf, documentFrequency: d, idf });
    }
    if (bm25 <= 0) return [];
    found.sort((a, b) => b.weight - a.weight);
    const score = candidate.factors.reduce((product, f) => product * f.value, bm25);
    return [
      { candidate, score, explanation: { terms: found, bm25, factors: candidate.factors, score } },
    ];
  });
  scored.sort(
    (a, b) =>
      b.score - a.score ||
      b.candidate.time.getTime() - a.candidate.time.getTime() ||
      (a.candidate.id < b.candidate.id ? 1 : a.candidate.id > b.candidate.id ? -1 : 0),
  );
  const best = scored[0]?.score ?? 0;
  return scored.slice(0, first).map(({ candidate, score, explanation }) => ({
    item: candidate.item,
    relevanceScore: Math.max(0.0001, Math.round((score / best) * 10_000) / 10_000),
    explanation,
  }));
}

const DAY_MS = 86_400_000;

/**
 * A fact's factors: confidence and recency as tie-breakers, each within 10 %:
 * confidence 0.9 + 0.1 × confidence, recency 0.9 + 0.1 / (1 + age in years), the age being
 * from `validAt` to the valid-time instant recalled.
 */
export function factFactors(fact: { confidence: number; validAt: Date }, at: Date): RecallFactor[] {
  const years = Math.max(0, at.getTime() - fact.validAt.getTime()) / (365 * DAY_MS);
  return [
    { name: 'confidence', value: 0.9 + 0.1 * clamp01(fact.confidence) },
    { name: 'recency', value: 0.9 + 0.1 / (1 + years) },
  ];
}

/**
 * A memory's factors: importance up to +25 %, salience up to +10 %, pinned +25 %:
 * importance 0.8 + 0.2 × importance, salience 0.9 + 0.1 × salience, pinned 1.25 (a memory
 * not pinned has no such factor), importance and salience taken within [0, 1].
 */
export function memoryFactors(memory: {
  importance: number;
  salience: number;
  pinned: boolean;
}): RecallFactor[] {
  return [
    { name: 'importance', value: 0.8 + 0.2 * clamp01(memory.importance) },
    { name: 'salience', value: 0.9 + 0.1 * clamp01(memory.salience) },
    ...(memory.pinned ? [{ name: 'pinned', value: 1.25 }] : []),
  ];
}

const clamp01 = (x: number) => Math.min(1, Math.max(0, x));

const day = (d: Date) => d.toISOString().slice(0, 10);

/**
 * Prompt-ready text: one line per fact, in the order given, saying what holds and since
 * when (and until when, if it ends), then one line per memory.
 */
export function recallContext(
  facts: readonly {
    subject: string;
    predicate: string;
    object: string;
    validAt: Date;
    validUntil: Date | null;
  }[],
  memories: readonly { text: string }[] = [],
): string {
  return [
    ...facts.map(
      (f) =>
        `- ${f.subject} ${f.predicate} ${f.object} (since ${day(f.validAt)}${f.validUntil ? `, until ${day(f.validUntil)}` : ''})`,
    ),
    ...memories.map((m) => `- Memory: ${m.text}`),
  ].join('\n');
}
