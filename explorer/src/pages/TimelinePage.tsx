import { useInfiniteQuery, useQueryClient } from '@tanstack/react-query';
import { useCallback, useMemo } from 'react';
import { request } from '../api.ts';
import type { Instants } from '../components/InstantControls.tsx';
import { Empty, ErrorNotice, Loading } from '../components/Status.tsx';
import { Timeline } from '../components/Timeline.tsx';
import { useFactsById } from '../factsById.ts';
import { ExplorerTimelineDocument, type ExplorerTimelineQuery } from '../generated/operations.ts';
import { formatInstant } from '../instants.ts';
import { type LiveState, useLiveChanges } from '../live.ts';
import { connectionPaging } from '../paging.ts';
import { groupStatements, LOOK_LABEL, lookOf } from '../statements.ts';

/** The gateway's largest page (docs/GRAPHQL.md, "Query limits"). */
export const PAGE_SIZE = 100;

/**
 * A dataset's statements over valid time, as the store knew them at "as known at": every
 * fact recorded by then, coloured by its state at ("true at", "as known at"). Moving
 * either instant asks the gateway again; the previous answer stays on screen meanwhile.
 * While "as known at" is now, the page follows the dataset live: each change the gateway
 * pushes makes it ask again, so new facts appear and superseded ones restyle.
 */
export function TimelinePage({
  apiKey,
  dataset,
  instants,
  now,
  onWrongKey,
}: {
  apiKey: string;
  dataset: string;
  instants: Instants;
  now: Date;
  onWrongKey: () => void;
}) {
  const queryClient = useQueryClient();
  const live = useLiveChanges(apiKey, dataset, instants.knownAt === null, () => {
    void queryClient.invalidateQueries({ queryKey: ['timeline', apiKey, dataset] });
  });
  const query = useInfiniteQuery({
    queryKey: ['timeline', apiKey, dataset, instants.validAt, instants.knownAt],
    queryFn: ({ pageParam, signal }) =>
      request(
        apiKey,
        ExplorerTimelineDocument,
        {
          dataset,
          first: PAGE_SIZE,
          after: pageParam,
          validAt: instants.validAt,
          knownAt: instants.knownAt,
          withCounts: pageParam === null,
        },
        signal,
      ),
    ...connectionPaging((page: ExplorerTimelineQuery) => page.dataset?.facts.pageInfo),
  });
  // Facts a link led to before their page was loaded join the pages' (once each).
  const byId = useFactsById(apiKey, dataset, instants);
  const facts = useMemo(
    () => [
      ...(query.data?.pages ?? []).flatMap((page) =>
        (page.dataset?.facts.edges ?? []).map((edge) => edge.node),
      ),
      ...byId.facts,
    ],
    [query.data, byId.facts],
  );
  const statements = useMemo(() => groupStatements(facts), [facts]);
  const { fetchNextPage, isFetchingNextPage } = query;
  const loadMore = useCallback(() => {
    if (!isFetchingNextPage) void fetchNextPage();
  }, [fetchNextPage, isFetchingNextPage]);

  if (query.isPending) return <Loading what="the timeline" />;
  if (query.isError && !query.data) {
    return (
      <ErrorNotice error={query.error} onWrongKey={onWrongKey} retry={() => query.refetch()} />
    );
  }
  const first = query.data?.pages[0];
  if (!first?.dataset) {
    return <Empty>There is no dataset "{dataset}" in this workspace. Pick one above.</Empty>;
  }
  const total = first.dataset.facts.totalCount ?? 0;
  const counts = new Map<string, number>();
  for (const fact of facts) counts.set(lookOf(fact), (counts.get(lookOf(fact)) ?? 0) + 1);
  const axis = {
    now,
    validAt: instants.validAt ? new Date(instants.validAt) : null,
    knownAt: instants.knownAt ? new Date(instants.knownAt) : null,
  };

  return (
    <section className="timeline-page" aria-busy={query.isFetching}>
      <p className="summary" data-testid="timeline-summary">
        {total} {total === 1 ? 'fact' : 'facts'} known{' '}
        {instants.knownAt ? `at ${formatInstant(instants.knownAt)}` : 'now'}, in {statements.length}{' '}
        {statements.length === 1 ? 'statement' : 'statements'}
        {facts.length < total ? ` (${facts.length} loaded)` : ''}. Believed true{' '}
        {instants.validAt ? `at ${formatInstant(instants.validAt)}` : 'now'}
        {instants.knownAt ? `, as known at ${formatInstant(instants.knownAt)}` : ''}:{' '}
        <strong data-testid="believed-count">{first.dataset.believed?.totalCount ?? 0}</strong>.
        {query.isFetching && !query.isFetchingNextPage ? ' Updating…' : ''}{' '}
        <LiveBadge state={live} />
      </p>
      {query.isError && (
        <ErrorNotice error={query.error} onWrongKey={onWrongKey} retry={() => query.refetch()} />
      )}
      {byId.error !== null && <ErrorNotice error={byId.error} onWrongKey={onWrongKey} />}
      <ul className="legend" aria-label="Colours, with the loaded facts of each">
        {(Object.keys(LOOK_LABEL) as (keyof typeof LOOK_LABEL)[]).map((look) => (
          <li key={look}>
            <span className={`swatch look-${look}`} /> {LOOK_LABEL[look]} ({counts.get(look) ?? 0})
          </li>
        ))}
      </ul>
      {statements.length === 0 ? (
        <Empty>
          The store knew no facts of this dataset{' '}
          {instants.knownAt ? 'at that instant; move "As known at" later' : 'yet'}.
        </Empty>
      ) : (
        <Timeline
          stale={query.isPlaceholderData}
          dataset={dataset}
          statements={statements}
          instants={axis}
          onNeedFact={byId.need}
          // A failed next page is not asked for again by scrolling: the notice offers Retry.
          hasMore={Boolean(query.hasNextPage) && !query.isFetchNextPageError}
          loadingMore={isFetchingNextPage}
          onLoadMore={loadMore}
        />
      )}
    </section>
  );
}

const LIVE_TEXT: Record<LiveState, string | null> = {
  live: 'Live: changes appear as they happen',
  connecting: 'Connecting to live changes…',
  refused: 'Live changes refused for this key',
  off: null,
};

/** Whether the timeline is following the dataset live (only while "as known at" is now). */
function LiveBadge({ state }: { state: LiveState }) {
  const text = LIVE_TEXT[state];
  if (!text) return null;
  return (
    <span
      className={`live-badge live-${state}`}
      data-testid="live-state"
      data-state={state}
      role="status"
    >
      {text}
    </span>
  );
}
