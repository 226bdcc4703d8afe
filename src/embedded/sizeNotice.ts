import type { Collections } from '../store/collections.js';
import { type DatasetSize, datasetSizes } from '../store/size.js';

const count = (n: number) => n.toLocaleString('en-US');

/**
 * What the embedded store says about its size at start-up and after an import: one summary
 * line. It once warned past 2,500 facts in a dataset, where lists took half a second; with
 * the store's queries index-served (embedded-db/README.md) no fact list, entity's facts or
 * episode reaches half a second up to 100,000 facts (docs/PERFORMANCE.md, "The embedded
 * store's curve"), so there is nothing to warn about.
 */
export function sizeNotice(sizes: readonly DatasetSize[]): { summary: string } {
  const facts = sizes.reduce((sum, s) => sum + s.facts, 0);
  const largest = sizes.reduce<DatasetSize | null>(
    (top, s) => (top === null || s.facts > top.facts ? s : top),
    null,
  );
  const datasets = `${count(sizes.length)} dataset${sizes.length === 1 ? '' : 's'}`;
  const summary =
    largest === null
      ? 'Embedded store: no datasets yet.'
      : `Embedded store: ${count(facts)} facts in ${datasets}; the largest, "${largest.dataset}" (workspace "${largest.workspace}"), holds ${count(largest.facts)}.`;
  return { summary };
}

/** Counts the embedded store's facts per dataset and says what sizeNotice says. */
export async function reportEmbeddedSize(db: Collections, say: (line: string) => void) {
  say(sizeNotice(await datasetSizes(db)).summary);
}
