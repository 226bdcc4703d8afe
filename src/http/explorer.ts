import { access, readFile } from 'node:fs/promises';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { GatewayEnv } from '../context.js';
import { errorResponse } from '../rest/errorBodies.js';
import { developmentKeyFor } from './hosts.js';
import { pageHeaders } from './pageHeaders.js';

/**
 * The memory explorer: a page at /explorer and its two bundled assets, built by
 * `npm run build` into explorer/build (scripts/buildExplorer.ts). The page is a client of
 * the public GraphQL API like any other and holds no secret, except on the embedded
 * store: asked for through a loopback host from a loopback peer, it carries the
 * development key (src/http/hosts.ts `developmentKeyFor`, GraphiQL's rule too). Its Content-Security-Policy lets it load and call
 * nothing but this gateway.
 */
const EXPLORER_PATH = '/explorer';

/** explorer/build, from src/http or dist/http alike (both sit at the same depth). */
const BUILD_DIR = new URL('../../explorer/build/', import.meta.url);

const ASSETS: Record<string, string> = {
  'explorer.js': 'text/javascript; charset=utf-8',
  'explorer.css': 'text/css; charset=utf-8',
};

// The page may hold the development key: never stored by a cache.
const PAGE_HEADERS = pageHeaders(
  ["script-src 'self'", "style-src 'self'", "connect-src 'self'", "img-src 'self' data:"],
  { formAction: "'none'", noStore: true },
);

export interface ExplorerOptions {
  developmentKey?: string;
}

export function mountExplorer(app: OpenAPIHono<GatewayEnv>, options: ExplorerOptions): void {
  app.get(`${EXPLORER_PATH}/assets/:file`, async (c) => {
    const file = c.req.param('file');
    const type = Object.hasOwn(ASSETS, file) ? ASSETS[file] : undefined;
    if (!type) return errorResponse(c, 'plain', 'NOT_FOUND', 'Not found');
    let body: Buffer;
    try {
      body = await readFile(new URL(file, BUILD_DIR));
    } catch {
      return notBuilt(c);
    }
    return c.body(new Uint8Array(body), 200, {
      'content-type': type,
      // Not hashed names: a rebuilt gateway's page must not run yesterday's bundle.
      'cache-control': 'no-cache',
      'x-content-type-options': 'nosniff',
    });
  });
  app.get(EXPLORER_PATH, async (c) => {
    if (!(await isBuilt())) return notBuilt(c);
    return c.html(explorerPage(developmentKeyFor(c, options.developmentKey)), 200, PAGE_HEADERS);
  });
}

async function isBuilt(): Promise<boolean> {
  try {
    await access(new URL('explorer.js', BUILD_DIR));
    return true;
  } catch {
    return false;
  }
}

function notBuilt(c: Context) {
  return errorResponse(
    c,
    'plain',
    'NOT_BUILT',
    'The memory explorer is not built: run `npm run build` (`npm start` does it first)',
  );
}

/** JSON inside a <script> element: `<` escaped so no text can close the element. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c');
}

function explorerPage(developmentKey: string | null): string {
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Memory explorer</title>
    <link rel="stylesheet" href="${EXPLORER_PATH}/assets/explorer.css" />
  </head>
  <body>
    <div id="explorer"></div>
    <noscript>The memory explorer needs JavaScript.</noscript>
    <script type="application/json" id="explorer-config">${scriptJson({ developmentKey })}</script>
    <script type="module" src="${EXPLORER_PATH}/assets/explorer.js"></script>
  </body>
</html>
`;
}
