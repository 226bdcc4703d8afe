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
    <link rel="stylesheet" href="${config.assets}/graphiql.css" />
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
