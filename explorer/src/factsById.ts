import { useCallback, useMemo, useState } from 'react';
import { request } from './api.ts';
import type { Instants } from './components/InstantControls.tsx';
import { ExplorerFactByIdDocument, type TimelineFactFragment } from './generated/operations.ts';

/**
 * Facts a page fetched one by one because a link led to them and no loaded page held them
 * (a successor on a page not yet loaded): `need(factId)` fetches one, drawn at the page's
 * instants; `facts` are those fetched at the current instants (others answer other
 * instants, and are left out). Failures are the page's to show: `error`.
 */
export function useFactsById(apiKey: string, dataset: string, instants: Instants) {
  const at = `${dataset}|${instants.validAt ?? ''}|${instants.knownAt ?? ''}`;
  const [fetched, setFetched] = useState<{ at: string; fact: TimelineFactFragment }[]>([]);
  const [error, setError] = useState<unknown>(null);
  const need = useCallback(
    (factId: string) => {
      setError(null);
      request(apiKey, ExplorerFactByIdDocument, {
        dataset,
        factId,
        validAt: instants.validAt,
        knownAt: instants.knownAt,
      }).then(
        (answer) => {
          const fact = answer.dataset?.fact;
          if (fact) setFetched((list) => [...list, { at, fact }]);
          else setError(new Error(`The fact ${factId} is not in ${dataset}`));
        },
        (cause: unknown) => setError(cause),
      );
    },
    [apiKey, dataset, instants.validAt, instants.knownAt, at],
  );
  const facts = useMemo(() => fetched.filter((f) => f.at === at).map((f) => f.fact), [fetched, at]);
  return { facts, need, error };
}
