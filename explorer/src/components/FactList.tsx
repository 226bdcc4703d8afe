import type { ExplorerFactFragment } from '../generated/operations.ts';
import { formatInstant } from '../instants.ts';
import { href } from '../routes.ts';

/** Facts as a list: the statement, its valid interval and a note (a state, a score). */
export function FactList({
  dataset,
  facts,
  note,
  label,
}: {
  dataset: string;
  facts: readonly ExplorerFactFragment[];
  note?: (fact: ExplorerFactFragment) => React.ReactNode;
  label: string;
}) {
  return (
    <ul className="fact-list" aria-label={label}>
      {facts.map((fact) => (
        <li key={fact.factId} data-fact-id={fact.factId}>
          <span className="statement-text">
            <a href={href({ page: 'entity', dataset, name: fact.subject })}>{fact.subject}</a>{' '}
            <span className="predicate">{fact.predicate}</span>{' '}
            {fact.objectIsEntity ? (
              <a href={href({ page: 'entity', dataset, name: fact.object })}>{fact.object}</a>
            ) : (
              <span>{fact.object}</span>
            )}
          </span>
          <span className="meta">
            valid {formatInstant(fact.validAt)}
            {fact.validUntil ? ` → ${formatInstant(fact.validUntil)}` : ''}
            {fact.episodeId && (
              <>
                {' · '}
                <a href={href({ page: 'episode', dataset, episodeId: fact.episodeId })}>episode</a>
              </>
            )}
          </span>
          {note && <span className="note">{note(fact)}</span>}
        </li>
      ))}
    </ul>
  );
}
