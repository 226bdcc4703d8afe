import type { Ref } from 'react';
import type { TimelineFactFragment } from '../generated/operations.ts';
import { formatInstant } from '../instants.ts';
import { href } from '../routes.ts';
import { LOOK_LABEL, lookOf } from '../statements.ts';

/**
 * What the timeline shows for the fact under the pointer or the focus: the statement,
 * its state at the chosen instants, confidence, both time axes, the source quote and
 * episode, and a link to the fact that superseded it. What the store learned after the
 * "as known at" instant (a later invalidation) is left out. Enter on a fact brings the
 * focus here (its links come next); Escape takes it back to the fact.
 */
export function FactDetails({
  ref,
  dataset,
  fact,
  onFollow,
  onClose,
}: {
  ref: Ref<HTMLElement>;
  dataset: string;
  fact: TimelineFactFragment | null;
  onFollow: (factId: string) => void;
  onClose: () => void;
}) {
  if (!fact) {
    return (
      <aside className="details" aria-label="Fact details" ref={ref} tabIndex={-1}>
        <p className="hint">
          Point at or tab to a fact to see its details; Enter moves into them, Escape back.
        </p>
      </aside>
    );
  }
  const look = lookOf(fact);
  const invalidated = look === 'superseded' || look === 'deleted';
  return (
    <aside
      className="details"
      aria-label="Fact details"
      data-testid="details"
      ref={ref}
      tabIndex={-1}
      onKeyDown={(event) => {
        if (event.key === 'Escape') onClose();
      }}
    >
      <h3>
        <a href={href({ page: 'entity', dataset, name: fact.subject })}>{fact.subject}</a>{' '}
        <span className="predicate">{fact.predicate}</span>{' '}
        {fact.objectIsEntity ? (
          <a href={href({ page: 'entity', dataset, name: fact.object })}>{fact.object}</a>
        ) : (
          fact.object
        )}
      </h3>
      <p>
        <span className={`badge look-${look}`}>{LOOK_LABEL[look]}</span> confidence{' '}
        {fact.confidence.toFixed(2)}
      </p>
      <dl>
        <dt>Valid</dt>
        <dd>
          {formatInstant(fact.validAt)} →{' '}
          {fact.validUntil ? formatInstant(fact.validUntil) : 'open'}
        </dd>
        <dt>Recorded</dt>
        <dd>{formatInstant(fact.recordedAt)}</dd>
        {invalidated && fact.invalidAt && (
          <>
            <dt>{look === 'deleted' ? 'Deleted' : 'Superseded'}</dt>
            <dd>{formatInstant(fact.invalidAt)}</dd>
          </>
        )}
        {fact.sourceQuote && (
          <>
            <dt>Source quote</dt>
            <dd>
              <q>{fact.sourceQuote}</q>
            </dd>
          </>
        )}
        {fact.episode && (
          <>
            <dt>Episode</dt>
            <dd>
              <a href={href({ page: 'episode', dataset, episodeId: fact.episode.episodeId })}>
                {fact.episode.source}, {formatInstant(fact.episode.occurredAt)}
              </a>
            </dd>
          </>
        )}
      </dl>
      {look === 'superseded' && fact.supersededBy && (
        <p>
          Superseded by{' '}
          <FollowFact fact={fact.supersededBy} onFollow={onFollow} testId="follow-successor" />
        </p>
      )}
      {fact.correctedBy && (
        <p data-testid="corrected-version">
          The corrected history of this statement: true until{' '}
          <FollowFact fact={fact.correctedBy} onFollow={onFollow} testId="follow-corrected-by" />{' '}
          began, as known from {formatInstant(fact.recordedAt)}.
        </p>
      )}
      <p className="fact-id">factId {fact.factId}</p>
    </aside>
  );
}

/** A link to another fact, by its statement: following it opens that fact. */
function FollowFact({
  fact,
  onFollow,
  testId,
}: {
  fact: { factId: string; subject: string; predicate: string; object: string };
  onFollow: (factId: string) => void;
  testId: string;
}) {
  return (
    <button
      type="button"
      className="link"
      onClick={() => onFollow(fact.factId)}
      data-testid={testId}
    >
      {fact.subject} {fact.predicate} {fact.object}
    </button>
  );
}
