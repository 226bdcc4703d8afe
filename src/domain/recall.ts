import { analyze, recallTerms } from './recallTerms.js';
import { words } from './searchTerms.js';
import { TYPO_DISCOUNT } from './typos.js';

/**
 * Ranked recall, as pure functions: BM25F over the analyzed words of each candidate's
 * fields (domain/recallTerms.ts), then small documented factors, then a score relative to
 * the best candidate. docs/RECALL.md ("Ranked recall") states the formula with a worked example.
 *
 *   bm25(d) = Σ over the query's distinct terms t found in d of
 *             idf(t) × tf~(t, d) × (k1 + 1) / (tf~(t, d) + k1)
 *   tf~(t, d) = Σ over d's fields f of w(f) × tf(t, f) / (1 − b + b × |f| / avgdl(f))
 *   idf(t)  = ln(1 + (N − df(t) + 0.5) / (df(t) + 0.5))
 *
 * with k1 = 1.2 and b = 0.75; w(f) the field's weight (a fact's statement 1, its source
 * quote QUOTE_WEIGHT; a memory's text 1), |f| the field's analyzed words and avgdl(f) their
 * mean over the candidates that have the field. With one field of weight 1 this is plain
 * BM25. For facts, N is the dataset's facts (every version recorded) and df(t) how many
 * hold t in their statement or in their source quote, whichever is more, both counted from
 * the index (TermStatistics). For memories, N is the memories in the recall's view and
 * df(t) how many candidates hold t: candidates are the memories holding a query term, so
 * df is exact unless their number reached the cap (store/recall.ts).
 */

const BM25_K1 = 1.2;
const BM25_B = 0.75;

/**
 * The floor under which nothing is relevant: a term held by more than this share of the
 * view ("user" in a user's memory) is common. It still adds its weight, but an item whose
 * only matching terms are common is not recalled: a question that shares nothing else with
 * the view recalls nothing rather than noise. Views smaller than MIN_VIEW_FOR_COMMON have
 * no common terms: in a few documents, a word the question is about ("tea" in two of
 * three) is as large a share as a word every fact repeats ("user").
 */
export const COMMON_TERM_SHARE = 0.5;
export const MIN_VIEW_FOR_COMMON = 10;

/** Counted from the index: the documents of a dataset, and how many hold each term. */
export interface TermStatistics {
  documents: number;
  documentFrequency: Map<string, number>;
}

/**
 * The most terms of a question fact recall counts and reads by: the first ones, in the
 * question's order. Each costs two counts (store/recall.ts, factTermStatistics), so a long
 * question's cost stays bounded; a question is rarely longer.
 */
export const MAX_QUESTION_TERMS = 12;

/** The analyzed terms of a question that fact recall uses: the first MAX_QUESTION_TERMS. */
export function questionTerms(question: string): string[] {
  return [...new Set(analyze(question))].slice(0, MAX_QUESTION_TERMS);
}

/** Held by more than COMMON_TERM_SHARE of `documents`, of at least MIN_VIEW_FOR_COMMON. */
const isCommonIn = (documents: number, held: number) =>
  documents >= MIN_VIEW_FOR_COMMON && held > COMMON_TERM_SHARE * documents;

/**
 * Whether an entity's name is what the dataset is about rather than a topic: every term of
 * it counted, and common ("user" in a user's memory). Such a name's facts are not read as a
 * named entity's.
 */
export function nameIsCommon(statistics: TermStatistics, name: string): boolean {
  const terms = recallTerms(name);
  return (
    terms.length > 0 &&
    terms.every((t) => {
      const held = statistics.documentFrequency.get(t);
      return held !== undefined && isCommonIn(statistics.documents, held);
    })
  );
}

/**
 * The terms a question's candidates are read by: those some document holds and that are
 * not common, the rarest first, while the documents holding them stay within `budget`
 * (the rarest always). The others still score the candidates found: a document holding
 * only more frequent terms would rank below those holding a rarer one.
 */
export function candidateTerms(statistics: TermStatistics, budget: number): string[] {
  const eligible = [...statistics.documentFrequency]
    .filter(([, held]) => held > 0 && !isCommonIn(statistics.documents, held))
    .sort((a, b) => a[1] - b[1] || (a[0] < b[0] ? -1 : 1));
  const chosen: string[] = [];
  let read = 0;
  for (const [term, held] of eligible) {
    if (chosen.length > 0 && read + held > budget) break;
    chosen.push(term);
    read += held;
  }
  return chosen;
}

/** A factor the score is multiplied by, and its name (docs/RECALL.md, "Ranked recall"). */
export interface RecallFactor {
  name: string;
  value: number;
}

/** The weight of a fact's source quote against its statement's 1 (recall's second field). */
export const QUOTE_WEIGHT = 0.5;

/** A field of a candidate: its name (shown in explanations), its text and its weight. */
interface CandidateField {
  name: string;
  text: string;
  weight: number;
}

/** A candidate: its fields (what is analyzed) and the factors its kind applies. */
export interface Candidate<T> {
  item: T;
  fields: readonly CandidateField[];
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
  /** How often the term occurs in the candidate's analyzed words, all fields together. */
  termFrequency: number;
  /** How often it occurs in each field that holds it. */
  fields: { field: string; termFrequency: number }[];
  /** How many documents hold the term: facts of the dataset, or memories among the candidates. */
  documentFrequency: number;
  idf: number;
  /** Held by more than COMMON_TERM_SHARE of the view: it cannot recall an item alone. */
  common: boolean;
  /**
   * The question's word this term was matched as, a typo within its edit distance
   * (domain/typos.ts): the term weighs TYPO_DISCOUNT of what it would; null when asked as
   * written.
   */
  correctedFrom: string | null;
}

/** A term read for a question's word no fact holds: the word as asked, and how far. */
export interface Correction {
  asked: string;
  distance: number;
}

/**
 * Why a candidate ranked where it did: score = bm25 × the product of the factors (a fact
 * one hop from an entity the question names: the score of the fact that links it ×
 * HOP_DISCOUNT, `via` that fact).
 */
export interface RecallExplanation {
  /** The query's terms found in the candidate, the largest weight first (ties: the query's order). */
  terms: TermWeight[];
  bm25: number;
  factors: readonly RecallFactor[];
  score: number;
  /** A fact brought in one hop from a named entity: the fact that links it. */
  via?: string;
  /**
   * With recall by meaning: the legs that found the item (`words`: its terms; `entity`: one
   * hop from an entity the question names; `meaning`: its vector), the cosine of its text's
   * vector and the question's, and the fused score it ranked by (`fuse`).
   */
  meaning?: { legs: RecallLeg[]; similarity: number | null; fused: number };
}

/** A leg of recall that can find an item. */
export type RecallLeg = 'words' | 'entity' | 'meaning';

/** A candidate with its score, before the candidates of every leg are ordered together. */
export interface Scored<T> {
  item: T;
  score: number;
  explanation: RecallExplanation;
  time: Date;
  id: string;
}

export interface Ranked<T> {
  item: T;
  /** In (0, 1]: the candidate's score over the best candidate's. */
  relevanceScore: number;
  explanation: RecallExplanation;
}

/**
 * The lexical leg: each candidate that shares a term with the query (and not only common
 * ones), with its BM25F score × its factors. Unordered: `ordered` ranks candidates
 * together, so another leg (a dense one, entities named in the question) can add its
 * scored candidates, or be fused with this one by rank, without rewriting either.
 */
export function scoreCandidates<T>(
  query: string,
  candidates: readonly Candidate<T>[],
  counted: number | TermStatistics,
  corrections: ReadonlyMap<string, Correction> = new Map(),
): Scored<T>[] {
  // With the index's counts, the terms they were counted for (questionTerms); and the
  // terms the question's typos were read as.
  const terms = [
    ...new Set([
      ...analyze(query).filter(
        (t) => typeof counted === 'number' || counted.documentFrequency.has(t),
      ),
      ...corrections.keys(),
    ]),
  ];
  if (terms.length === 0 || candidates.length === 0) return [];
  const analyzed = candidates.map((c) => c.fields.map((f) => ({ ...f, words: analyze(f.text) })));
  // The index's counts when given; else the view's size, and df among the candidates.
  const df = new Map(terms.map((t) => [t, 0]));
  let n: number;
  if (typeof counted === 'number') {
    for (const fields of analyzed) {
      const held = new Set(fields.flatMap((f) => f.words));
      for (const t of held) if (df.has(t)) df.set(t, df.get(t)! + 1);
    }
    n = Math.max(counted, candidates.length);
  } else {
    for (const t of terms) df.set(t, counted.documentFrequency.get(t) ?? 0);
    n = counted.documents;
  }
  const isCommon = (d: number) => isCommonIn(n, d);
  // Each field's mean length, over the candidates that have it.
  const lengths = new Map<string, { sum: number; count: number }>();
  for (const fields of analyzed) {
    for (const f of fields) {
      const l = lengths.get(f.name) ?? { sum: 0, count: 0 };
      lengths.set(f.name, { sum: l.sum + f.words.length, count: l.count + 1 });
    }
  }
  const avgdl = (field: string) => {
    const l = lengths.get(field)!;
    return l.sum / l.count || 1;
  };
  const scored = candidates.flatMap((candidate, i) => {
    const fields = analyzed[i]!;
    const found: TermWeight[] = [];
    let bm25 = 0;
    for (const t of terms) {
      let tfTilde = 0;
      const inFields: TermWeight['fields'] = [];
      for (const f of fields) {
        const tf = f.words.filter((w) => w === t).length;
        if (tf === 0) continue;
        inFields.push({ field: f.name, termFrequency: tf });
        tfTilde += (f.weight * tf) / (1 - BM25_B + (BM25_B * f.words.length) / avgdl(f.name));
      }
      if (tfTilde === 0) continue;
      const d = df.get(t)!;
      const idf = Math.log(1 + (n - d + 0.5) / (d + 0.5));
      const correction = corrections.get(t) ?? null;
      const weight =
        ((idf * tfTilde * (BM25_K1 + 1)) / (tfTilde + BM25_K1)) * (correction ? TYPO_DISCOUNT : 1);
      bm25 += weight;
      found.push({
        term: t,
        weight,
        termFrequency: inFields.reduce((sum, f) => sum + f.termFrequency, 0),
        fields: inFields,
        documentFrequency: d,
        idf,
        common: isCommon(d),
        correctedFrom: correction?.asked ?? null,
      });
    }
    if (bm25 <= 0 || found.every((f) => f.common)) return [];
    found.sort((a, b) => b.weight - a.weight);
    const score = candidate.factors.reduce((product, f) => product * f.value, bm25);
    return [
      {
        item: candidate.item,
        time: candidate.time,
        id: candidate.id,
        score,
        explanation: { terms: found, bm25, factors: candidate.factors, score },
      },
    ];
  });
  return scored;
}

/**
 * Scored candidates, best first, at most `first`: ties go to the later, then the greater
 * id; `relevanceScore` is each score over the best's.
 */
export function ordered<T>(scored: readonly Scored<T>[], first: number): Ranked<T>[] {
  const sorted = [...scored].sort(
    (a, b) =>
      b.score - a.score ||
      b.time.getTime() - a.time.getTime() ||
      (a.id < b.id ? 1 : a.id > b.id ? -1 : 0),
  );
  const best = sorted[0]?.score ?? 0;
  return sorted.slice(0, first).map(({ item, score, explanation }) => ({
    item,
    relevanceScore: Math.max(0.0001, Math.round((score / best) * 10_000) / 10_000),
    explanation,
  }));
}

/**
 * The facts linking a named entity to others that lead one hop further: the best-scored
 * few, so the hop's read stays small whatever the entity's size.
 */
export const HOP_SOURCES = 5;

/** A fact whose subject or object is an entity the question names ranks this much higher. */
export const NAMED_ENTITY: RecallFactor = { name: 'entity', value: 1.25 };
/**
 * A fact one hop away (it mentions another entity of a named entity's facts) scores this
 * share of the best fact that links it.
 */
export const HOP_DISCOUNT = 0.5;
/** The longest name, in words, a question is searched for. */
const MAX_NAME_WORDS = 4;

/** The names a question could call an entity by: each run of one to four of its words. */
export function namesIn(question: string): string[] {
  const tokens = words(question);
  const names = new Set<string>();
  for (let i = 0; i < tokens.length; i++) {
    for (let n = 1; n <= MAX_NAME_WORDS && i + n <= tokens.length; n++) {
      names.add(tokens.slice(i, i + n).join(' '));
    }
  }
  return [...names];
}

/**
 * The entities among `names` a question can be about: those at most half of the view's
 * facts mention. One that more mention ("user" in a user's memory) is what the dataset is
 * about, not a topic: it neither ranks its facts up nor leads anywhere. `factsInView` may
 * be counted only up to twice the facts read per entity: past that, none can be more.
 */
export function topicsAmong(
  names: readonly string[],
  facts: readonly { subjectKey: string; objectKey: string }[],
  factsInView: number,
): Set<string> {
  const n = Math.max(factsInView, facts.length);
  return new Set(
    names.filter(
      (name) =>
        facts.filter((f) => f.subjectKey === name || f.objectKey === name).length <=
        COMMON_TERM_SHARE * n,
    ),
  );
}

/**
 * The facts one hop from a named entity, scored: each takes HOP_DISCOUNT of the best score
 * among the scored facts that link it (`links`: their ids); one no scored fact links is
 * left out.
 */
export function hopsScored<T>(
  hops: readonly { item: T; time: Date; id: string; links: readonly string[] }[],
  scored: readonly Scored<T>[],
): Scored<T>[] {
  const scoreOf = new Map(scored.map((s) => [s.id, s.score]));
  return hops.flatMap((hop) => {
    const via = hop.links
      .filter((id) => scoreOf.has(id))
      .sort((a, b) => scoreOf.get(b)! - scoreOf.get(a)! || (a < b ? -1 : 1))[0];
    if (!via) return [];
    const score = scoreOf.get(via)! * HOP_DISCOUNT;
    const factors = [{ name: 'hop', value: HOP_DISCOUNT }];
    return [
      {
        item: hop.item,
        time: hop.time,
        id: hop.id,
        score,
        explanation: { terms: [], bm25: 0, factors, score, via },
      },
    ];
  });
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

/**
 * Recall by meaning's floor: an item the dense leg finds must be at least this much more
 * similar to the question (the cosine of their vectors) than the question is, on average,
 * to everything the dataset holds. Relative, because what every text of a dataset shares
 * ("the user …" in every fact) lifts every similarity: an absolute floor that lets "which
 * city is home" find "user lives in lisbon" (0.36) lets "what is the user's blood type"
 * find "user works as head nurse" (0.38). So a question about nothing stored recalls
 * nothing rather than the nearest vectors. Set on bench/recallQuestions.ts's questions with
 * nothing relevant, whose best item stands 0.12 to 0.22 above the mean (one, "which
 * programming languages", 0.33), and the four paraphrases of docs/RECALL.md, whose answers
 * stand 0.26 to 0.48 above it (docs/PERFORMANCE.md, "Recall by meaning").
 */
export const MEANING_MARGIN = 0.24;
/** Reciprocal-rank fusion's constant: each leg adds 1 / (FUSION_K + the item's rank in it). */
export const FUSION_K = 60;

/** An item the dense leg found: its similarity to the question, and its kind's factors. */
export interface MeaningHit<T> {
  item: T;
  id: string;
  time: Date;
  similarity: number;
  factors: readonly RecallFactor[];
}

/** Best first: the greater value, then the later, then the greater id (as `ordered`). */
const byValue =
  <T extends { time: Date; id: string }>(value: (x: T) => number) =>
  (a: T, b: T) =>
    value(b) - value(a) ||
    b.time.getTime() - a.time.getTime() ||
    (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);

/**
 * Hybrid ranking: the words leg (BM25F × factors, with the facts one hop from a named
 * entity) and the meaning leg (similarity × the same factors), each ranked on its own, fused
 * by reciprocal rank: an item's score is the sum, over the legs that found it, of
 * 1 / (FUSION_K + its rank there). Rank fusion needs no calibration between BM25's scale
 * and a cosine's, and an item both legs found outranks one only one found at the same
 * place. `similarities` gives the cosine of items the meaning leg did not return (below its
 * floor, or beyond its candidates), for the explanation. `relevanceScore` is the fused score
 * over the best's.
 */
export function fuse<T>(
  words: readonly Scored<T>[],
  meaning: readonly MeaningHit<T>[],
  first: number,
  similarities: ReadonlyMap<string, number> = new Map(),
): Ranked<T>[] {
  type Entry = { item: T; id: string; time: Date; fused: number; legs: RecallLeg[] };
  const entries = new Map<string, Entry>();
  const enter = (x: { item: T; id: string; time: Date }, rank: number, leg: RecallLeg) => {
    const entry = entries.get(x.id) ?? { ...x, fused: 0, legs: [] };
    entry.fused += 1 / (FUSION_K + rank);
    entry.legs.push(leg);
    entries.set(x.id, entry);
  };
  const wordsRanked = [...words].sort(byValue((s) => s.score));
  for (const [i, s] of wordsRanked.entries()) {
    enter(s, i + 1, s.explanation.via ? 'entity' : 'words');
  }
  const product = (h: MeaningHit<T>) => h.factors.reduce((p, f) => p * f.value, h.similarity);
  const meaningRanked = [...meaning].sort(byValue(product));
  for (const [i, h] of meaningRanked.entries()) enter(h, i + 1, 'meaning');
  const scoredById = new Map(words.map((s) => [s.id, s]));
  const hitById = new Map(meaning.map((h) => [h.id, h]));
  // Equal evidence by rank (each the first of one leg): the more similar to the question first.
  const similarityOf = (e: Entry) =>
    hitById.get(e.id)?.similarity ?? similarities.get(e.id) ?? Number.NEGATIVE_INFINITY;
  const sorted = [...entries.values()].sort(
    (a, b) => b.fused - a.fused || similarityOf(b) - similarityOf(a) || byValue(() => 0)(a, b),
  );
  const best = sorted[0]?.fused ?? 0;
  return sorted.slice(0, first).map((e) => {
    const scored = scoredById.get(e.id);
    const hit = hitById.get(e.id);
    const explanation: RecallExplanation = scored
      ? { ...scored.explanation }
      : { terms: [], bm25: 0, factors: hit!.factors, score: 0 };
    explanation.meaning = {
      legs: e.legs,
      similarity: hit?.similarity ?? similarities.get(e.id) ?? null,
      fused: e.fused,
    };
    return {
      item: e.item,
      relevanceScore: Math.max(0.0001, Math.round((e.fused / best) * 10_000) / 10_000),
      explanation,
    };
  });
}
