import { useSyncExternalStore } from 'react';

/**
 * The explorer's pages, addressed in the URL's fragment (`#/user_42/entity/honda%20civic`)
 * so the gateway serves one page and the browser's back button and bookmarks work. Each
 * segment is encoded with encodeURIComponent, so dataset and entity names may hold any
 * character.
 */
export type Route =
  | { page: 'home' }
  | { page: 'keys' }
  | { page: 'timeline'; dataset: string }
  | { page: 'changes'; dataset: string }
  | { page: 'search'; dataset: string }
  | { page: 'memories'; dataset: string }
  | { page: 'entity'; dataset: string; name: string }
  | { page: 'episode'; dataset: string; episodeId: string };

function decode(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}

/** The workspace's own pages: `#~/keys` (dataset routes all start `#/`, so none is taken). */
const KEYS_HASH = '#~/keys';

function parseRoute(hash: string): Route {
  if (hash === KEYS_HASH) return { page: 'keys' };
  const segments = hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decode);
  if (segments.some((s) => s === null) || segments.length === 0) return { page: 'home' };
  const [dataset, page, id] = segments as string[];
  if (!dataset) return { page: 'home' };
  if (page === undefined) return { page: 'timeline', dataset };
  if (page === 'changes' || page === 'search' || page === 'memories') return { page, dataset };
  if (page === 'entity' && id !== undefined) return { page, dataset, name: id };
  if (page === 'episode' && id !== undefined) return { page, dataset, episodeId: id };
  return { page: 'timeline', dataset };
}

export function href(route: Route): string {
  const e = encodeURIComponent;
  switch (route.page) {
    case 'home':
      return '#/';
    case 'keys':
      return KEYS_HASH;
    case 'timeline':
      return `#/${e(route.dataset)}`;
    case 'entity':
      return `#/${e(route.dataset)}/entity/${e(route.name)}`;
    case 'episode':
      return `#/${e(route.dataset)}/episode/${e(route.episodeId)}`;
    default:
      return `#/${e(route.dataset)}/${route.page}`;
  }
}

function subscribe(onChange: () => void): () => void {
  window.addEventListener('hashchange', onChange);
  return () => window.removeEventListener('hashchange', onChange);
}

/** The current route, re-rendered on every change of the fragment. */
export function useRoute(): Route {
  const hash = useSyncExternalStore(subscribe, () => window.location.hash);
  return parseRoute(hash);
}

export function navigate(route: Route): void {
  window.location.hash = href(route);
}
