import { keepPreviousData, useInfiniteQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { request } from '../api.ts';
import { FactList } from '../components/FactList.tsx';
import { InstantInput } from '../components/InstantControls.tsx';
import { Empty, ErrorNotice, Loading } from '../components/Status.tsx';
import { ExplorerChangesDocument } from '../generated/operations.ts';
import { formatInstant } from '../instants.ts';
import { DONE, type ListCursor, nextCursors } from '../paging.ts';
import { PAGE_SIZE } from './TimelinePage.tsx';

const YEAR_MS = 365 * 86_400_000;

const plural = (n: number, noun: string) => `${n} ${noun}${n === 1 ? '' : 's'}`;

const START: Record<'learned' | 'dropped', ListCursor> = { learned: null, dropped: null };

/**
 * What changed in what the store believed between two known-at instants: facts learned
 * (recorded in between) and facts superseded or deleted in between, each with the fact
 * that replaced it.
 */
export function ChangesPage({
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
  const [since, setSince] = useState(() => new Date(now.getTime() - YEAR_MS).toISOString());
  const [until, setUntil] = useState(() => now.toISOString());
  const ordered = since < until;
  const query = useInfiniteQuery({
    queryKey: ['changes', apiKey, dataset, since, until],
    enabled: ordered,
    queryFn: ({ pageParam, signal }) =>
      request(
        apiKey,
        ExplorerChangesDocument,
        {
          dataset,
          since,
          until,
          first: PAGE_SIZE,
          withCounts: pageParam === START,
          withLearned: pageParam.learned !== DONE,
          learnedAfter: pageParam.learned === DONE ? null : pageParam.learned,
          withDropped: pageParam.dropped !== DONE,
          droppedAfter: pageParam.dropped === DONE ? null : pageParam.dropped,
        },
        signal,
      ),
    initialPageParam: START,
    getNextPageParam: (last, _pages, asked) =>
      nextCursors(asked, {
        learned: last.dataset?.learned?.pageInfo,
        dropped: last.dataset?.dropped?.pageInfo,
      }),
    placeholderData: keepPreviousData,
  });
  const pages = query.data?.pages ?? [];
  const learned = pages.flatMap((p) => p.dataset?.learned?.edges.map((e) => e.node) ?? []);
  const dropped = pages.flatMap((p) => p.dataset?.dropped?.edges.map((e) => e.node) ?? []);
  const superseded = dropped.filter((f) => f.invalidReason === 'SUPERSEDED');
  const deleted = dropped.filter((f) => f.invalidReason === 'DELETED');
  const totals = pages[0]?.dataset;

  return (
    <section className="changes-page">
      <h2>What changed</h2>
      <fieldset className="instants">
        <legend>Between two known-at instants (UTC)</legend>
        <InstantInput
          label="Known after"
          value={since}
          testId="changes-since"
          nullable={false}
          onChange={(value) => value && setSince(value)}
        />
        <InstantInput
          label="Known by"
          value={until}
          testId="changes-until"
          nullable={false}
          onChange={(value) => value && setUntil(value)}
        />
      </fieldset>
      {!ordered ? (
        <p className="status error" role="alert">
          "Known after" must be before "known by".
        </p>
      ) : query.isPending ? (
        <Loading what="changes" />
      ) : query.isError && !query.data ? (
        <ErrorNotice error={query.error} onWrongKey={onWrongKey} retry={() => query.refetch()} />
      ) : !pages[0]?.dataset ? (
        <Empty>There is no dataset "{dataset}" in this workspace.</Empty>
      ) : (
        <div className="changes" data-testid="changes">
          <p className="summary">
            Between {formatInstant(since)} and {formatInstant(until)} the store learned{' '}
            {plural(totals?.learned?.totalCount ?? 0, 'fact')}, and stopped believing{' '}
            {plural(totals?.dropped?.totalCount ?? 0, 'fact')}
            {query.hasNextPage ? ' (loaded so far: ' : ' ('}
            {superseded.length} superseded, {deleted.length} deleted).
          </p>
          <h3>Learned</h3>
          {learned.length ? (
            <FactList
              dataset={dataset}
              facts={learned}
              label="Facts learned"
              note={(f) => `recorded ${formatInstant(f.recordedAt)}`}
            />
          ) : (
            <Empty>Nothing learned in between.</Empty>
          )}
          <h3>Superseded</h3>
          {superseded.length ? (
            <ul className="fact-list" aria-label="Facts superseded">
              {superseded.map((fact) => (
                <li key={fact.factId} data-fact-id={fact.factId}>
                  <span className="statement-text">
                    <s>
                      {fact.subject} {fact.predicate} {fact.object}
                    </s>
                    {fact.supersededBy && (
                      <>
                        {' → '}
                        <strong>
                          {fact.supersededBy.subject} {fact.supersededBy.predicate}{' '}
                          {fact.supersededBy.object}
                        </strong>
                      </>
                    )}
                  </span>
                  <span className="meta">
                    superseded {fact.invalidAt ? formatInstant(fact.invalidAt) : ''}
                  </span>
                </li>
              ))}
            </ul>
          ) : (
            <Empty>Nothing superseded in between.</Empty>
          )}
          <h3>Deleted</h3>
          {deleted.length ? (
            <FactList
              dataset={dataset}
              facts={deleted}
              label="Facts deleted"
              note={(f) => `deleted ${f.invalidAt ? formatInstant(f.invalidAt) : ''}`}
            />
          ) : (
            <Empty>Nothing deleted in between.</Empty>
          )}
          {query.hasNextPage && (
            <button
              type="button"
              className="load-more"
              onClick={() => void query.fetchNextPage()}
              disabled={query.isFetchingNextPage}
            >
              {query.isFetchingNextPage ? 'Loading more…' : 'Load more changes'}
            </button>
          )}
        </div>
      )}
    </section>
  );
}
