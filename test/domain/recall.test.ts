import { describe, expect, it } from 'vitest';
import { factFactor, memoryFactor, rank, recallContext } from '../../src/domain/recall.js';

const at = new Date('2026-12-01T00:00:00.000Z');
const candidate = (id: string, text: string, factor = 1, time = at) => ({
  item: id,
  text,
  factor,
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
      4,
      10,
    );
    // c and d score alike at the same time: the greater id first.
    expect(ranked.map((r) => r.item)).toEqual(['b', 'a', 'd', 'c']);
    expect(ranked[0]!.relevanceScore).toBe(1);
    // "apple" is in 2 of 4, "red" in 3 of 4: the apple match outweighs the red one.
    expect(ranked[1]!.relevanceScore).toBeGreaterThan(ranked[2]!.relevanceScore);
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
