import { describe, expect, it } from 'vitest';
import { loadDemoDataset } from '../../src/demo/seed.js';
import { sizeNotice } from '../../src/embedded/sizeNotice.js';
import { datasetSizes } from '../../src/store/size.js';
import { importJsonl } from '../../src/transfer/importJsonl.js';
import { openTestDatabase } from '../helpers/database.js';

const size = (dataset: string, facts: number, workspace = 'w') => ({ workspace, dataset, facts });

describe('what the embedded store says about its size', () => {
  it('sums the facts and names the largest dataset, and warns of nothing, even at 100,000', () => {
    const notice = sizeNotice([size('a', 10), size('b', 100_000), size('c', 0)]);
    expect(notice).toEqual({
      summary:
        'Embedded store: 100,010 facts in 3 datasets; the largest, "b" (workspace "w"), holds 100,000.',
    });
  });

  it('an empty store says so', () => {
    expect(sizeNotice([])).toEqual({ summary: 'Embedded store: no datasets yet.' });
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
