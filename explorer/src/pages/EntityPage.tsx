import { useQuery } from '@tanstack/react-query';
import { useMemo } from 'react';
import { request } from '../api.ts';
import type { Instants } from '../components/InstantControls.tsx';
import { Empty, ErrorNotice, Loading } from '../components/Status.tsx';
import { Timeline } from '../components/Timeline.tsx';
import { useFactsById } from '../factsById.ts';
import { ExplorerEntityDocument } from '../generated/operations.ts';
import { formatInstant } from '../instants.ts';
import { groupStatements } from '../statements.ts';

/**
 * An entity: the facts that mention it and were believed true at the chosen instants (now,
 * when empty), each drawn with its statement's history (every fact with the same subject
 * and predicate the store knew then), on the same timeline.
 */
export function EntityPage({
  apiKey,
  dataset,
  name,
  instants,
  now,
  onWrongKey,
}: {
  apiKey: string;
  dataset: string;
  name: string;
  instants: Instants;
  now: Date;
  onWrongKey: () => void;
}) {
  const query = useQuery({
    queryKey: ['entity', apiKey, dataset, name, instants.validAt, instants.knownAt],
    queryFn: ({ signal }) =>
      request(
        apiKey,
        ExplorerEntityDocument,
        { dataset, name, validAt: instants.validAt, knownAt: instants.knownAt },
        signal,
      ),
  });
  const entity = query.data?.dataset?.entity ?? null;
  const byId = useFactsById(apiKey, dataset, instants);
  // A statement's history as the store knew it then: nothing recorded after "as known at";
  // and any fact a link led to.
  const statements = useMemo(
    () =>
      groupStatements(
        [...(entity?.facts.flatMap((f) => f.history) ?? []), ...byId.facts].filter(
          (fact) => !instants.knownAt || fact.recordedAt <= instants.knownAt,
        ),
      ),
    [entity, instants.knownAt, byId.facts],
  );
  if (query.isPending) return <Loading what={`the entity "${name}"`} />;
  if (query.isError) {
    return (
      <ErrorNotice error={query.error} onWrongKey={onWrongKey} retry={() => query.refetch()} />
    );
  }
  if (!entity) {
    return (
      <Empty>
        No entity named "{name}" in {dataset}. Entity names are looked up lower-cased.
      </Empty>
    );
  }
  return (
    <section className="entity-page" data-testid="entity-page">
      <h2>
        {entity.name} <span className="badge">{entity.type}</span>
      </h2>
      <p className="summary">
        {instants.knownAt ? '' : `Last mentioned ${formatInstant(entity.updatedAt)}. `}
        {entity.facts.length} {entity.facts.length === 1 ? 'fact' : 'facts'} believed true
        {instants.validAt || instants.knownAt ? ' at the chosen instants' : ' now'}
        {entity.facts.length === 50 ? ' (the first 50)' : ''} mention it; each row is that
        statement's history (its latest 10 facts).
      </p>
      {statements.length === 0 ? (
        <Empty>No fact that mentions it was believed true then.</Empty>
      ) : (
        <Timeline
          dataset={dataset}
          statements={statements}
          instants={{
            now,
            validAt: instants.validAt ? new Date(instants.validAt) : null,
            knownAt: instants.knownAt ? new Date(instants.knownAt) : null,
          }}
          onNeedFact={byId.need}
        />
      )}
    </section>
  );
}
