import { beforeAll, describe, expect, it } from 'vitest';
import { SURFACE_BASES } from '../../src/rest/surfaces.js';
import { openTestGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * One rule for a method a path does not take, on every path the gateway serves: 405 with
 * `Allow`, in the shape of the path's surface, the methods read from the routes declared
 * there (src/http/routeMethods.ts; the REST surfaces' from their declarations,
 * test/rest/methods.test.ts). A path nothing serves stays a 404.
 */

let t: TestGateway;
let key: string;

beforeAll(async () => {
  t = await openTestGateway({ demoWorkspaces: [] });
  key = await t.key('acme', ['read', 'write']);
});

describe('405 with Allow wherever a route serves the path', () => {
  it.each(['PUT', 'DELETE', 'PATCH'])(
    '%s /graphql: GET and POST, in GraphQL’s shape',
    async (method) => {
      const response = await t.request('/graphql', { method, key });
      expect(response.status).toBe(405);
      expect(response.headers.get('allow')).toBe('GET, POST');
      expect(await response.json()).toEqual({
        errors: [
          {
            message: `Method ${method} is not allowed here; use GET, POST`,
            extensions: { code: 'METHOD_NOT_ALLOWED' },
          },
        ],
      });
    },
  );

  it.each(['GET', 'PUT', 'DELETE', 'PATCH'])(
    '%s /mcp: POST alone, as a JSON-RPC error',
    async (method) => {
      const response = await t.request('/mcp', { method, key });
      expect(response.status).toBe(405);
      expect(response.headers.get('allow')).toBe('POST');
      expect(await response.json()).toEqual({
        jsonrpc: '2.0',
        id: null,
        error: {
          code: -32000,
          message: `METHOD_NOT_ALLOWED: Method ${method} is not allowed here; use POST`,
          data: { code: 'METHOD_NOT_ALLOWED' },
        },
      });
    },
  );

  it('every path a route of the gateway declares (outside the REST surfaces) answers another method so', async () => {
    const declared = new Map<string, Set<string>>();
    for (const { method, path } of t.gateway.app.routes) {
      const rest = Object.values(SURFACE_BASES).some((base) => path.startsWith(base));
      if (method === 'ALL' || /[:*]/.test(path) || rest) continue;
      declared.set(path, (declared.get(path) ?? new Set()).add(method));
    }
    expect([...declared.keys()]).toEqual(expect.arrayContaining(['/graphql', '/mcp', '/healthz']));
    for (const [path, methods] of declared) {
      const response = await t.request(path, { method: 'PATCH', key });
      expect([path, response.status]).toEqual([path, 405]);
      const allow = response.headers.get('allow')?.split(', ') ?? [];
      expect(allow).toEqual(expect.arrayContaining([...methods]));
    }
  });

  it('a path no route serves is still a 404', async () => {
    const response = await t.request('/graphiql', { method: 'PUT', key });
    expect(response.status).toBe(404);
    expect(response.headers.get('allow')).toBeNull();
  });
});
