import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { GatewayEnv } from '../context.js';
import { errorResponse } from '../rest/errorBodies.js';
import { developmentKeyFor } from './hosts.js';
import { pageHeaders } from './pageHeaders.js';

/**
 * GraphiQL's page on GET /graphql (a browser's navigation), served by the gateway itself:
 * a small page, and Yoga's GraphiQL build (@graphql-yoga/render-graphiql: its script, style
 * sheet and Monaco's three workers) as separate files under a versioned path, compressed
 * once and cached by browsers (`immutable`, `ETag`). Yoga's own page inlines all of it,
 * 9 MB a load, and runs an inline script no Content-Security-Policy could allow without
 * allowing any.
 *
 * Below 700 px (a phone) a small style sheet of the gateway's own (NARROW_CSS) stacks the
 * result under the editors and puts the title on a line of its own above the tabs: GraphiQL
 * lays them side by side at any width, and at 390 px its result pane is one character wide.
 *
 * The page may carry the development key (embedded mode): it is never framed
 * (`frame-ancestors 'none'`, `X-Frame-Options`), never cached, loads and calls nothing but
 * this gateway, and holds the key only under src/http/hosts.ts's rule (a loopback Host
 * and a loopback peer, never in production) and only when its URL preloads no operation:
 * a link to `/graphql?query=mutation…` opens with the operation shown and no key, so
 * nothing runs with the key that its user has not put there.
 */

const GRAPHIQL_VERSION = (
  createRequire(import.meta.url)('@graphql-yoga/render-graphiql/package.json') as {
    version: string;
  }
).version;
const GRAPHIQL_ASSETS = `/graphiql/assets/${GRAPHIQL_VERSION}`;

const PAGE_HEADERS = pageHeaders(
  [
    "script-src 'self'",
    // GraphiQL and Monaco set styles on their elements.
    "style-src 'self' 'unsafe-inline'",
    "worker-src 'self'",
    "connect-src 'self'",
    "img-src 'self' data:",
    "font-src 'self' data:",
  ],
  { formAction: "'none'", noStore: true },
);

/** Search parameters GraphiQL reads an operation (or headers) from on load. */
const PRELOADING = ['query', 'variables', 'headers', 'operationName', 'extensions'];

/** Sets Monaco's workers to the files below, then starts GraphiQL with the page's config. */
const START = `(function () {
  var config = JSON.parse(document.getElementById('graphiql-config').textContent);
  var workers = {
    editorWorkerService: config.assets + '/editor.worker.js',
    json: config.assets + '/json.worker.js',
    graphql: config.assets + '/graphql.worker.js',
  };
  self.MonacoEnvironment = {
    globalAPI: false,
    getWorkerUrl: function (_moduleId, label) { return workers[label]; },
  };
  window.addEventListener('DOMContentLoaded', function () {
    YogaGraphiQL.renderYogaGraphiQL(document.getElementById('root'), config.options);
  });
})();
`;

/**
 * GraphiQL on a narrow screen (docs/graphiql-390.png): the editors above the result, each
 * the page's width (the drag bar between them resizes sideways only, so it goes), the
 * session scrolling as one column; the title above the tabs, not over them; slimmer
 * margins and sidebar. GraphiQL sets the panes' `flex` inline (its drag bar), hence
 * `!important`.
 */
const NARROW_CSS = `@media (max-width: 700px) {
  .graphiql-container { --sidebar-width: 44px; }
  .graphiql-container .graphiql-sidebar { padding: var(--px-4); }
  .graphiql-container .graphiql-sessions { margin: var(--px-8); margin-left: 0; min-height: 0; }
  .graphiql-container .graphiql-session-header {
    height: auto;
    flex-wrap: wrap;
    row-gap: var(--px-4);
  }
  .graphiql-container .graphiql-logo {
    order: -1;
    flex: 1 0 100%;
    margin-left: 0;
    font-size: var(--font-size-body);
    line-height: 1.3;
  }
  .graphiql-container #graphiql-session {
    flex-direction: column;
    min-height: 0;
    overflow-y: auto;
    padding: 0 var(--px-4) var(--px-4);
  }
  .graphiql-container .graphiql-editors {
    flex: 0 0 auto !important;
    height: 62vh;
    min-height: 18rem;
  }
  .graphiql-container .graphiql-query-editor { padding: var(--px-8); column-gap: var(--px-8); }
  .graphiql-container .graphiql-editor-tool { padding: var(--px-8); }
  .graphiql-container .graphiql-horizontal-drag-bar { display: none; }
  .graphiql-container .graphiql-response {
    flex: 0 0 auto !important;
    height: 60vh;
    min-height: 14rem;
    padding-top: var(--px-8);
  }
}
`;

/** The file name NARROW_CSS is served under: its hash, so a changed sheet is a new URL. */
const NARROW_CSS_FILE = `narrow-${createHash('sha256').update(NARROW_CSS).digest('hex').slice(0, 12)}.css`;

interface Asset {
  type: string;
  body: Buffer;
  gzipped: Buffer;
  etag: string;
}

let assets: Promise<Map<string, Asset>> | null = null;

/** Loaded on the first GraphiQL request, not at start: a production gateway never needs them. */
function loadAssets(): Promise<Map<string, Asset>> {
  assets ??= (async () => {
    const build = await import('@graphql-yoga/render-graphiql/graphiql');
    const javascript = 'text/javascript; charset=utf-8';
    const files: [string, string, string][] = [
      ['start.js', START, javascript],
      ['graphiql.js', build.js, javascript],
      ['graphiql.css', build.css, 'text/css; charset=utf-8'],
      [NARROW_CSS_FILE, NARROW_CSS, 'text/css; charset=utf-8'],
      ['editor.worker.js', build.editorWorkerService, javascript],
      ['json.worker.js', build.jsonWorker, javascript],
      ['graphql.worker.js', build.graphqlWorker, javascript],
    ];
    const compress = promisify(gzip);
    const loaded = new Map<string, Asset>();
    for (const [name, text, type] of files) {
      const body = Buffer.from(text);
      const hash = createHash('sha256').update(body).digest('base64url').slice(0, 22);
      loaded.set(name, {
        type,
        body,
        gzipped: await compress(body, { level: 9 }),
        etag: `"${hash}"`,
      });
    }
    return loaded;
  })();
  return assets;
}

/** Whether a request's Accept-Encoding takes gzip. */
function takesGzip(c: Context): boolean {
  return /\bgzip\b/i.test(c.req.header('accept-encoding') ?? '');
}

export function mountGraphiql(
  app: OpenAPIHono<GatewayEnv>,
  options: { graphiql?: boolean; developmentKey?: string },
): void {
  if (options.graphiql === false) return;
  app.get(`${GRAPHIQL_ASSETS}/:file`, async (c) => {
    const asset = (await loadAssets()).get(c.req.param('file'));
    if (!asset) return errorResponse(c, 'plain', 'NOT_FOUND', 'Not found');
    const headers: Record<string, string> = {
      'content-type': asset.type,
      // The path holds the version: a new build is a new URL.
      'cache-control': 'public, max-age=31536000, immutable',
      etag: asset.etag,
      vary: 'accept-encoding',
      'x-content-type-options': 'nosniff',
    };
    if (c.req.header('if-none-match') === asset.etag) return c.body(null, 304, headers);
    if (takesGzip(c)) {
      return c.body(new Uint8Array(asset.gzipped), 200, { ...headers, 'content-encoding': 'gzip' });
    }
    return c.body(new Uint8Array(asset.body), 200, headers);
  });
}

/** GraphiQL's page for a browser's GET /graphql. */
export function graphiqlPage(
  c: Context<GatewayEnv>,
  options: { developmentKey?: string; defaultQuery: string },
): Response {
  const url = new URL(c.req.url);
  const preloads = PRELOADING.some((name) => url.searchParams.has(name));
  const key = preloads ? null : developmentKeyFor(c, options.developmentKey);
  const config = {
    assets: GRAPHIQL_ASSETS,
    options: {
      title: 'Memory gateway GraphiQL',
      defaultQuery: options.defaultQuery,
      ...(key ? { headers: JSON.stringify({ Authorization: `Bearer ${key}` }, null, 2) } : {}),
    },
  };
  return c.html(page(config), 200, PAGE_HEADERS);
}

/** JSON inside a <script> element: `<` escaped so no text can close the element. */
const scriptJson = (value: unknown) => JSON.stringify(value).replace(/</g, '\\u003c');

function page(config: { assets: string; options: object }): string {
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <title>Memory gateway GraphiQL</title>
    <link rel="icon" href="data:," />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <link rel="stylesheet" href="${config.assets}/graphiql.css" />
    <link rel="stylesheet" href="${config.assets}/${NARROW_CSS_FILE}" />
  </head>
  <body id="body" class="no-focus-outline">
    <noscript>GraphiQL needs JavaScript.</noscript>
    <div id="root"></div>
    <script type="application/json" id="graphiql-config">${scriptJson(config)}</script>
    <script src="${config.assets}/start.js"></script>
    <script src="${config.assets}/graphiql.js"></script>
  </body>
</html>
`;
}
