import { describe, expect, it } from 'vitest';
import {
  type Candidate,
  factFactors,
  fuse,
  memoryFactors,
  ordered,
  type RecallFactor,
  recallContext,
  scoreCandidates,
} from '../../src/domain/recall.js';

/** The words leg alone, ranked: what recall answers with recall by meaning off. */
const rank = <T>(
  query: string,
  candidates: readonly Candidate<T>[],
  inView: number,
  first: number,
) => ordered(scoreCandidates(query, candidates, inView), first);

const product = (factors: readonly RecallFactor[]) => factors.reduce((p, f) => p * f.value, 1);
const factFactor = (f: { confidence: number; validAt: Date }, at: Date) =>
  product(factFactors(f, at));
const memoryFactor = (m: { importance: number; salience: number; pinned: boolean }) =>
  product(memoryFactors(m));

const at = new Date('2026-12-01T00:00:00.000Z');
const candidate = (id: string, text: string, factor = 1, time = at) => ({
  item: id,
  fields: [{ name: 'text', text, weight: 1 }],
  factors: factor === 1 ? [] : [{ name: 'boost', value: factor }],
  time,
  id,
});

describe('rank', () => {
  it('more query terms, and rarer ones, score higher; the best is 1', () => {
    const ranked = rank(
      'red apple',
      [
        candidate('a', 'green apple'),
        candidate('b', 'red apple'),
        candidate('c', 'red car'),
        candidate('d', 'red bike'),
      ],
      10,
      10,
    );
    // c and d score alike at the same time: the greater id first.
    expect(ranked.map((r) => r.item)).toEqual(['b', 'a', 'd', 'c']);
    expect(ranked[0]!.relevanceScore).toBe(1);
    // "apple" is in 2 of 10, "red" in 3 of 10: the apple match outweighs the red one.
    expect(ranked[1]!.relevanceScore).toBeGreaterThan(ranked[2]!.relevanceScore);
  });

  it('a term in most of the view is common: it adds its weight, but recalls nothing alone', () => {
    const view = [
      candidate('a', 'user likes green tea'),
      candidate('b', 'user drives a car'),
      candidate('c', 'user lives in berlin'),
      candidate('d', 'honda civic is made by honda'),
    ];
    // A view of ten: "user" is in 3 of the 4 candidates, but 3 of 10 is not most.
    expect(rank('user', view, 10, 10)).toHaveLength(3);
    // Of twelve documents, the eight others hold "user" too (they share nothing else).
    const ranked = rank('what vehicle does the user want, a car?', view, 5, 10);
    expect(ranked.map((r) => r.item)).toHaveLength(3);
    expect(ranked[0]!.item).toBe('b');
    const crowd = [
      ...view,
      ...Array.from({ length: 8 }, (_, i) => candidate(`u${i}`, `user ${i}`)),
    ];
    const answer = rank('what vehicle does the user want, a car?', crowd, 12, 10);
    expect(answer.map((r) => r.item)).toEqual(['b']);
    expect(answer[0]!.explanation.terms.find((t) => t.term === 'user')).toMatchObject({
      common: true,
      documentFrequency: 11,
    });
    expect(answer[0]!.explanation.terms.find((t) => t.term === 'car')?.common).toBe(false);
    // Nothing but common terms: nothing.
    expect(rank('what does the user want?', crowd, 12, 10)).toEqual([]);
    // Half is not most: "honda" would be in 6 of 12.
    const halves = Array.from({ length: 12 }, (_, i) =>
      candidate(`h${i}`, i < 6 ? 'honda civic' : 'toyota'),
    );
    expect(rank('honda', halves, 12, 10)).toHaveLength(6);
  });

  it('a shorter document with the same match scores higher (length normalisation)', () => {
    const ranked = rank(
      'apple',
      [candidate('long', 'apple pie with cream and berries'), candidate('short', 'apple pie')],
      2,
      10,
    );
    expect(ranked.map((r) => r.item)).toEqual(['short', 'long']);
  });

  it('factors reorder equal matches; equal scores go to the later, then the greater id', () => {
    const equal = [candidate('x', 'apple'), candidate('y', 'apple', 1.1), candidate('z', 'apple')];
    expect(rank('apple', equal, 3, 10).map((r) => r.item)).toEqual(['y', 'z', 'x']);
    const later = [
      candidate('x', 'apple', 1, new Date('2026-01-02')),
      candidate('y', 'apple', 1, new Date('2026-01-01')),
    ];
    expect(rank('apple', later, 2, 10).map((r) => r.item)).toEqual(['x', 'y']);
  });

  it('explains each score: every matched term with its weight, the factors, their product', () => {
    const [first, second] = rank(
      'red apples',
      [candidate('a', 'red apple pie', 1.1), candidate('b', 'green apple'), candidate('c', 'car')],
      5,
      10,
    );
    // N = 5; avgdl over the candidates given = (3 + 2 + 1) / 3.
    const idf = (df: number) => Math.log(1 + (5 - df + 0.5) / (df + 0.5));
    const weight = (df: number, length: number) =>
      (idf(df) * 2.2) / (1 + 1.2 * (0.25 + (0.75 * length) / 2));
    expect(first!.item).toBe('a');
    expect(first!.explanation.terms.map((t) => t.term)).toEqual(['red', 'appl']);
    const [red, apple] = first!.explanation.terms;
    expect(red).toMatchObject({ termFrequency: 1, documentFrequency: 1 });
    expect(red!.idf).toBeCloseTo(idf(1), 12);
    expect(red!.weight).toBeCloseTo(weight(1, 3), 12);
    expect(apple!.weight).toBeCloseTo(weight(2, 3), 12);
    expect(first!.explanation.bm25).toBeCloseTo(red!.weight + apple!.weight, 12);
    expect(first!.explanation.factors).toEqual([{ name: 'boost', value: 1.1 }]);
    expect(first!.explanation.score).toBeCloseTo(first!.explanation.bm25 * 1.1, 12);
    expect(second!.explanation.terms.map((t) => t.term)).toEqual(['appl']);
    expect(second!.relevanceScore).toBeCloseTo(
      second!.explanation.score / first!.explanation.score,
      4,
    );
  });

  it('first bounds the answer; no shared term, or stop words only, ranks nothing', () => {
    const many = ['a', 'b', 'c'].map((id) => candidate(id, `apple ${id}`));
    expect(rank('apple', many, 3, 2)).toHaveLength(2);
    expect(rank('banana', many, 3, 10)).toEqual([]);
    expect(rank('the of and', many, 3, 10)).toEqual([]);
  });
});

describe('factors', () => {
  it('a fact: confidence and recency, each within 10 %', () => {
    expect(factFactor({ confidence: 1, validAt: at }, at)).toBeCloseTo(1);
    expect(factFactor({ confidence: 0, validAt: at }, at)).toBeCloseTo(0.9);
    const yearOld = new Date(at.getTime() - 365 * 86_400_000);
    expect(factFactor({ confidence: 1, validAt: yearOld }, at)).toBeCloseTo(0.95);
  });

  it('named, as explanations show them', () => {
    expect(factFactors({ confidence: 1, validAt: at }, at).map((f) => f.name)).toEqual([
      'confidence',
      'recency',
    ]);
    const plain = { importance: 0.5, salience: 0.5, pinned: false };
    expect(memoryFactors(plain).map((f) => f.name)).toEqual(['importance', 'salience']);
    expect(memoryFactors({ ...plain, pinned: true }).map((f) => f.name)).toEqual([
      'importance',
      'salience',
      'pinned',
    ]);
  });

  it('a memory: importance, salience and pinned as boosts', () => {
    const plain = { importance: 0.5, salience: 0.5, pinned: false };
    expect(memoryFactor({ ...plain, pinned: true })).toBeCloseTo(memoryFactor(plain) * 1.25);
    expect(memoryFactor({ ...plain, importance: 1 })).toBeGreaterThan(memoryFactor(plain));
    expect(memoryFactor({ ...plain, salience: 1 })).toBeGreaterThan(memoryFactor(plain));
    // Outside 0-1 is taken within it.
    expect(memoryFactor({ ...plain, importance: 9 })).toBe(
      memoryFactor({ ...plain, importance: 1 }),
    );
  });
});

describe('recallContext', () => {
  it('one line per fact (since, and until when it ends), then one per memory', () => {
    expect(
      recallContext(
        [
          {
            subject: 'user',
            predicate: 'lives in',
            object: 'berlin',
            validAt: new Date('2026-04-01T10:00:00Z'),
            validUntil: null,
          },
          {
            subject: 'user',
            predicate: 'has a budget of',
            object: '20000 euros',
            validAt: new Date('2026-05-10T00:00:00Z'),
            validUntil: new Date('2026-09-01T00:00:00Z'),
          },
        ],
        [{ text: 'Prefers short answers.' }],
      ),
    ).toBe(
      [
        '- user lives in berlin (since 2026-04-01)',
        '- user has a budget of 20000 euros (since 2026-05-10, until 2026-09-01)',
        '- Memory: Prefers short answers.',
      ].join('\n'),
    );
    expect(recallContext([])).toBe('');
  });
});

describe('hybrid ranking (fuse)', () => {
  const at = new Date('2026-01-01T00:00:00.000Z');
  const scored = (id: string, score: number, via?: string) => ({
    item: id,
    id,
    time: at,
    score,
    explanation: { terms: [], bm25: score, factors: [], score, ...(via ? { via } : {}) },
  });
  const hit = (id: string, similarity: number) => ({
    item: id,
    id,
    time: at,
    similarity,
    factors: [],
  });

  it('sums 1 / (60 + rank) over the legs that found an item', () => {
    const ranked = fuse(
      [scored('words-first', 9), scored('both', 5)],
      [hit('meaning-first', 0.8), hit('both', 0.6)],
      10,
    );
    expect(ranked.map((r) => r.item)).toEqual(['both', 'meaning-first', 'words-first']);
    const both = ranked[0]!.explanation.meaning!;
    expect(both.legs).toEqual(['words', 'meaning']);
    expect(both.fused).toBeCloseTo(1 / 62 + 1 / 62);
    expect(ranked[0]!.relevanceScore).toBe(1);
    expect(ranked[2]!.relevanceScore).toBeCloseTo(1 / 61 / (2 / 62), 4);
  });

  it('gives equal fused scores to the item more similar to the question', () => {
    const ranked = fuse([scored('trap', 3)], [hit('answer', 0.5)], 10, new Map([['trap', 0.2]]));
    expect(ranked.map((r) => r.item)).toEqual(['answer', 'trap']);
    expect(ranked[1]!.explanation.meaning).toEqual({
      legs: ['words'],
      similarity: 0.2,
      fused: 1 / 61,
    });
  });

  it('explains an item only its meaning found with no terms and no words score', () => {
    const [only] = fuse([], [hit('m', 0.7)], 10);
    expect(only!.explanation).toMatchObject({ terms: [], bm25: 0, score: 0 });
    expect(only!.explanation.meaning).toEqual({
      legs: ['meaning'],
      similarity: 0.7,
      fused: 1 / 61,
    });
  });

  it('says a fact one hop from a named entity was found by the entity', () => {
    const [hop] = fuse([scored('hop', 1, 'linking-fact')], [], 10);
    expect(hop!.explanation.meaning!.legs).toEqual(['entity']);
  });

  it('ranks the meaning leg by similarity times the factors', () => {
    const ranked = fuse(
      [],
      [
        { ...hit('confident', 0.5), factors: [{ name: 'confidence', value: 1 }] },
        { ...hit('doubtful', 0.55), factors: [{ name: 'confidence', value: 0.8 }] },
      ],
      10,
    );
    expect(ranked.map((r) => r.item)).toEqual(['confident', 'doubtful']);
  });
});
