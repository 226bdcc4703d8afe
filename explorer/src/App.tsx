import { useQuery } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { ApiError, request, storedKey, storeKey } from './api.ts';
import { InstantControls, type Instants } from './components/InstantControls.tsx';
import { KeyForm } from './components/KeyForm.tsx';
import { Empty, ErrorNotice, Loading } from './components/Status.tsx';
import { ExplorerViewerDocument } from './generated/operations.ts';
import { formatInstant } from './instants.ts';
import { ChangesPage } from './pages/ChangesPage.tsx';
import { EntityPage } from './pages/EntityPage.tsx';
import { EpisodePage } from './pages/EpisodePage.tsx';
import { KeysPage } from './pages/KeysPage.tsx';
import { MemoriesPage } from './pages/MemoriesPage.tsx';
import { SearchPage } from './pages/SearchPage.tsx';
import { TimelinePage } from './pages/TimelinePage.tsx';
import { href, navigate, type Route, useRoute } from './routes.ts';

const TABS = [
  { page: 'timeline', label: 'Timeline' },
  { page: 'changes', label: 'What changed' },
  { page: 'search', label: 'Search' },
  { page: 'memories', label: 'Memories' },
] as const;

/**
 * The explorer's shell: the key, the workspace's datasets, the tabs and the two instants;
 * the page the URL names below them.
 */
export function App() {
  const [apiKey, setApiKey] = useState(storedKey);
  const [refused, setRefused] = useState(false);
  const [instants, setInstants] = useState<Instants>({ validAt: null, knownAt: null });
  // The browser's clock, read once: only for what the page draws ("now" on the axis) and
  // default ranges. Every read with an empty instant uses the gateway's clock.
  const [now] = useState(() => new Date());
  const route = useRoute();
  const routeDataset = route.page === 'home' || route.page === 'keys' ? null : route.dataset;
  // The dataset last opened with this key: the workspace's own pages keep naming it.
  const [lastOpened, setLastOpened] = useState<{ apiKey: string; dataset: string } | null>(null);
  useEffect(() => {
    if (apiKey && routeDataset) setLastOpened({ apiKey, dataset: routeDataset });
  }, [apiKey, routeDataset]);

  const useKey = (key: string) => {
    storeKey(key);
    setApiKey(key);
    setRefused(false);
  };
  const forgetKey = (wasRefused: boolean) => {
    storeKey(null);
    setApiKey(null);
    setRefused(wasRefused);
  };
  const onWrongKey = () => forgetKey(true);

  const viewer = useQuery({
    queryKey: ['viewer', apiKey],
    enabled: apiKey !== null,
    queryFn: ({ signal }) => request(apiKey!, ExplorerViewerDocument, {}, signal),
  });
  const viewerRefused = viewer.error instanceof ApiError && viewer.error.isUnauthenticated;
  // A refused key is forgotten at once, so a reload does not try it again.
  useEffect(() => {
    if (viewerRefused) forgetKey(true);
  });
  const keyRefused = refused || viewerRefused;

  let main: React.ReactNode;
  if (!apiKey || keyRefused) {
    main = <KeyForm refused={keyRefused} onSubmit={useKey} />;
  } else if (viewer.isPending) {
    main = <Loading what="the workspace" />;
  } else if (viewer.isError) {
    main = (
      <ErrorNotice error={viewer.error} onWrongKey={onWrongKey} retry={() => viewer.refetch()} />
    );
  } else {
    main =
      route.page === 'home' ? (
        <DatasetList
          workspace={viewer.data.viewer.workspace}
          datasets={viewer.data.datasets.edges.map((e) => e.node)}
          total={viewer.data.datasets.totalCount}
        />
      ) : route.page === 'keys' ? (
        <KeysPage apiKey={apiKey} scopes={viewer.data.viewer.scopes} onWrongKey={onWrongKey} />
      ) : (
        <Page
          route={route}
          apiKey={apiKey}
          instants={instants}
          setInstants={setInstants}
          now={now}
          onWrongKey={onWrongKey}
        />
      );
  }

  const listed = viewer.data?.datasets.edges.map(({ node }) => node.name) ?? [];
  const dataset = datasetInHand(
    routeDataset,
    lastOpened?.apiKey === apiKey ? lastOpened.dataset : null,
    listed,
    viewer.data?.datasets.totalCount ?? 0,
  );
  useEffect(() => {
    document.title = titleOf(route);
  });
  return (
    <>
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="top">
        <h1>
          <a href="#/">Memory explorer</a>
        </h1>
        {viewer.data && !keyRefused && (
          <>
            <span className="workspace">
              workspace <strong>{viewer.data.viewer.workspace}</strong>
            </span>
            <label className="dataset-picker">
              Dataset{' '}
              <select
                value={dataset ?? ''}
                onChange={(e) =>
                  e.currentTarget.value
                    ? navigate({ page: 'timeline', dataset: e.currentTarget.value })
                    : navigate({ page: 'home' })
                }
              >
                <option value="">{dataset ? 'All datasets' : 'Choose…'}</option>
                {/* One opened by its address may be past the first page the list holds. */}
                {(dataset && !listed.includes(dataset) ? [dataset, ...listed] : listed).map(
                  (name) => (
                    <option key={name} value={name}>
                      {name}
                    </option>
                  ),
                )}
              </select>
            </label>
          </>
        )}
        {viewer.data?.viewer.scopes.includes('ADMIN') && !keyRefused && (
          <a
            className="keys-link"
            href={href({ page: 'keys' })}
            aria-current={route.page === 'keys' ? 'page' : undefined}
          >
            Keys
          </a>
        )}
        {apiKey && !keyRefused && (
          <button type="button" className="change-key" onClick={() => forgetKey(false)}>
            Change key
          </button>
        )}
      </header>
      {/* The start page lists the datasets' views itself; every other page has the tabs. */}
      {dataset && route.page !== 'home' && !keyRefused && apiKey && (
        <nav className="tabs" aria-label="Views">
          {TABS.map((tab) => (
            <a
              key={tab.page}
              href={href({ page: tab.page, dataset })}
              aria-current={route.page === tab.page ? 'page' : undefined}
            >
              {tab.label}
            </a>
          ))}
        </nav>
      )}
      <main id="main">{main}</main>
    </>
  );
}

/**
 * The dataset the header's picker shows and its tabs open: the one the page is about, else
 * the one last opened with this key, else the workspace's only one; null when there is no
 * telling (several datasets, none opened yet).
 */
function datasetInHand(
  routeDataset: string | null,
  lastOpened: string | null,
  listed: readonly string[],
  total: number,
): string | null {
  return routeDataset ?? lastOpened ?? (total === 1 ? (listed[0] ?? null) : null);
}

const PAGE_TITLES = {
  timeline: 'Timeline',
  changes: 'What changed',
  search: 'Search',
  memories: 'Memories',
  entity: 'Entity',
  episode: 'Episode',
} as const;

/** The tab's title names the page, so history and screen readers tell pages apart. */
function titleOf(route: Route): string {
  if (route.page === 'home') return 'Memory explorer';
  if (route.page === 'keys') return 'API keys · Memory explorer';
  const what = route.page === 'entity' ? `${route.name} · ` : '';
  return `${what}${PAGE_TITLES[route.page]} · ${route.dataset} · Memory explorer`;
}

/** What each of a dataset's views shows, for the page of a workspace with one dataset. */
const VIEWS = [
  {
    page: 'timeline',
    label: 'Timeline',
    what: 'every statement over valid time, coloured by what the store believed at any instant',
  },
  {
    page: 'changes',
    label: 'What changed',
    what: 'the facts learned and those superseded or deleted between two instants',
  },
  { page: 'search', label: 'Search', what: 'facts by their words, or recall as an agent gets it' },
  { page: 'memories', label: 'Memories', what: 'the memories, live, archived or superseded' },
] as const;

/**
 * The workspace's datasets. One alone is shown plainly, with its views, rather than as a
 * list of one link on an empty page (the demo workspace `npm start` makes has one).
 */
function DatasetList({
  workspace,
  datasets,
  total,
}: {
  workspace: string;
  datasets: { name: string; createdAt: string }[];
  total: number;
}) {
  if (datasets.length === 0) {
    return (
      <Empty>
        This workspace has no datasets yet. Record an episode (the <code>recordEpisode</code>{' '}
        mutation) or import one with <code>npm run import</code>.
      </Empty>
    );
  }
  const only = total === 1 ? datasets[0] : undefined;
  if (only) {
    return (
      <section className="only-dataset" data-testid="only-dataset">
        <h2>
          Dataset <a href={href({ page: 'timeline', dataset: only.name })}>{only.name}</a>
        </h2>
        <p className="summary">
          The one dataset of workspace <strong>{workspace}</strong>, made{' '}
          {formatInstant(only.createdAt)}. Open one of its views:
        </p>
        <ul className="dataset-views">
          {VIEWS.map((view) => (
            <li key={view.page}>
              <a href={href({ page: view.page, dataset: only.name })}>{view.label}</a>: {view.what}.
            </li>
          ))}
        </ul>
      </section>
    );
  }
  return (
    <section>
      <h2>Datasets</h2>
      {total > datasets.length && (
        <p className="summary">
          The first {datasets.length} of {total}, by name; open another by its address:
          /explorer#/name.
        </p>
      )}
      <ul className="dataset-list">
        {datasets.map(({ name }) => (
          <li key={name}>
            <a href={href({ page: 'timeline', dataset: name })}>{name}</a>
          </li>
        ))}
      </ul>
    </section>
  );
}

function Page({
  route,
  apiKey,
  instants,
  setInstants,
  now,
  onWrongKey,
}: {
  route: Exclude<Route, { page: 'home' } | { page: 'keys' }>;
  apiKey: string;
  instants: Instants;
  setInstants: (instants: Instants) => void;
  now: Date;
  onWrongKey: () => void;
}) {
  const common = { apiKey, dataset: route.dataset, now, onWrongKey };
  const controls = <InstantControls instants={instants} onChange={setInstants} />;
  switch (route.page) {
    case 'timeline':
      return (
        <>
          {controls}
          <TimelinePage {...common} instants={instants} />
        </>
      );
    case 'changes':
      return <ChangesPage {...common} />;
    case 'search':
      return (
        <>
          {controls}
          <SearchPage {...common} instants={instants} />
        </>
      );
    case 'memories':
      return <MemoriesPage {...common} />;
    case 'entity':
      return (
        <>
          {controls}
          <EntityPage {...common} name={route.name} instants={instants} onInstants={setInstants} />
        </>
      );
    case 'episode':
      return (
        <>
          {controls}
          <EpisodePage {...common} episodeId={route.episodeId} instants={instants} />
        </>
      );
  }
}
