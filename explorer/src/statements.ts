import type { TimelineFactFragment } from './generated/operations.ts';

/**
 * A statement: every fact with one subject and predicate (case-insensitive), as the
 * timeline draws it in one row. Facts keep the order they arrived in within a row
 * (the gateway sends validAt descending); rows are drawn oldest fact first.
 */
export interface Statement {
  key: string;
  subject: string;
  predicate: string;
  facts: TimelineFactFragment[];
}

function statementKey(fact: { subject: string; predicate: string }): string {
  return `${fact.subject.toLowerCase()}\u0000${fact.predicate.toLowerCase()}`;
}

/** Groups facts into statements, in the order each statement was first met. */
export function groupStatements(facts: readonly TimelineFactFragment[]): Statement[] {
  const rows = new Map<string, Statement>();
  const seen = new Set<string>();
  for (const fact of facts) {
    if (seen.has(fact.factId)) continue;
    seen.add(fact.factId);
    const key = statementKey(fact);
    let row = rows.get(key);
    if (!row) {
      row = { key, subject: fact.subject, predicate: fact.predicate, facts: [] };
      rows.set(key, row);
    }
    row.facts.push(fact);
  }
  for (const row of rows.values()) {
    row.facts.sort(
      (a, b) => a.validAt.localeCompare(b.validAt) || a.factId.localeCompare(b.factId),
    );
  }
  return [...rows.values()];
}

/** How a fact is drawn: its state, with deleted told apart from superseded. */
export type FactLook = 'live' | 'future' | 'expired' | 'superseded' | 'deleted';

export function lookOf(fact: Pick<TimelineFactFragment, 'state' | 'invalidReason'>): FactLook {
  if (fact.state === 'SUPERSEDED')
    return fact.invalidReason === 'DELETED' ? 'deleted' : 'superseded';
  return fact.state.toLowerCase() as FactLook;
}

export const LOOK_LABEL: Record<FactLook, string> = {
  live: 'Believed true',
  future: 'Not yet valid',
  expired: 'No longer valid',
  superseded: 'Superseded',
  deleted: 'Deleted',
};
