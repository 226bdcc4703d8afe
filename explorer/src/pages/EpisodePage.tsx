import { useQuery } from '@tanstack/react-query';
import { request } from '../api.ts';
import type { Instants } from '../components/InstantControls.tsx';
import { Empty, ErrorNotice, Loading } from '../components/Status.tsx';
import { ExplorerEpisodeDocument } from '../generated/operations.ts';
import { formatInstant } from '../instants.ts';
import { href } from '../routes.ts';
import { LOOK_LABEL, lookOf } from '../statements.ts';

/** How many of an episode's facts the page asks for (ExplorerEpisode). */
const EPISODE_FACTS = 100;

/** An episode: its content and every fact it produced, with each one's state. */
export function EpisodePage({
  apiKey,
  dataset,
  episodeId,
  instants,
  onWrongKey,
}: {
  apiKey: string;
  dataset: string;
  episodeId: string;
  instants: Instants;
  onWrongKey: () => void;
}) {
  const query = useQuery({
    queryKey: ['episode', apiKey, dataset, episodeId, instants.validAt, instants.knownAt],
    queryFn: ({ signal }) =>
      request(
        apiKey,
        ExplorerEpisodeDocument,
        { dataset, episodeId, validAt: instants.validAt, knownAt: instants.knownAt },
        signal,
      ),
  });
  if (query.isPending) return <Loading what="the episode" />;
  if (query.isError) {
    return (
      <ErrorNotice error={query.error} onWrongKey={onWrongKey} retry={() => query.refetch()} />
    );
  }
  const episode = query.data.dataset?.episode;
  if (!episode) {
    return (
      <Empty>
        No episode {episodeId} in {dataset}.
      </Empty>
    );
  }
  if (instants.knownAt && episode.recordedAt > instants.knownAt) {
    return (
      <Empty>
        The store recorded this episode on {formatInstant(episode.recordedAt)}, after the "as known
        at" instant: it knew nothing of it then. Move "As known at" later, or empty it.
      </Empty>
    );
  }
  return (
    <section className="episode-page" data-testid="episode-page">
      <h2>Episode from {episode.source}</h2>
      <p className="summary">
        Occurred {formatInstant(episode.occurredAt)}, recorded {formatInstant(episode.recordedAt)}.
      </p>
      <blockquote className="episode-content">{episode.content}</blockquote>
      <h3>
        Facts it produced (
        {episode.facts.length === EPISODE_FACTS
          ? `the first ${EPISODE_FACTS}`
          : episode.facts.length}
        )
      </h3>
      {episode.facts.length === 0 ? (
        <Empty>This episode produced no facts.</Empty>
      ) : (
        <ul className="fact-list" aria-label="Facts from this episode">
          {episode.facts.map((fact) => {
            const look = lookOf(fact);
            return (
              <li key={fact.factId} data-fact-id={fact.factId} data-look={look}>
                <span className="statement-text">
                  <a href={href({ page: 'entity', dataset, name: fact.subject })}>{fact.subject}</a>{' '}
                  <span className="predicate">{fact.predicate}</span> {fact.object}
                </span>
                <span className={`badge look-${look}`}>{LOOK_LABEL[look]}</span>
                {look === 'superseded' && fact.supersededBy && (
                  <span className="meta">
                    → {fact.supersededBy.subject} {fact.supersededBy.predicate}{' '}
                    {fact.supersededBy.object}
                  </span>
                )}
                {fact.sourceQuote && (
                  <span className="meta">
                    <q>{fact.sourceQuote}</q>
                  </span>
                )}
              </li>
            );
          })}
        </ul>
      )}
    </section>
  );
}
