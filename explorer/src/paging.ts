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
