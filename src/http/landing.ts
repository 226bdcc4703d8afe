import { createHash } from 'node:crypto';
import type { OpenAPIHono } from '@hono/zod-openapi';
import { accepts } from 'hono/accepts';
import type { GatewayEnv } from '../context.js';
import { methodNotAllowed } from '../rest/errorBodies.js';
import { MCP_PATH } from '../rest/surfaces.js';
import { pageHeaders } from './pageHeaders.js';

/**
 * `GET /` (and `HEAD /`): where a newcomer lands on the printed base URL. A browser (an
 * Accept header that prefers text/html) gets a small page of links; any other client gets
 * the same links as JSON. The page is self-contained: no script, no external asset, and its
 * one inline style sheet is allowed by its hash alone (`default-src 'none'` otherwise). It
 * holds no secret and needs no key. Every link is a path this gateway serves
 * (test/http/landing.test.ts fetches each one).
 */

const NAME = 'Bi-temporal memory gateway';
const DESCRIPTION =
  'GraphQL API for bi-temporal AI-agent memory, with Memory Soda and SupaCloud REST compatibility routes.';

/** The links, by the name JSON clients read them under. */
const LANDING_LINKS = {
  graphql: '/graphql',
  explorer: '/explorer',
  docs: '/docs',
  openapi: '/openapi.json',
  mcp: MCP_PATH,
  health: '/healthz',
  ready: '/readyz',
} as const;

const STYLE = `body{font:16px/1.5 system-ui,sans-serif;max-width:42rem;margin:2rem auto;padding:0 1rem;color:#1b1b1b;background:#fff}
a{color:#0b57d0}code{font-size:.9em}li{margin:.4rem 0}.muted{color:#555}
@media (prefers-color-scheme:dark){body{color:#e6e6e6;background:#161616}a{color:#8ab4f8}.muted{color:#aaa}}`;

const PAGE_HEADERS = {
  ...pageHeaders([`style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`], {
    formAction: "'none'",
    noStore: false,
  }),
  vary: 'Accept',
};

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

function landingPage(graphiql: boolean): string {
  const item = (href: string, label: string, about: string) =>
    `      <li><a href="${escapeHtml(href)}">${escapeHtml(label)}</a> <code>${escapeHtml(href)}</code>: ${escapeHtml(about)}</li>`;
  const links = LANDING_LINKS;
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>${NAME}</title>
    <style>${STYLE}</style>
  </head>
  <body>
    <h1>${NAME}</h1>
    <p>${escapeHtml(DESCRIPTION)}</p>
    <ul>
${[
  graphiql
    ? item(
        links.graphql,
        'GraphiQL',
        'write and run GraphQL operations; the schema is in its Docs pane',
      )
    : item(links.graphql, 'GraphQL endpoint', 'POST operations here (GraphiQL is turned off)'),
  item(links.explorer, 'Memory explorer', "browse a dataset's facts on both time axes"),
  item(links.docs, 'REST API docs', "Memory Soda's and SupaCloud's routes, with Try it out"),
  item(links.openapi, 'OpenAPI document', 'the REST routes as OpenAPI 3.1, for code generators'),
  item(links.mcp, 'MCP endpoint', 'for agents: JSON-RPC over POST with an API key (not a page)'),
  item(links.health, 'Liveness', 'the process answers'),
  item(links.ready, 'Readiness', 'the database answers too'),
].join('\n')}
    </ul>
    <p>Every API call takes an API key: <code>Authorization: Bearer &lt;key&gt;</code> (the gateway prints a development key at start on the embedded store; <code>npm run keys -- create</code> makes others).</p>
    <p class="muted">New here? The README's five-minute tour walks through these pages step by step; offline, the <a href="${links.docs}">REST API docs</a> and GraphiQL's Docs pane describe every route and field.</p>
  </body>
</html>
`;
}

export function mountLanding(app: OpenAPIHono<GatewayEnv>, options: { graphiql?: boolean }): void {
  const page = landingPage(options.graphiql !== false);
  const json = JSON.stringify({ name: NAME, description: DESCRIPTION, links: LANDING_LINKS });
  // GET answers HEAD too (Hono runs the GET handler and drops the body).
  app.get('/', (c) => {
    const wanted = accepts(c, {
      header: 'Accept',
      supports: ['text/html', 'application/json'],
      default: 'application/json',
    });
    if (wanted === 'text/html') return c.html(page, 200, PAGE_HEADERS);
    return c.body(json, 200, { 'content-type': 'application/json', vary: 'Accept' });
  });
  app.all('/', (c) => methodNotAllowed(c, 'plain', ['GET', 'HEAD']));
}
