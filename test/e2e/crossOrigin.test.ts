import type { ServerType } from '@hono/node-server';
import type { Browser, BrowserContext, Response as PageResponse } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDemoDataset } from '../../src/demo/seed.js';
import { LOOPBACK_HOSTS } from '../../src/domain/hostNames.js';
import { createGateway } from '../../src/http/app.js';
import { createApiKey } from '../../src/store/workspaces.js';
import { launchChromium, PAGE_TIMEOUT } from '../helpers/browser.js';
import { openTestDatabase } from '../helpers/database.js';
import { closeServer, listenOnLoopback } from '../helpers/listener.js';

/**
 * The attacker's page, played in a real Chromium. The gateway runs as `npm start` runs it
 * on the embedded store: the development key prefilled in GraphiQL for loopback hosts,
 * CORS open to any origin, only loopback Host names allowed. The browser maps the name
 * `evil.example` to 127.0.0.1 (as an attacker's DNS would, rebinding included) and can
 * resolve nothing else.
 *
 * - A page on another origin (http://evil.example:<attacker port>) can call GraphQL and
 *   REST with a key it was given, but cannot read GraphiQL's or the explorer's HTML (and
 *   so the key), and no answer carries Access-Control-Allow-Credentials.
 * - A page on the gateway's own port under the attacker's name (DNS rebinding: same
 *   origin in the browser's eyes) is refused by the Host check, key nowhere in sight.
 */

let browser: Browser | null = null;
let gatewayServer: ServerType | null = null;
let attackerServer: ServerType | null = null;
let gatewayPort = 0;
let attackerPort = 0;
let developmentKey = '';
let givenKey = '';

beforeAll(async () => {
  const database = await openTestDatabase();
  await loadDemoDataset(database.collections, 'acme', new Date());
  developmentKey = (await createApiKey(database.collections, 'acme', ['read', 'write', 'admin']))
    .key;
  givenKey = (await createApiKey(database.collections, 'acme', ['read'])).key;
  const gateway = createGateway({
    database,
    developmentKey,
    corsOrigins: '*',
    allowedHosts: [...LOOPBACK_HOSTS],
  });
  ({ server: gatewayServer, port: gatewayPort } = await listenOnLoopback(gateway.fetch));
  // The attacker's site: one empty page; its scripts run through page.evaluate.
  ({ server: attackerServer, port: attackerPort } = await listenOnLoopback(
    () =>
      new Response('<!doctype html><title>evil</title><p>nothing to see</p>', {
        headers: { 'content-type': 'text/html' },
      }),
  ));
});

afterAll(async () => {
  await browser?.close();
  await closeServer(gatewayServer);
  await closeServer(attackerServer);
});

/** A browser context whose every response is recorded with all its headers. */
async function recordingContext(): Promise<{ context: BrowserContext; responses: PageResponse[] }> {
  browser ??= await launchChromium([
    '--host-resolver-rules=MAP evil.example 127.0.0.1, MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
  ]);
  const context = await browser.newContext();
  const responses: PageResponse[] = [];
  context.on('response', (r) => responses.push(r));
  return { context, responses };
}

describe('a page on another origin', () => {
  it('calls GraphQL and REST with a key it was given, cannot read GraphiQL, never gets credentials', async () => {
    const { context, responses } = await recordingContext();
    try {
      const page = await context.newPage();
      page.setDefaultTimeout(PAGE_TIMEOUT);
      const attackerOrigin = `http://evil.example:${attackerPort}`;
      expect((await page.goto(`${attackerOrigin}/`))?.status()).toBe(200);
      const gateway = `http://127.0.0.1:${gatewayPort}`;

      const outcome = await page.evaluate(
        async ({ gateway, key }) => {
          const attempt = async (run: () => Promise<unknown>) => {
            try {
              return { ok: true, value: await run() };
            } catch (error) {
              return { ok: false, value: String(error) };
            }
          };
          return {
            graphiqlPage: await attempt(async () => {
              const r = await fetch(`${gateway}/graphql`, { headers: { accept: 'text/html' } });
              return r.text();
            }),
            graphiqlPageWithCredentials: await attempt(async () => {
              const r = await fetch(`${gateway}/graphql`, {
                headers: { accept: 'text/html' },
                credentials: 'include',
              });
              return r.text();
            }),
            explorerPage: await attempt(async () => {
              const r = await fetch(`${gateway}/explorer`, { credentials: 'include' });
              return r.text();
            }),
            graphql: await attempt(async () => {
              const r = await fetch(`${gateway}/graphql`, {
                method: 'POST',
                headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
                body: JSON.stringify({ query: '{ viewer { workspace scopes } }' }),
              });
              return { status: r.status, body: await r.json(), id: r.headers.get('x-request-id') };
            }),
            rest: await attempt(async () => {
              const r = await fetch(`${gateway}/v1/memory/semantic/datasets/user_42/entities`, {
                headers: { authorization: `Bearer ${key}` },
              });
              return { status: r.status, body: await r.json() };
            }),
            supaCloud: await attempt(async () => {
              const r = await fetch(`${gateway}/api/memories`, {
                headers: { authorization: `Bearer ${key}` },
              });
              return { status: r.status, isList: Array.isArray(await r.json()) };
            }),
            restError: await attempt(async () => {
              const r = await fetch(`${gateway}/v1/memory/semantic/datasets/user_42/entities`);
              return { status: r.status, body: await r.json() };
            }),
          };
        },
        { gateway, key: givenKey },
      );

      // GraphiQL's HTML (which holds the development key for loopback hosts) is unreadable.
      expect(outcome.graphiqlPage).toEqual({ ok: false, value: expect.stringMatching(/fetch/i) });
      expect(outcome.graphiqlPageWithCredentials.ok).toBe(false);
      // So is the memory explorer's page, which holds it too.
      expect(outcome.explorerPage).toEqual({ ok: false, value: expect.stringMatching(/fetch/i) });
      // The API answers, with the key the page was given.
      expect(outcome.graphql).toEqual({
        ok: true,
        value: {
          status: 200,
          body: { data: { viewer: { workspace: 'acme', scopes: ['READ'] } } },
          id: expect.any(String),
        },
      });
      expect(outcome.rest.ok).toBe(true);
      expect((outcome.rest.value as { status: number }).status).toBe(200);
      expect(outcome.supaCloud).toEqual({ ok: true, value: { status: 200, isList: true } });
      // Errors are readable too (a front end can show them).
      expect(outcome.restError).toEqual({
        ok: true,
        value: { status: 401, body: { error: expect.stringMatching(/Missing API key/) } },
      });

      // Chromium reports the answers the page could read; none of them allows credentials.
      const fromGateway = responses.filter((r) => r.url().startsWith(gateway));
      expect(fromGateway.map((r) => new URL(r.url()).pathname).sort()).toEqual([
        '/api/memories',
        '/graphql',
        '/v1/memory/semantic/datasets/user_42/entities',
        '/v1/memory/semantic/datasets/user_42/entities',
      ]);
      for (const r of fromGateway) {
        const headers = await r.allHeaders();
        expect(headers['access-control-allow-origin']).toBe('*');
        expect(headers['access-control-allow-credentials']).toBeUndefined();
      }
    } finally {
      await context.close();
    }
  }, 180_000);

  it('DNS rebinding: the gateway port under the attacker’s name is refused, key nowhere', async () => {
    const { context, responses } = await recordingContext();
    try {
      const page = await context.newPage();
      page.setDefaultTimeout(PAGE_TIMEOUT);
      // What a rebound name looks like to the browser: same origin as the gateway's port.
      const rebound = `http://evil.example:${gatewayPort}`;
      const response = await page.goto(`${rebound}/graphql`);
      expect(response?.status()).toBe(403);
      const shown = await page.content();
      expect(shown).toContain('ALLOWED_HOSTS');
      expect(shown).not.toContain(developmentKey);

      // Same-origin scripts on that page get the same refusal from every route.
      const answers = await page.evaluate(async () => {
        const paths = [
          '/graphql',
          '/v1/memory/semantic/datasets/user_42/facts',
          '/docs',
          '/explorer',
        ];
        return Promise.all(
          paths.map(async (p) => {
            const r = await fetch(p, { headers: { accept: 'text/html' } });
            return { status: r.status, text: await r.text() };
          }),
        );
      });
      for (const answer of answers) {
        expect(answer.status).toBe(403);
        expect(answer.text).not.toContain(developmentKey);
      }
      for (const r of responses) expect(await r.text()).not.toContain(developmentKey);

      // The same browser on a loopback name gets the page with the key (the developer's).
      const local = await page.goto(`http://127.0.0.1:${gatewayPort}/graphql`);
      expect(local?.status()).toBe(200);
      expect(await local?.text()).toContain(developmentKey);
      const explorer = await page.goto(`http://127.0.0.1:${gatewayPort}/explorer`);
      expect(explorer?.status()).toBe(200);
      expect(await explorer?.text()).toContain(developmentKey);
    } finally {
      await context.close();
    }
  }, 180_000);
});
