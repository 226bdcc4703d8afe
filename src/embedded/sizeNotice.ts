import type { Collections } from '../store/database.js';
import { type DatasetSize, datasetSizes } from '../store/size.js';

/**
 * Where the embedded store stops being quick. The embedded FerretDB decodes, sorts and
 * counts every fact of the dataset a list asks for (embedded-db/README.md), so a list's
 * time grows with its dataset; past this many facts in one dataset it takes more than
 * about half a second on the measured curve (docs/PERFORMANCE.md, "The embedded store's
 * curve"). Other datasets stay quick whatever their neighbours hold.
 */
export const SLOW_DATASET_FACTS = 2_500;

const count = (n: number) => n.toLocaleString('en-US');

/**
 * What the embedded store says about its size at start-up and after an import: a summary
 * line, and, when a dataset is past SLOW_DATASET_FACTS, one warning naming it and the way
 * out (MongoDB through MONGODB_URI).
 */
export function sizeNotice(sizes: readonly DatasetSize[]): {
  summary: string;
  warning: string | null;
} {
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
  const slow = sizes.filter((s) => s.facts > SLOW_DATASET_FACTS);
  if (slow.length === 0) return { summary, warning: null };
  const named = slow
    .slice(0, 3)
    .map((s) => `"${s.dataset}" (${count(s.facts)})`)
    .join(', ');
  const more = slow.length > 3 ? ` and ${slow.length - 3} more` : '';
  return {
    summary,
    warning: `Warning: ${named}${more} hold${slow.length === 1 ? 's' : ''} more than ${count(SLOW_DATASET_FACTS)} facts: on the embedded database every list and write on such a dataset takes more than half a second, growing with its size (docs/PERFORMANCE.md). For data this size run MongoDB and set MONGODB_URI (README, "Configuration"); npm run export and npm run import move the data.`,
  };
}

/** Counts the embedded store's facts per dataset and says what sizeNotice says. */
export async function reportEmbeddedSize(db: Collections, say: (line: string) => void) {
  const { summary, warning } = sizeNotice(await datasetSizes(db));
  say(summary);
  if (warning) say(warning);
}
