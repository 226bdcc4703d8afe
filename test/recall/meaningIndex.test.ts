import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EMBEDDING_DIMENSIONS, EMBEDDING_SCALE } from '../../src/embeddings/embedder.js';
import { DatasetVectors } from '../../src/recall/meaningIndex.js';
import { propertySeed } from '../helpers/propertySeed.js';

/**
 * The vector index's search (src/recall/meaningIndex.ts): up to RESCORED (2,000) vectors it
 * is exact (every vector scored by its int8 dot product), so on generated datasets of that
 * size it answers what a plain scan over every vector answers: the `limit` best stored by
 * K, at or above the floor, best first. The seed varies per run and is printed;
 * PROPERTY_SEED repeats a run.
 */

const unit = (dot: number) => dot / (EMBEDDING_SCALE * EMBEDDING_SCALE);

const vectorArb = fc
  .array(fc.integer({ min: -127, max: 127 }), {
    minLength: EMBEDDING_DIMENSIONS,
    maxLength: EMBEDDING_DIMENSIONS,
  })
  .map((v) => Int8Array.from(v));

describe('the vector index', () => {
  it('answers what a scan of every vector answers', () => {
    const seed = propertySeed('vector index');
    let checked = 0;
    fc.assert(
      fc.property(
        fc.array(fc.tuple(vectorArb, fc.integer({ min: 0, max: 10 })), {
          minLength: 1,
          maxLength: 300,
        }),
        vectorArb,
        fc.integer({ min: 0, max: 10 }),
        fc.integer({ min: 1, max: 20 }),
        fc.double({ min: -0.3, max: 0.3, noNaN: true }),
        (docs, query, storedBy, limit, floor) => {
          const index = new DatasetVectors(0);
          index.add(
            docs.map(([vector, at], i) => ({
              _id: `d${i}`,
              vector,
              storedAt: new Date(at),
              embeddedAt: new Date(0),
            })),
          );
          const dot = (v: Int8Array) => v.reduce((sum, x, d) => sum + x * query[d]!, 0);
          const expected = docs
            .filter(([, at]) => at <= storedBy)
            .map(([v]) => unit(dot(v)))
            .filter((s) => s >= floor)
            .sort((a, b) => b - a)
            .slice(0, limit);
          const found = index.search(query, storedBy, limit, floor);
          expect(found.map((h) => h.similarity)).toEqual(expected);
          for (const hit of found) {
            const [vector, at] = docs[Number(hit.id.slice(1))]!;
            expect(at).toBeLessThanOrEqual(storedBy);
            expect(hit.similarity).toBe(unit(dot(vector)));
          }
          checked++;
        },
      ),
      { seed, numRuns: 100 },
    );
    expect(checked).toBe(100);
  });

  it('a document given a new vector is found by the new one only', () => {
    const index = new DatasetVectors(0);
    const v = (x: number) => Int8Array.from({ length: EMBEDDING_DIMENSIONS }, () => x);
    const doc = (vector: Int8Array) => ({
      _id: 'memory',
      vector,
      storedAt: new Date(0),
      embeddedAt: new Date(1),
    });
    index.add([doc(v(5)), { ...doc(v(-5)), _id: 'other' }]);
    index.add([doc(v(-5))]);
    expect(index.search(v(1), 1, 10, -10).map((h) => h.id)).toEqual(['memory', 'other']);
    expect(index.similarities(v(1), ['memory']).get('memory')).toBe(
      unit(-5 * EMBEDDING_DIMENSIONS),
    );
    // The floor: the mean of the others is what moves with the dataset.
    expect(index.floor(v(1), 0.24)).toBeCloseTo((0.24 + unit(-10 * EMBEDDING_DIMENSIONS)) / 2);
  });
});
