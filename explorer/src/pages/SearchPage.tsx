import { useInfiniteQuery, useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { request } from '../api.ts';
import { FactList } from '../components/FactList.tsx';
import type { Instants } from '../components/InstantControls.tsx';
import { Empty, ErrorNotice, Loading } from '../components/Status.tsx';
import {
  type ExplainedRankFragment,
  ExplorerRecallDocument,
  ExplorerSearchDocument,
  type ExplorerSearchQuery,
} from '../generated/operations.ts';
import { formatInstant } from '../instants.ts';
import { connectionPaging } from '../paging.ts';
import { LOOK_LABEL, lookOf } from '../statements.ts';
import { PAGE_SIZE } from './TimelinePage.tsx';

type Mode = 'words' | 'recall';

/**
 * Search: `q` over every fact's subject, predicate and object (every word must occur,
 * all states), or ranked recall of facts and memories replayed at ("true at", "as known
 * at"), each now when empty: what recall would have answered then, each result with why
 * it ranked. Recall is always asked with both instants, so browsing never stamps lastUsedAt.
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
    // Recall's instants when the fields are empty: the browser's clock when asked.
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
          validAt={instants.validAt ?? submitted.at}
          knownAt={instants.knownAt ?? submitted.at}
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
  validAt,
  knownAt,
  onWrongKey,
}: {
  apiKey: string;
  dataset: string;
  query: string;
  validAt: string;
  knownAt: string;
  onWrongKey: () => void;
}) {
  const query = useQuery({
    queryKey: ['recall', apiKey, dataset, text, validAt, knownAt],
    queryFn: ({ signal }) =>
      request(apiKey, ExplorerRecallDocument, { dataset, query: text, validAt, knownAt }, signal),
  });
  if (query.isPending) return <Loading what="recall" />;
  if (query.isError) {
    return (
      <ErrorNotice error={query.error} onWrongKey={onWrongKey} retry={() => query.refetch()} />
    );
  }
  const recall = query.data.dataset?.recall;
  if (!recall) return <Empty>There is no dataset "{dataset}" in this workspace.</Empty>;
  const byFact = new Map(recall.facts.map((r) => [r.fact.factId, r]));
  return (
    <>
      <p className="summary" data-testid="recall-instants">
        What recall would have answered with what the store knew at {formatInstant(knownAt)}, about
        what was true at {formatInstant(validAt)} (set "As known at" and "True at" above to replay
        another moment).
      </p>
      <h3>Facts</h3>
      {recall.facts.length === 0 ? (
        <Empty>No fact of that moment shares a word with the query.</Empty>
      ) : (
        <FactList
          dataset={dataset}
          facts={recall.facts.map((r) => r.fact)}
          label="Recalled facts"
          note={(fact) => {
            const recalled = byFact.get(fact.factId)!;
            return (
              <>
                relevance {recalled.relevanceScore.toFixed(2)}
                <WhyRanked explanation={recalled.explanation} />
              </>
            );
          }}
        />
      )}
      <h3>Memories</h3>
      {recall.memories.length === 0 ? (
        <Empty>No memory of that moment shares a word with the query.</Empty>
      ) : (
        <ul className="fact-list" aria-label="Recalled memories">
          {recall.memories.map(({ memory, relevanceScore, explanation }) => (
            <li key={memory.memoryId}>
              <span className="statement-text">{memory.text}</span>
              <span className="note">
                relevance {relevanceScore.toFixed(2)}
                <WhyRanked explanation={explanation} />
              </span>
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

/** On demand: the terms that matched with their weights, the factors and the score. */
function WhyRanked({ explanation }: { explanation: ExplainedRankFragment }) {
  return (
    <details className="why">
      <summary>Why this rank</summary>
      <table>
        <caption>BM25 terms (weight = idf × term frequency, normalised by length)</caption>
        <thead>
          <tr>
            <th scope="col">term</th>
            <th scope="col">weight</th>
            <th scope="col">in text</th>
            <th scope="col">in candidates</th>
          </tr>
        </thead>
        <tbody>
          {explanation.terms.map((t) => (
            <tr key={t.term} data-term={t.term}>
              <td>{t.term}</td>
              <td>{t.weight.toFixed(3)}</td>
              <td>{t.termFrequency}×</td>
              <td>{t.documentFrequency}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <p className="why-score">
        bm25 {explanation.bm25.toFixed(3)}
        {explanation.factors.map((f) => ` × ${f.name} ${f.value.toFixed(3)}`).join('')} = score{' '}
        {explanation.score.toFixed(3)}
      </p>
    </details>
  );
}
