import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { GatewayEnv } from '../context.js';
import { errorResponse } from '../rest/errorBodies.js';
import { MEMORY_SODA_ROOT, MEMORY_SODA_TAG } from '../rest/memorySoda.js';
import { SUPACLOUD_BASE, SUPACLOUD_TAG } from '../rest/supaCloud.js';
import { pageHeaders } from './pageHeaders.js';

/**
 * `/openapi.json` (OpenAPI 3.1, generated from the REST routes' zod schemas) and `/docs`,
 * an interactive Swagger UI page whose assets the gateway serves itself (no CDN).
 */
export function mountApiDocs(app: OpenAPIHono<GatewayEnv>): void {
  app.openAPIRegistry.registerComponent('securitySchemes', 'Bearer', {
    type: 'http',
    scheme: 'bearer',
    description: 'An API key: Authorization: Bearer <key>',
  });
  app.doc31('/openapi.json', {
    openapi: '3.1.0',
    info: {
      title: 'Bi-temporal memory gateway: REST compatibility routes',
      version: '1.0.0',
      description:
        "Memory Soda's semantic API (/v1/memory/semantic) and SupaCloud's memories API (/api/memories), served from the same GraphQL schema as /graphql.",
    },
    tags: [
      {
        name: MEMORY_SODA_TAG,
        description: `Memory Soda's semantic API and recall, under ${MEMORY_SODA_ROOT}`,
      },
      { name: SUPACLOUD_TAG, description: `SupaCloud's memories API, under ${SUPACLOUD_BASE}` },
    ],
  });

  // Read from swagger-ui-dist on request rather than held: about 30 MB of memory at rest
  // for a page that is rarely open (browsers cache the files for a day).
  // The folder only: the package's main module would load and run the whole 1.5 MB
  // Swagger UI bundle in the server at start.
  const dist = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  const assets: Record<string, string> = {
    'swagger-ui.css': 'text/css; charset=utf-8',
    'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  };
  app.get('/docs/assets/:file', async (c) => {
    const file = c.req.param('file');
    const headers = {
      'cache-control': 'public, max-age=86400',
      'x-content-type-options': 'nosniff',
    };
    if (file === 'docs.js') {
      return c.body(DOCS_SCRIPT, 200, {
        ...headers,
        'content-type': 'text/javascript; charset=utf-8',
      });
    }
    const type = Object.hasOwn(assets, file) ? assets[file] : undefined;
    if (!type) return errorResponse(c, 'plain', 'NOT_FOUND', 'Not found');
    return c.body(await readFile(join(dist, file)), 200, { ...headers, 'content-type': type });
  });
  app.get('/docs', (c) => c.html(DOCS_PAGE, 200, DOCS_PAGE_HEADERS));
}

/**
 * The page holds no secret, but Swagger UI's "Try it out" sends requests with the key a
 * user types: it is never framed (a page on another origin could not click for them), and
 * it loads and calls nothing but this gateway.
 */
const DOCS_PAGE_HEADERS = pageHeaders(
  [
    "script-src 'self'",
    // Swagger UI sets styles on its elements.
    "style-src 'self' 'unsafe-inline'",
    "connect-src 'self'",
    "img-src 'self' data:",
  ],
  { formAction: "'self'", noStore: false },
);

const DOCS_SCRIPT = `window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#swagger-ui', persistAuthorization: true });
`;

const DOCS_PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <title>Memory gateway REST API</title>
    <link rel="stylesheet" href="/docs/assets/swagger-ui.css" />
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="/docs/assets/swagger-ui-bundle.js"></script>
    <script src="/docs/assets/docs.js"></script>
  </body>
</html>
`;
