import { useInfiniteQuery, useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { request } from '../api.ts';
import { FactList } from '../components/FactList.tsx';
import type { Instants } from '../components/InstantControls.tsx';
import { Empty, ErrorNotice, Loading } from '../components/Status.tsx';
import {
  ExplorerRecallDocument,
  ExplorerSearchDocument,
  type ExplorerSearchQuery,
} from '../generated/operations.ts';
import { connectionPaging } from '../paging.ts';
import { LOOK_LABEL, lookOf } from '../statements.ts';
import { PAGE_SIZE } from './TimelinePage.tsx';

type Mode = 'words' | 'recall';

/**
 * Search: `q` over every fact's subject, predicate and object (every word must occur,
 * all states), or ranked recall of facts and memories live at "as known at" (now when
 * empty). Recall is always asked with asOf, so browsing never stamps lastUsedAt.
 */
export function SearchPage({
  apiKey,
  dataset,
  instants,
  onWrongKey,
}: {
  apiKey: string;
  dataset: string;
  instants: Instants;
  onWrongKey: () => void;
}) {
  const [draft, setDraft] = useState('');
  const [mode, setMode] = useState<Mode>('words');
  const [submitted, setSubmitted] = useState<{ text: string; mode: Mode; at: string } | null>(null);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const text = draft.trim();
    // Recall's asOf when "as known at" is empty: the browser's clock when asked.
    setSubmitted(text ? { text, mode, at: new Date().toISOString() } : null);
  };
  return (
    <section className="search-page">
      <h2>Search</h2>
      <form className="search-form" onSubmit={submit}>
        <label htmlFor="search-text">Words</label>
        <input
          id="search-text"
          type="search"
          value={draft}
          maxLength={2000}
          placeholder="corolla"
          onChange={(e) => setDraft(e.currentTarget.value)}
        />
        <fieldset className="modes">
          <legend>How</legend>
          <label>
            <input
              type="radio"
              name="mode"
              checked={mode === 'words'}
              onChange={() => setMode('words')}
            />{' '}
            Facts containing every word
          </label>
          <label>
            <input
              type="radio"
              name="mode"
              checked={mode === 'recall'}
              onChange={() => setMode('recall')}
            />{' '}
            Ranked recall (facts and memories)
          </label>
        </fieldset>
        <button type="submit">Search</button>
      </form>
      {!submitted ? (
        <Empty>Type words and press Enter.</Empty>
      ) : submitted.mode === 'words' ? (
        <WordResults
          apiKey={apiKey}
          dataset={dataset}
          q={submitted.text}
          instants={instants}
          onWrongKey={onWrongKey}
        />
      ) : (
        <RecallResults
          apiKey={apiKey}
          dataset={dataset}
          query={submitted.text}
          asOf={instants.knownAt ?? submitted.at}
          onWrongKey={onWrongKey}
        />
      )}
    </section>
  );
}

function WordResults({
  apiKey,
  dataset,
  q,
  instants,
  onWrongKey,
}: {
  apiKey: string;
  dataset: string;
  q: string;
  instants: Instants;
  onWrongKey: () => void;
}) {
  const query = useInfiniteQuery({
    queryKey: ['search', apiKey, dataset, q, instants.validAt, instants.knownAt],
    queryFn: ({ pageParam, signal }) =>
      request(
        apiKey,
        ExplorerSearchDocument,
        {
          dataset,
          q,
          first: PAGE_SIZE,
          after: pageParam,
          withCounts: pageParam === null,
          validAt: instants.validAt,
          knownAt: instants.knownAt,
        },
        signal,
      ),
    ...connectionPaging((page: ExplorerSearchQuery) => page.dataset?.facts.pageInfo),
  });
  if (query.isPending) return <Loading what="matching facts" />;
  if (query.isError) {
    return (
      <ErrorNotice error={query.error} onWrongKey={onWrongKey} retry={() => query.refetch()} />
    );
  }
  const facts = query.data.pages.flatMap((p) => p.dataset?.facts.edges.map((e) => e.node) ?? []);
  if (facts.length === 0) return <Empty>No fact contains every one of those words.</Empty>;
  return (
    <>
      <p className="summary">{query.data.pages[0]?.dataset?.facts.totalCount} facts match.</p>
      <FactList
        dataset={dataset}
        facts={facts}
        label="Matching facts"
        note={(fact) => {
          const look = lookOf(facts.find((f) => f.factId === fact.factId)!);
          return <span className={`badge look-${look}`}>{LOOK_LABEL[look]}</span>;
        }}
      />
      {query.hasNextPage && (
        <button type="button" className="load-more" onClick={() => void query.fetchNextPage()}>
          Load more
        </button>
      )}
    </>
  );
}

function RecallResults({
  apiKey,
  dataset,
  query: text,
  asOf,
  onWrongKey,
}: {
  apiKey: string;
  dataset: string;
  query: string;
  asOf: string;
  onWrongKey: () => void;
}) {
  const query = useQuery({
    queryKey: ['recall', apiKey, dataset, text, asOf],
    queryFn: ({ signal }) =>
      request(apiKey, ExplorerRecallDocument, { dataset, query: text, asOf }, signal),
  });
  if (query.isPending) return <Loading what="recall" />;
  if (query.isError) {
    return (
      <ErrorNotice error={query.error} onWrongKey={onWrongKey} retry={() => query.refetch()} />
    );
  }
  const recall = query.data.dataset?.recall;
  if (!recall) return <Empty>There is no dataset "{dataset}" in this workspace.</Empty>;
  const scores = new Map(recall.facts.map((r) => [r.fact.factId, r.relevanceScore]));
  return (
    <>
      <h3>Facts</h3>
      {recall.facts.length === 0 ? (
        <Empty>No live fact shares a word with the query.</Empty>
      ) : (
        <FactList
          dataset={dataset}
          facts={recall.facts.map((r) => r.fact)}
          label="Recalled facts"
          note={(fact) => `relevance ${(scores.get(fact.factId) ?? 0).toFixed(2)}`}
        />
      )}
      <h3>Memories</h3>
      {recall.memories.length === 0 ? (
        <Empty>No live memory shares a word with the query.</Empty>
      ) : (
        <ul className="fact-list" aria-label="Recalled memories">
          {recall.memories.map(({ memory, relevanceScore }) => (
            <li key={memory.memoryId}>
              <span className="statement-text">{memory.text}</span>
              <span className="note">relevance {relevanceScore.toFixed(2)}</span>
            </li>
          ))}
        </ul>
      )}
    </>
  );
}
