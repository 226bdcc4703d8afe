import { useInfiniteQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { request } from '../api.ts';
import { InstantInput } from '../components/InstantControls.tsx';
import { Empty, ErrorNotice, Loading } from '../components/Status.tsx';
import {
  ExplorerMemoriesDocument,
  type ExplorerMemoriesQuery,
  type ExplorerMemoryFragment,
} from '../generated/operations.ts';
import { formatInstant } from '../instants.ts';
import { connectionPaging } from '../paging.ts';
import { PAGE_SIZE } from './TimelinePage.tsx';

type MemoryStatus = 'live' | 'archived' | 'superseded';

/**
 * A memory's status at `at`: superseded once its validity ended, else archived once it
 * was archived (today's archivedAt: the API keeps no history of it), else live.
 */
function statusOf(memory: ExplorerMemoryFragment, at: Date): MemoryStatus {
  const reached = (instant: string | null) =>
    instant !== null && Date.parse(instant) <= at.getTime();
  if (reached(memory.validUntil)) return 'superseded';
  if (reached(memory.archivedAt)) return 'archived';
  return 'live';
}

/**
 * Memories, SupaCloud's model: the live view, with archived and superseded ones on
 * request, optionally reconstructed as of an instant (validity then, metadata today).
 */
export function MemoriesPage({
  apiKey,
  dataset,
  now,
  onWrongKey,
}: {
  apiKey: string;
  dataset: string;
  now: Date;
  onWrongKey: () => void;
}) {
  const [includeArchived, setIncludeArchived] = useState(true);
  const [includeSuperseded, setIncludeSuperseded] = useState(true);
  const [asOf, setAsOf] = useState<string | null>(null);
  const query = useInfiniteQuery({
    queryKey: ['memories', apiKey, dataset, includeArchived, includeSuperseded, asOf],
    queryFn: ({ pageParam, signal }) =>
      request(
        apiKey,
        ExplorerMemoriesDocument,
        {
          dataset,
          first: PAGE_SIZE,
          after: pageParam,
          withCounts: pageParam === null,
          asOf,
          includeArchived,
          includeSuperseded,
        },
        signal,
      ),
    ...connectionPaging((page: ExplorerMemoriesQuery) => page.dataset?.memories.pageInfo),
  });
  const at = asOf ? new Date(asOf) : now;
  return (
    <section className="memories-page">
      <h2>Memories</h2>
      <fieldset className="instants">
        <legend>Which memories</legend>
        <label>
          <input
            type="checkbox"
            checked={includeArchived}
            onChange={(e) => setIncludeArchived(e.currentTarget.checked)}
          />{' '}
          Archived
        </label>
        <label>
          <input
            type="checkbox"
            checked={includeSuperseded}
            onChange={(e) => setIncludeSuperseded(e.currentTarget.checked)}
          />{' '}
          Superseded
        </label>
        <InstantInput
          label="As of"
          hint="UTC; empty: now"
          value={asOf}
          testId="memories-as-of"
          onChange={setAsOf}
        />
      </fieldset>
      {query.isPending ? (
        <Loading what="memories" />
      ) : query.isError && !query.data ? (
        <ErrorNotice error={query.error} onWrongKey={onWrongKey} retry={() => query.refetch()} />
      ) : !query.data.pages[0]?.dataset ? (
        <Empty>There is no dataset "{dataset}" in this workspace.</Empty>
      ) : (
        <MemoryList
          memories={query.data.pages.flatMap(
            (p) => p.dataset?.memories.edges.map((e) => e.node) ?? [],
          )}
          total={query.data.pages[0].dataset.memories.totalCount ?? 0}
          at={at}
          more={query.hasNextPage ? () => void query.fetchNextPage() : null}
        />
      )}
    </section>
  );
}

function MemoryList({
  memories,
  total,
  at,
  more,
}: {
  memories: ExplorerMemoryFragment[];
  total: number;
  at: Date;
  more: (() => void) | null;
}) {
  if (memories.length === 0)
    return <Empty>No memory matches; include archived or superseded ones, or move "as of".</Empty>;
  return (
    <>
      <p className="summary">{total} memories.</p>
      <ul className="memory-list" aria-label="Memories">
        {memories.map((memory) => {
          const status = statusOf(memory, at);
          return (
            <li key={memory.memoryId} data-status={status}>
              <p className="memory-text">
                {memory.pinned && <span className="badge">pinned</span>} {memory.text}
              </p>
              <p className="meta">
                <span className={`badge memory-${status}`}>{status}</span> {memory.memoryKind} ·
                importance {memory.importance.toFixed(2)} · salience {memory.salience.toFixed(2)} ·
                v{memory.version} · valid {formatInstant(memory.validFrom)}
                {memory.validUntil ? ` → ${formatInstant(memory.validUntil)}` : ''}
                {memory.archivedAt ? ` · archived ${formatInstant(memory.archivedAt)}` : ''}
              </p>
            </li>
          );
        })}
      </ul>
      {more && (
        <button type="button" className="load-more" onClick={more}>
          Load more
        </button>
      )}
    </>
  );
}
