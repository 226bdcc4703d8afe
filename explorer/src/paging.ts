import { keepPreviousData } from '@tanstack/react-query';

interface PageInfo {
  hasNextPage: boolean;
  endCursor: string | null;
}

/**
 * What every list the explorer pages through tells TanStack Query: start with no cursor,
 * continue after the last page's endCursor while there is a next page, and keep the
 * previous answer on screen while a new one (other instants, other filters) loads.
 */
export function connectionPaging<TPage>(pageInfoOf: (page: TPage) => PageInfo | undefined) {
  return {
    initialPageParam: null as string | null,
    getNextPageParam: (last: TPage) => {
      const pageInfo = pageInfoOf(last);
      return pageInfo?.hasNextPage ? pageInfo.endCursor : undefined;
    },
    placeholderData: keepPreviousData,
  };
}

/**
 * Where each of several lists asked for in one request goes next (the "what changed"
 * view asks for two): a cursor, null before the first page, or DONE once the list has
 * no next page, after which the request leaves it out (`@include(if: false)`). Undefined
 * when every list is done. An unfinished list never starts again from its first page.
 */
export const DONE = false;
export type ListCursor = string | null | typeof DONE;

export function nextCursors<K extends string>(
  asked: Record<K, ListCursor>,
  answered: Record<K, PageInfo | undefined>,
): Record<K, ListCursor> | undefined {
  const next = {} as Record<K, ListCursor>;
  let more = false;
  for (const list of Object.keys(asked) as K[]) {
    const pageInfo = answered[list];
    next[list] = asked[list] === DONE || !pageInfo?.hasNextPage ? DONE : pageInfo.endCursor;
    more ||= next[list] !== DONE;
  }
  return more ? next : undefined;
}
