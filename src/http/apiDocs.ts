import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { OpenAPIHono } from '@hono/zod-openapi';
import { getAbsoluteFSPath } from 'swagger-ui-dist';
import type { GatewayEnv } from './env.js';

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
  });

  const dist = getAbsoluteFSPath();
  const assets: Record<string, { body: string; type: string }> = {
    'swagger-ui.css': {
      body: readFileSync(join(dist, 'swagger-ui.css'), 'utf8'),
      type: 'text/css; charset=utf-8',
    },
    'swagger-ui-bundle.js': {
      body: readFileSync(join(dist, 'swagger-ui-bundle.js'), 'utf8'),
      type: 'text/javascript; charset=utf-8',
    },
  };
  app.get('/docs/assets/:file', (c) => {
    const asset = assets[c.req.param('file')];
    if (!asset) return c.json({ error: 'Not found' }, 404);
    return c.body(asset.body, 200, {
      'content-type': asset.type,
      'cache-control': 'public, max-age=86400',
    });
  });
  app.get('/docs', (c) => c.html(DOCS_PAGE));
}

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
    <script>
      window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#swagger-ui', persistAuthorization: true });
    </script>
  </body>
</html>
`;
