import { beforeAll, describe, expect, it } from 'vitest';
import { openTestGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * The 405 answers and the names in malformed-segment answers come from the routes each
 * surface declares (src/rest/routes.ts), not from a list of their own: every route of
 * /openapi.json, asked with a method it does not declare, answers 405 with `Allow`.
 */

let t: TestGateway;
let key: string;
let paths: Record<string, Record<string, unknown>>;

beforeAll(async () => {
  t = await openTestGateway({ demoWorkspaces: [] });
  key = await t.key('acme', ['read']);
  paths = (await (await t.request('/openapi.json')).json()).paths;
});

/** A concrete path for a declared one: each `{param}` becomes a (percent-encoded) value. */
const concrete = (path: string, value = 'x%20y') => path.replace(/\{[^}]+\}/g, value);

describe('routes declared once', () => {
  it('every declared route answers another method with 405 and its declared methods', async () => {
    expect(Object.keys(paths).length).toBeGreaterThan(0);
    for (const [path, operations] of Object.entries(paths)) {
      const allowed = Object.keys(operations).map((m) => m.toUpperCase());
      const response = await t.request(concrete(path), { method: 'PATCH', key });
      expect([path, response.status, response.headers.get('allow')]).toEqual([
        path,
        405,
        allowed.join(', '),
      ]);
    }
  });

  it('a malformed segment is named by the parameter the declared path gives it', async () => {
    for (const path of Object.keys(paths)) {
      for (const param of path.match(/\{[^}]+\}/g) ?? []) {
        const raw = path.replace(param, '%E0%A4%A').replace(/\{[^}]+\}/g, 'x');
        const method = Object.keys(paths[path]!)[0]!.toUpperCase();
        const response = await t.request(raw, { method, key });
        const body = await response.json();
        expect([raw, response.status, JSON.stringify(body)]).toEqual([
          raw,
          400,
          expect.stringContaining(`${param.slice(1, -1)}: malformed percent-encoding`),
        ]);
      }
    }
  });
});
