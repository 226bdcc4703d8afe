/*
 * The texts the tools answer beside their structured content: what the model reads, one
 * line per fact, memory or change, each with the id another tool takes.
 */

import type {
  McpFactFragment,
  McpMemoryFragment,
  McpWhatChangedQuery,
} from '../../generated/operations.js';

/** One fact as a line the model reads: the statement, both time axes, its id. */
function factLine(f: McpFactFragment): string {
  const valid = `valid from ${f.validAt}${f.validUntil ? ` until ${f.validUntil}` : ''}`;
  const believed = f.invalidAt
    ? `; ${f.invalidReason === 'DELETED' ? 'deleted' : 'superseded'} ${f.invalidAt}`
    : '';
  return `- ${f.subject} ${f.predicate} ${f.object} (${valid}; recorded ${f.recordedAt}${believed}) [fact ${f.factId}]`;
}

const memoryLine = (m: McpMemoryFragment) =>
  `- ${m.text} [memory ${m.memoryId}, version ${m.version}${m.pinned ? ', pinned' : ''}]`;

const listed = (lines: string[], none: string) => (lines.length ? lines.join('\n') : none);

const factCount = (count: number) => `${count} fact${count === 1 ? '' : 's'}`;

export const recallText = (context: string) =>
  context || 'Nothing in this dataset matches the query.';

export const factPageText = (facts: McpFactFragment[], total: number, nextCursor: string | null) =>
  `${factCount(total)}${nextCursor ? ` (more: cursor ${nextCursor})` : ''}\n${listed(facts.map(factLine), 'None.')}`;

export const entityFactsText = (entity: { name: string; type: string }, facts: McpFactFragment[]) =>
  `${entity.name} (${entity.type}):\n${listed(facts.map(factLine), 'No facts.')}`;

export const factHistoryText = (
  fact: McpFactFragment & { supersededBy: McpFactFragment | null },
  history: McpFactFragment[],
) =>
  [
    factLine(fact),
    ...(fact.supersededBy ? [`Superseded by:\n${factLine(fact.supersededBy)}`] : []),
    `History of "${fact.subject} ${fact.predicate}":`,
    listed(history.map(factLine), 'None.'),
  ].join('\n');

export const deletedFactText = (factId: string) => `Deleted fact ${factId}.`;

type Change = NonNullable<McpWhatChangedQuery['dataset']>['changes']['edges'][number]['node'];

function changeLine(c: Change): string {
  const what = c.fact
    ? factLine(c.fact).slice(2)
    : c.memory
      ? `memory ${c.memory.memoryId} (version ${c.memory.version}): ${c.memory.text}`
      : c.episode
        ? `episode ${c.episode.episodeId} (${c.episode.source}, ${c.episode.occurredAt})`
        : JSON.stringify(c.erased);
  return `- ${c.at} ${c.kind}: ${what}`;
}

export const changesText = (changes: Change[], resume: string | null, hasMore: boolean) =>
  `${listed(changes.map(changeLine), 'No changes.')}\nResume with after: ${resume ?? '(none yet)'}${hasMore ? ' (more now)' : ''}`;

export const datasetsText = (datasets: { name: string; createdAt: string }[]) =>
  listed(
    datasets.map((d) => `- ${d.name} (since ${d.createdAt})`),
    'No datasets yet.',
  );

/**
 * What record_episode recorded: the stored facts and what they superseded in full for a
 * key that may read (`facts`, `superseded`), else their ids.
 */
export const recordedText = (
  recorded: { outcome: string; episodeId: string; factIds: string[]; supersededIds: string[] },
  facts: McpFactFragment[] | null,
  superseded: McpFactFragment[] | undefined,
) =>
  [
    `${recorded.outcome}: episode ${recorded.episodeId}, ${factCount(recorded.factIds.length)}`,
    ...(facts ? facts.map(factLine) : recorded.factIds.map((id) => `- fact ${id}`)),
    ...(superseded?.length
      ? ['Superseded:', ...superseded.map(factLine)]
      : recorded.supersededIds.length
        ? [`Superseded: ${recorded.supersededIds.join(', ')}`]
        : []),
  ].join('\n');

/** What a memory write did, with the memory in full for a key that may read (`full`). */
export const writtenMemoryText = (
  done: string,
  memory: { memoryId: string; version: number },
  full: McpMemoryFragment | null,
) =>
  `${done}:\n${full ? memoryLine(full) : `- memory ${memory.memoryId}, version ${memory.version}`}`;
