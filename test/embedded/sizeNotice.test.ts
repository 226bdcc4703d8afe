import { describe, expect, it } from 'vitest';
import { loadDemoDataset } from '../../src/demo/seed.js';
import { SLOW_DATASET_FACTS, sizeNotice } from '../../src/embedded/sizeNotice.js';
import { datasetSizes } from '../../src/store/size.js';
import { importJsonl } from '../../src/transfer/importJsonl.js';
import { openTestDatabase } from '../helpers/database.js';

const size = (dataset: string, facts: number, workspace = 'w') => ({ workspace, dataset, facts });

describe('what the embedded store says about its size', () => {
  it('sums the facts and names the largest dataset; no warning up to the limit', () => {
    const notice = sizeNotice([size('a', 10), size('b', SLOW_DATASET_FACTS), size('c', 0)]);
    expect(notice.summary).toBe(
      `Embedded store: ${(SLOW_DATASET_FACTS + 10).toLocaleString('en-US')} facts in 3 datasets; the largest, "b" (workspace "w"), holds ${SLOW_DATASET_FACTS.toLocaleString('en-US')}.`,
    );
    expect(notice.warning).toBeNull();
  });

  it('warns once, naming the datasets past the limit and the way out', () => {
    const { warning } = sizeNotice([size('small', 5), size('big', SLOW_DATASET_FACTS + 1)]);
    expect(warning).toMatch(/^Warning: "big" \([\d,]+\) holds more than [\d,]+ facts: /);
    expect(warning).toContain('MONGODB_URI');
    const many = sizeNotice(
      ['d1', 'd2', 'd3', 'd4', 'd5'].map((d) => size(d, SLOW_DATASET_FACTS * 2)),
    ).warning;
    expect(many).toMatch(
      /^Warning: "d1" \([\d,]+\), "d2" \([\d,]+\), "d3" \([\d,]+\) and 2 more hold /,
    );
  });

  it('an empty store says so', () => {
    expect(sizeNotice([])).toEqual({ summary: 'Embedded store: no datasets yet.', warning: null });
  });

  it('counts every dataset of every workspace, each on its own facts', async () => {
    const { collections: db } = await openTestDatabase();
    await loadDemoDataset(db, 'one', new Date());
    await loadDemoDataset(db, 'two', new Date());
    const extra = Array.from({ length: 7 }, (_, i) =>
      JSON.stringify({
        type: 'fact',
        factId: `00000000-0000-4000-8000-00000000000${i}`,
        subject: 'user',
        predicate: 'likes',
        object: `thing ${i}`,
        confidence: 0.5,
        validAt: '2026-01-01',
      }),
    ).join('\n');
    await importJsonl(db, {
      workspace: 'two',
      content: extra,
      defaultDataset: 'extra',
      now: new Date(),
    });
    const sizes = await datasetSizes(db);
    const demo = sizes.find((s) => s.workspace === 'one')!.facts;
    expect(demo).toBeGreaterThan(0);
    expect(sizes).toEqual([
      { workspace: 'one', dataset: 'user_42', facts: demo },
      { workspace: 'two', dataset: 'extra', facts: 7 },
      { workspace: 'two', dataset: 'user_42', facts: demo },
    ]);
  });
});
