import { createHash } from 'node:crypto';
import pino from 'pino';
import { beforeAll, describe, expect, it } from 'vitest';
import { createGateway } from '../../src/http/app.js';
import { openTestGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * `/` (src/http/landing.ts): a page of links for a browser, the same links as JSON for
 * anything else, behind the same edge as every route (request id, Host check, access log)
 * and without a key. Every link must be a path the gateway serves: a renamed route fails
 * here. The explorer's bundle is built by the run's global setup (test/setup/explorer.ts).
 */

const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
let t: TestGateway;

beforeAll(async () => {
  t = await openTestGateway({ demoWorkspaces: [] });
});

const html = () => t.request('/', { headers: { accept: BROWSER_ACCEPT } });

async function jsonLinks(): Promise<Record<string, string>> {
  const response = await t.request('/', { headers: { accept: 'application/json' } });
  return (await response.json()).links;
}

/** The href of every <a> of a page. */
const hrefsOf = (page: string) => [...page.matchAll(/<a href="([^"]*)"/g)].map((m) => m[1]!);

describe('GET / for a browser', () => {
  it('answers a page of links, with the page headers and a policy that allows only its own style', async () => {
    const response = await html();
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    expect(response.headers.get('vary')).toBe('Accept');
    expect(response.headers.get('x-request-id')).toBeTruthy();
    expect(response.headers.get('x-frame-options')).toBe('DENY');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('referrer-policy')).toBe('no-referrer');
    const page = await response.text();
    const policy = response.headers.get('content-security-policy') ?? '';
    expect(policy).toContain("default-src 'none'");
    expect(policy).toContain("frame-ancestors 'none'");
    expect(policy).not.toContain('unsafe-inline');
    expect(policy).not.toMatch(/script-src/);
    // The one inline style sheet is the one the policy's hash allows.
    const styles = [...page.matchAll(/<style>(.*?)<\/style>/gs)].map((m) => m[1]!);
    expect(styles).toHaveLength(1);
    const hash = createHash('sha256').update(styles[0]!).digest('base64');
    expect(policy).toContain(`style-src 'sha256-${hash}'`);
    // Nothing loaded from anywhere, nothing run.
    expect(page).not.toMatch(/<script|<link|<img|@import|url\(/i);
    expect(page).not.toMatch(/(src|href)="(https?:)?\/\//i);
    expect(page).toContain("README's five-minute tour");
  });

  it('links GraphiQL, the explorer, the API docs, the OpenAPI document, MCP and the probes', async () => {
    const hrefs = hrefsOf(await (await html()).text());
    for (const path of ['/graphql', '/explorer', '/docs', '/openapi.json', '/mcp', '/healthz']) {
      expect(hrefs).toContain(path);
    }
    for (const href of hrefs) expect(href).toMatch(/^\/[a-z]/);
  });

  it('says when GraphiQL is turned off', async () => {
    const gateway = createGateway({ database: t.database, graphiql: false });
    const response = await gateway.fetch(
      new Request('http://gateway.test/', { headers: { accept: BROWSER_ACCEPT } }),
    );
    const page = await response.text();
    expect(page).toContain('GraphiQL is turned off');
    expect(hrefsOf(page)).toContain('/graphql');
  });
});

describe('GET / for other clients', () => {
  it.each([
    ['application/json', 'application/json'],
    ['no Accept', null],
    ['*/*', '*/*'],
    ['JSON preferred to HTML', 'text/html;q=0.5, application/json'],
  ])('answers the links as JSON (%s)', async (_, accept) => {
    const response = await t.request('/', accept ? { headers: { accept } } : {});
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(response.headers.get('vary')).toBe('Accept');
    const body = await response.json();
    expect(body.name).toBe('Bi-temporal memory gateway');
    expect(body.links).toEqual({
      graphql: '/graphql',
      explorer: '/explorer',
      docs: '/docs',
      openapi: '/openapi.json',
      mcp: '/mcp',
      health: '/healthz',
      ready: '/readyz',
    });
  });

  it('the page and the JSON list the same links', async () => {
    const fromJson = new Set(Object.values(await jsonLinks()));
    const fromPage = new Set(hrefsOf(await (await html()).text()));
    expect(fromPage).toEqual(fromJson);
  });
});

describe('every link is served', () => {
  it('each path answers something other than 404, to a browser and to a client without a key', async () => {
    const links = await jsonLinks();
    for (const [name, path] of Object.entries(links)) {
      for (const accept of [BROWSER_ACCEPT, 'application/json']) {
        const response = await t.request(path, { headers: { accept } });
        await response.body?.cancel();
        expect(response.status, `${name} ${path} (${accept})`).not.toBe(404);
        expect(response.status, `${name} ${path} (${accept})`).toBeLessThan(500);
      }
    }
    // The browser's pages are pages.
    for (const name of ['graphql', 'explorer', 'docs']) {
      const response = await t.request(links[name]!, { headers: { accept: BROWSER_ACCEPT } });
      expect(response.status, name).toBe(200);
      expect(response.headers.get('content-type'), name).toMatch(/^text\/html/);
      await response.body?.cancel();
    }
  });
});

describe('the rest of /', () => {
  it('HEAD answers the headers without a body', async () => {
    for (const accept of [BROWSER_ACCEPT, 'application/json']) {
      const response = await t.request('/', { method: 'HEAD', headers: { accept } });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(
        accept === BROWSER_ACCEPT ? /^text\/html/ : /^application\/json/,
      );
      expect(response.headers.get('x-request-id')).toBeTruthy();
      expect(await response.text()).toBe('');
    }
  });

  it('other methods are 405 with Allow', async () => {
    for (const method of ['POST', 'PUT', 'DELETE']) {
      const response = await t.request('/', { method });
      expect(response.status, method).toBe(405);
      expect(response.headers.get('allow')).toBe('GET, HEAD');
      expect(await response.json()).toEqual({
        error: `Method ${method} is not allowed here; use GET`,
      });
    }
  });

  it('needs no key: an invalid one is ignored', async () => {
    const response = await t.request('/', {
      key: 'mk_not_a_key',
      headers: { accept: 'text/html' },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('www-authenticate')).toBeNull();
  });

  it('counts against the client address’s rate limit, as the other pages do', async () => {
    const gateway = createGateway({ database: t.database, rateLimitPerAddressPerMinute: 2 });
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) {
      const response = await gateway.fetch(
        new Request('http://gateway.test/', { headers: { accept: 'text/html' } }),
        { incoming: { socket: { remoteAddress: '10.9.8.6' } } },
      );
      statuses.push(response.status);
      await response.body?.cancel();
    }
    expect(statuses).toEqual([200, 200, 429]);
  });

  it('passes the edge: the Host check, the request id and the access log', async () => {
    const lines: { msg: string; route?: string; status?: number; method?: string }[] = [];
    const logger = pino(
      { level: 'info' },
      { write: (line: string) => lines.push(JSON.parse(line)) },
    );
    const gateway = createGateway({ database: t.database, logger, allowedHosts: ['localhost'] });
    const refused = await gateway.fetch(new Request('http://evil.example/'));
    expect(refused.status).toBe(403);
    const response = await gateway.fetch(
      new Request('http://localhost/', { headers: { 'x-request-id': 'landing-1' } }),
    );
    expect(response.status).toBe(200);
    expect(response.headers.get('x-request-id')).toBe('landing-1');
    expect(lines.filter((l) => l.msg === 'request').map((l) => [l.route, l.status])).toEqual([
      ['unmatched', 403],
      ['/', 200],
    ]);
  });
});
