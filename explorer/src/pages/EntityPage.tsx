import { useQuery } from '@tanstack/react-query';
import { useMemo } from 'react';
import { request } from '../api.ts';
import type { Instants } from '../components/InstantControls.tsx';
import { Empty, ErrorNotice, Loading } from '../components/Status.tsx';
import { Timeline } from '../components/Timeline.tsx';
import { useFactsById } from '../factsById.ts';
import {
  ExplorerEntityDocument,
  ExplorerSearchDocument,
  type TimelineFactFragment,
} from '../generated/operations.ts';
import { formatInstant, toInputValue } from '../instants.ts';
import { type FactLook, groupStatements, lookOf } from '../statements.ts';

/** How many facts that mention an entity none of which is believed are fetched, at most. */
const PAST_FACTS = 100;

/** Whether a fact's subject or object is the entity (names are stored lower-cased). */
const mentions = (fact: TimelineFactFragment, name: string) =>
  fact.subject.toLowerCase() === name || fact.object.toLowerCase() === name;

const WHAT_HAPPENED: Record<Exclude<FactLook, 'live'>, string> = {
  superseded: 'superseded',
  deleted: 'deleted',
  expired: 'no longer valid',
  future: 'not valid yet',
};

/**
 * An entity: the facts that mention it and were believed true at the chosen instants (now,
 * when empty), each drawn with its statement's history (every fact with the same subject
 * and predicate the store knew then), on the same timeline. When none is believed (every
 * one superseded, deleted or no longer valid), the facts that mention it, whatever their
 * state, are drawn instead, with what happened to them and a way back to when they were
 * believed: not "0 facts" and an empty page.
 */
export function EntityPage({
  apiKey,
  dataset,
  name,
  instants,
  now,
  onWrongKey,
  onInstants,
}: {
  apiKey: string;
  dataset: string;
  name: string;
  instants: Instants;
  now: Date;
  onWrongKey: () => void;
  onInstants: (instants: Instants) => void;
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
  const noneBelieved = entity !== null && entity.facts.length === 0;
  // None believed: every fact that mentions it, whatever its state (the search the Search
  // view runs, over the full history as known then), kept to those whose subject or
  // object it is.
  const past = useQuery({
    queryKey: ['entity-past', apiKey, dataset, entity?.name, instants.validAt, instants.knownAt],
    enabled: noneBelieved,
    queryFn: ({ signal }) =>
      request(
        apiKey,
        ExplorerSearchDocument,
        {
          dataset,
          q: entity!.name,
          first: PAST_FACTS,
          withCounts: false,
          validAt: instants.validAt,
          knownAt: instants.knownAt,
        },
        signal,
      ),
  });
  const pastFacts = useMemo(
    () =>
      noneBelieved
        ? (past.data?.dataset?.facts.edges ?? [])
            .map((e) => e.node)
            .filter((fact) => mentions(fact, entity.name.toLowerCase()))
        : [],
    [noneBelieved, past.data, entity],
  );
  const byId = useFactsById(apiKey, dataset, instants);
  // A statement's history as the store knew it then: nothing recorded after "as known at";
  // and any fact a link led to.
  const statements = useMemo(
    () =>
      groupStatements(
        [...(entity?.facts.flatMap((f) => f.history) ?? []), ...pastFacts, ...byId.facts].filter(
          (fact) => !instants.knownAt || fact.recordedAt <= instants.knownAt,
        ),
      ),
    [entity, pastFacts, instants.knownAt, byId.facts],
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
      {noneBelieved ? (
        <NoneBelieved
          facts={pastFacts}
          more={past.data?.dataset?.facts.pageInfo.hasNextPage ?? false}
          past={past}
          when={instants.validAt || instants.knownAt ? 'at the chosen instants' : 'now'}
          onKnownAt={(knownAt) => onInstants({ ...instants, knownAt })}
          onWrongKey={onWrongKey}
        />
      ) : (
        <p className="summary">
          {instants.knownAt ? '' : `Last mentioned ${formatInstant(entity.updatedAt)}. `}
          {entity.facts.length} {entity.facts.length === 1 ? 'fact' : 'facts'} believed true
          {instants.validAt || instants.knownAt ? ' at the chosen instants' : ' now'}
          {entity.facts.length === 50 ? ' (the first 50)' : ''} mention it; each row is that
          statement's history (its latest 10 facts).
        </p>
      )}
      {statements.length === 0 ? (
        noneBelieved ? null : (
          <Empty>No fact that mentions it was believed true then.</Empty>
        )
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

/**
 * Why an entity's page has no fact believed: what happened to the facts that mention it
 * (superseded, deleted, no longer valid…), drawn below as their history, and a button to
 * read the store as known just before the last of them stopped being believed.
 */
function NoneBelieved({
  facts,
  more,
  past,
  when,
  onKnownAt,
  onWrongKey,
}: {
  facts: TimelineFactFragment[];
  /** Whether the search had more than PAST_FACTS matches (only those were read). */
  more: boolean;
  past: { isPending: boolean; isError: boolean; error: unknown; refetch: () => unknown };
  when: string;
  onKnownAt: (knownAt: string) => void;
  onWrongKey: () => void;
}) {
  if (past.isPending) return <Loading what="the facts that mentioned it" />;
  if (past.isError) {
    return <ErrorNotice error={past.error} onWrongKey={onWrongKey} retry={() => past.refetch()} />;
  }
  if (facts.length === 0) {
    return (
      <Empty>
        No fact that mentions it is believed true {when}, and none was recorded by then.
      </Empty>
    );
  }
  const counts = new Map<string, number>();
  for (const fact of facts) {
    const look = lookOf(fact);
    const what = look === 'live' ? 'believed at another instant' : WHAT_HAPPENED[look];
    counts.set(what, (counts.get(what) ?? 0) + 1);
  }
  const onlyWhat = [...counts.keys()][0];
  const happened =
    facts.length === 1
      ? `its one fact was ${onlyWhat}`
      : counts.size === 1
        ? `its ${facts.length} facts were all ${onlyWhat}`
        : `of its ${facts.length} facts, ${[...counts].map(([what, n]) => `${n} ${what}`).join(', ')}`;
  const invalidated = facts
    .map((f) => f.invalidAt)
    .filter((at): at is string => at !== null)
    .sort();
  const lastDropped = invalidated.at(-1);
  const before = lastDropped
    ? new Date(new Date(lastDropped).getTime() - 1000).toISOString()
    : null;
  return (
    <div className="status none-believed" role="status" data-testid="none-believed">
      <p>
        No fact that mentions it is believed true {when}: {happened}
        {more ? ` (among the first ${PAST_FACTS} facts read)` : ''}. Their history is drawn below:
        hover or select a bar to see what replaced it.
      </p>
      {before && (
        <button type="button" onClick={() => onKnownAt(before)}>
          See them as known at {toInputValue(before)}, before the last was dropped
        </button>
      )}
    </div>
  );
}
