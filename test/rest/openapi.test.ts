import { beforeAll, describe, expect, it } from 'vitest';
import { openTestGateway, type TestGateway } from '../helpers/gateway.js';

let t: TestGateway;
let doc: {
  openapi: string;
  paths: Record<
    string,
    Record<
      string,
      { parameters?: { name: string; in: string }[]; responses: Record<string, unknown> }
    >
  >;
};

beforeAll(async () => {
  t = await openTestGateway({ demoWorkspaces: [] });
  const response = await t.request('/openapi.json');
  expect(response.status).toBe(200);
  doc = await response.json();
});

describe('/openapi.json', () => {
  it('is OpenAPI 3.1 and describes exactly the REST routes, with their methods', () => {
    expect(doc.openapi).toBe('3.1.0');
    const routes = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`),
    );
    expect(routes.sort()).toEqual([
      'DELETE /v1/memory/semantic/datasets/{dataset}/facts/{factId}',
      'GET /api/memories',
      'GET /v1/memory/semantic/datasets/{dataset}/entities',
      'GET /v1/memory/semantic/datasets/{dataset}/entities/{name}/facts',
      'GET /v1/memory/semantic/datasets/{dataset}/facts',
      'POST /v1/memory/recall',
    ]);
  });

  it("groups the routes by product: each operation carries its surface's one tag", () => {
    const tagged = doc as unknown as {
      tags: { name: string }[];
      paths: Record<string, Record<string, { tags?: string[] }>>;
    };
    expect(tagged.tags.map((t) => t.name)).toEqual([
      'Memory Soda semantic API',
      'SupaCloud memories API',
    ]);
    const operations = Object.entries(tagged.paths).flatMap(([path, ops]) =>
      Object.values(ops).map((op) => ({ path, tags: op.tags })),
    );
    expect(operations.length).toBeGreaterThan(0);
    for (const { path, tags } of operations) {
      const expected = path.startsWith('/v1/memory/')
        ? 'Memory Soda semantic API'
        : 'SupaCloud memories API';
      expect([path, tags]).toEqual([path, [expected]]);
    }
  });

  it('names every parameter the routes accept, where they accept it', () => {
    const params = (path: string, method = 'get') =>
      (doc.paths[path]![method]!.parameters ?? []).map((p) => `${p.in}:${p.name}`).sort();
    expect(params('/v1/memory/semantic/datasets/{dataset}/facts')).toEqual(
      [
        'path:dataset',
        'query:asOf',
        'query:episodeId',
        'query:includeInvalidated',
        'query:limit',
        'query:q',
      ].sort(),
    );
    expect(params('/v1/memory/semantic/datasets/{dataset}/facts/{factId}', 'delete')).toEqual([
      'path:dataset',
      'path:factId',
    ]);
    expect(params('/v1/memory/semantic/datasets/{dataset}/entities/{name}/facts')).toEqual([
      'path:dataset',
      'path:name',
    ]);
    expect(params('/api/memories')).toEqual(['query:as_of', 'query:include_archived']);
  });

  it("documents the error responses in each surface's shape", () => {
    const text = JSON.stringify(doc);
    expect(text).toContain('MemorySodaError');
    expect(text).toContain('ApiErrorBody');
    expect(
      Object.keys(
        doc.paths['/v1/memory/semantic/datasets/{dataset}/facts/{factId}']!.delete!.responses,
      ),
    ).toContain('404');
  });

  it("documents every limit status on every route, in the surface's error shape", () => {
    const operations = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops).map(([method, op]) => ({ path, method, op })),
    );
    expect(operations.length).toBe(6);
    for (const { path, method, op } of operations) {
      const responses = op.responses as Record<
        string,
        { content: Record<string, { schema: { $ref: string } }>; headers?: object }
      >;
      const shape = path.startsWith('/api/') ? 'ApiErrorBody' : 'MemorySodaError';
      for (const status of ['408', '413', '414', '415', '429', '431', '503']) {
        expect(responses[status], `${method} ${path} ${status}`).toBeDefined();
        expect(responses[status]!.content['application/json']!.schema.$ref).toBe(
          `#/components/schemas/${shape}`,
        );
      }
      expect(Object.keys(responses['429']!.headers ?? {})).toEqual(['Retry-After']);
    }
  });
});

describe('/docs', () => {
  it('is an interactive page whose assets the gateway serves itself (no CDN)', async () => {
    const page = await t.request('/docs');
    expect(page.status).toBe(200);
    const html = await page.text();
    const sources = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(sources.length).toBeGreaterThanOrEqual(2);
    let script = '';
    for (const source of sources) {
      expect(source.startsWith('/')).toBe(true);
      const asset = await t.request(source);
      expect(asset.status, source).toBe(200);
      const text = await asset.text();
      // Swagger UI's files, and the page's own start script.
      if (source.endsWith('/docs.js')) script = text;
      else expect(text.length).toBeGreaterThan(1000);
    }
    expect(html).not.toMatch(/https?:\/\//);
    expect(script).toContain("url: '/openapi.json'");
  });
});
