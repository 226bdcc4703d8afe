import { randomUUID } from 'node:crypto';
import type { ServerType } from '@hono/node-server';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDemoDataset } from '../../src/demo/seed.js';
import { createGateway } from '../../src/http/app.js';
import type { LiveStreams } from '../../src/http/liveStreams.js';
import type { Database } from '../../src/store/database.js';
import { recordEpisode } from '../../src/store/recordEpisode.js';
import { createApiKey, workspaceIdFor } from '../../src/store/workspaces.js';
import { launchChromium, PAGE_TIMEOUT } from '../helpers/browser.js';
import { openTestDatabase } from '../helpers/database.js';
import { closeServer, listenOnLoopback } from '../helpers/listener.js';
import { streamsFollowing } from '../helpers/live.js';

/**
 * GraphiQL end to end, in a real headless Chromium (test/helpers/browser.ts) against a
 * real listener on loopback. Every request that is not
 * for the test server is aborted and recorded, and the browser cannot resolve any host
 * name, so a passing run proves the page works with no internet access: its JS, CSS and
 * Monaco workers are all served by the gateway itself, under a policy that allows nothing
 * else. A page on another origin cannot frame it.
 *
 * Deliberately no skip: without Chromium this file fails.
 */

// Pinned in time so the count does not depend on the clock: at this instant three demo
// facts are live (the budget expired on 2026-09-01, the test drive starts in 2027, two
// others were invalidated earlier in 2026).
const QUERY = `{
  dataset(name: "user_42") {
    facts(asOf: "2026-10-01T00:00:00Z") {
      totalCount
      edges { node { subject predicate object } }
    }
  }
}`;

let server: ServerType | null = null;
let database: Database;
let live: LiveStreams;
const gatewayStreams = () => live.counts().streams;
/** Launched inside the test, not in a hook, so a missing Chromium fails the test itself. */
let browser: Browser | null = null;
let origin = '';
let key = '';

/** Requests the page tried to make to anything but the test server (all aborted). */
const foreignRequests: string[] = [];
/** Every request the browser context made, as seen by Playwright. */
const allRequests: string[] = [];
const pageErrors: string[] = [];
const consoleMessages: string[] = [];

function isLocal(url: string): boolean {
  const u = new URL(url);
  if (u.protocol === 'data:' || u.protocol === 'blob:') return true;
  return u.origin === origin;
}

/**
 * The text of a Monaco editor's rendered lines, non-breaking spaces made plain. Lines are
 * concatenated (no newlines), so only match text within one line.
 */
async function editorText(page: Page, selector: string): Promise<string> {
  const text = await page.locator(`${selector} .view-lines`).first().textContent();
  return (text ?? '').replace(/\u00a0/g, ' ');
}

beforeAll(async () => {
  const opened = await openTestDatabase();
  await loadDemoDataset(opened.collections, 'acme', new Date());
  key = (await createApiKey(opened.collections, 'acme', ['read'])).key;
  database = opened;
  const gateway = createGateway({
    database,
    // As in embedded mode: the page on a loopback host gets the key prefilled.
    developmentKey: key,
  });

  live = gateway.live;
  ({ server, origin } = await listenOnLoopback(gateway.fetch));
});

afterAll(async () => {
  await browser?.close();
  await closeServer(server);
});

describe('GraphiQL in a browser, offline', () => {
  it('loads from the gateway alone and runs a query with the prefilled key', async () => {
    // Belt and braces: even a request Playwright's routing did not see cannot leave.
    browser = await launchChromium(['--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1']);
    const context = await browser.newContext({ viewport: { width: 1600, height: 1200 } });
    try {
      context.on('request', (request) => {
        allRequests.push(`${request.method()} ${request.url()}`);
      });
      const page = await context.newPage();
      page.setDefaultTimeout(PAGE_TIMEOUT);
      page.on('pageerror', (error) => pageErrors.push(error.message));
      page.on('console', (message) => consoleMessages.push(message.text()));
      await page.route('**/*', (route) => {
        const url = route.request().url();
        if (isLocal(url)) return route.continue();
        foreignRequests.push(url);
        return route.abort('internetdisconnected');
      });

      // Opened plainly (a normal navigation, Accept: text/html), the page carries the key in
      // the headers editor, and its default query runs with it.
      const response = await page.goto(`${origin}/graphql`, {
        waitUntil: 'load',
        timeout: PAGE_TIMEOUT,
      });
      expect(response?.status()).toBe(200);
      expect(response?.headers()['content-type']).toMatch(/text\/html/);
      expect(response?.headers()['content-security-policy']).toContain("frame-ancestors 'none'");
      await expect
        .poll(() => page.title(), { timeout: PAGE_TIMEOUT })
        .toBe('Memory gateway GraphiQL');
      const queryEditor = '.graphiql-query-editor';
      await page.locator(`${queryEditor} .view-lines`).first().waitFor({ state: 'visible' });
      await expect
        .poll(() => editorText(page, queryEditor), { timeout: PAGE_TIMEOUT })
        .toContain('dataset(name: "user_42")');
      await page.getByRole('button', { name: 'Headers' }).click();
      // The tool pane holds both editors; the variables one is hidden.
      const headersEditor = '.graphiql-editor-tool .graphiql-editor:not(.hidden)';
      await expect
        .poll(() => editorText(page, headersEditor), { timeout: PAGE_TIMEOUT })
        .toContain(`"Authorization": "Bearer ${key}"`);

      // Run it with the execute button and wait for the gateway's answer.
      const answer = page.waitForResponse(
        (r) =>
          r.url().startsWith(`${origin}/graphql`) &&
          r.request().method() === 'POST' &&
          (r.request().postData() ?? '').includes('user_42'),
        { timeout: PAGE_TIMEOUT },
      );
      await page.locator('.graphiql-execute-button').click();
      const result = await answer;
      expect(result.status()).toBe(200);
      const body = (await result.json()) as {
        data?: { dataset: { facts: { totalCount: number } } };
        errors?: unknown[];
      };
      expect(body.errors).toBeUndefined();
      // The default query: the facts live now, three until 2035.
      expect(body.data?.dataset.facts.totalCount).toBe(3);

      // The response pane shows the data.
      const responsePane = '.graphiql-response';
      await expect
        .poll(() => editorText(page, responsePane), { timeout: PAGE_TIMEOUT })
        .toContain('"totalCount": 3');
      const shown = await editorText(page, responsePane);
      expect(shown).not.toContain('"errors"');

      // A link that preloads an operation (GraphiQL reads ?query= on load), in the same
      // browser: the operation is shown, and the key is not there, so nothing runs with the
      // key that its user has not put there.
      const linked = await page.goto(`${origin}/graphql?query=${encodeURIComponent(QUERY)}`, {
        waitUntil: 'load',
        timeout: PAGE_TIMEOUT,
      });
      expect(linked?.status()).toBe(200);
      await page.locator(`${queryEditor} .view-lines`).first().waitFor({ state: 'visible' });
      await expect
        .poll(() => editorText(page, queryEditor), { timeout: PAGE_TIMEOUT })
        .toContain('asOf: "2026-10-01T00:00:00Z"');
      await page.getByRole('button', { name: 'Headers' }).click();
      await page.locator(`${headersEditor} .view-lines`).first().waitFor({ state: 'visible' });
      expect(await editorText(page, headersEditor)).not.toContain(key);

      if (process.env.GRAPHIQL_SCREENSHOT) {
        await page.screenshot({ path: process.env.GRAPHIQL_SCREENSHOT, fullPage: true });
      }

      // Offline: nothing but the test server was ever asked for.
      expect(foreignRequests).toEqual([]);
      const foreign = allRequests.filter((r) => !isLocal(r.slice(r.indexOf(' ') + 1)));
      expect(foreign).toEqual([]);
      expect(allRequests.length).toBeGreaterThan(0);
      expect(pageErrors).toEqual([]);
      // Its policy let it do everything it does: no violation reported.
      expect(consoleMessages.filter((m) => /Content Security Policy/i.test(m))).toEqual([]);
      // Its assets are files of their own, under a versioned path.
      expect(allRequests.some((r) => r.includes('/graphiql/assets/'))).toBe(true);
    } finally {
      await context.close();
    }
  }, 180_000);

  it('runs a subscription: the changes appear in the response pane as they happen', async () => {
    browser ??= await launchChromium(['--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1']);
    const context = await browser.newContext({ viewport: { width: 1600, height: 1200 } });
    try {
      const page = await context.newPage();
      page.setDefaultTimeout(PAGE_TIMEOUT);
      await page.goto(`${origin}/graphql`, { waitUntil: 'load', timeout: PAGE_TIMEOUT });
      const queryEditor = '.graphiql-query-editor';
      await page.locator(`${queryEditor} .view-lines`).first().waitFor({ state: 'visible' });
      await expect
        .poll(() => editorText(page, queryEditor), { timeout: PAGE_TIMEOUT })
        .toContain('dataset(name: "user_42")');
      // The default query replaced by a subscription, as its user would type it.
      await page.locator(`${queryEditor} .view-lines`).first().click();
      await page.keyboard.press('ControlOrMeta+A');
      await page.keyboard.press('Delete');
      await page.keyboard.insertText(
        'subscription Follow { datasetChanges(dataset: "user_42") { kind fact { object } } }',
      );
      await expect
        .poll(() => editorText(page, queryEditor), { timeout: PAGE_TIMEOUT })
        .toContain('subscription Follow');
      // GraphiQL infers the operation to run from the document a moment after an edit; a
      // click before that runs the old name ("Cannot infer operation"): click again then.
      // Only while the button offers to execute: once it is running, a click would stop it.
      const run = page.locator('.graphiql-execute-button');
      const running = async () =>
        !(await run.getAttribute('aria-label'))?.startsWith('Execute') || gatewayStreams() > 0;
      await expect
        .poll(
          async () => {
            if (!(await running())) {
              await run.click();
              // The moment the page takes to show it runs (the button turns to Stop): the
              // next check then does not click again, which would stop it.
              for (let i = 0; i < 20 && !(await running()); i++) {
                await new Promise((r) => setTimeout(r, 50));
              }
            }
            return gatewayStreams();
          },
          { timeout: PAGE_TIMEOUT, interval: 250 },
        )
        .toBe(1);
      // Once the stream follows the feed (it subscribed from now), a change recorded in the
      // dataset shows up in the pane.
      await streamsFollowing(live, 1, { withinMs: PAGE_TIMEOUT });
      await recordEpisode(
        database.collections,
        { workspaceId: workspaceIdFor('acme'), dataset: 'user_42' },
        {
          episodeId: randomUUID(),
          occurredAt: new Date('2026-11-01T00:00:00Z'),
          source: 'chat',
          content: 'user: I bought a tandem',
          entities: [],
          facts: [
            {
              subject: 'user',
              predicate: 'owns',
              object: 'a tandem',
              objectIsEntity: false,
              confidence: 0.9,
              sourceQuote: null,
              validAt: new Date('2026-11-01T00:00:00Z'),
              validUntil: null,
              supersedes: [],
              replaceExisting: false,
            },
          ],
        },
        new Date(),
      );
      const responsePane = '.graphiql-response';
      await expect
        .poll(() => editorText(page, responsePane), { timeout: PAGE_TIMEOUT })
        .toContain('"object": "a tandem"');
      expect(await editorText(page, responsePane)).toContain('FACT_RECORDED');
    } finally {
      await context.close();
    }
  }, 180_000);

  it('cannot be framed by a page of another origin: the frame stays empty, nothing runs', async () => {
    const attacker = await listenOnLoopback(
      () =>
        new Response(
          `<!doctype html><html><body><iframe id="f" src="${origin}/graphql?query=${encodeURIComponent('mutation { eraseDataset(name: "user_42") { facts } }')}" width="900" height="700"></iframe></body></html>`,
          { headers: { 'content-type': 'text/html' } },
        ),
    );
    browser ??= await launchChromium(['--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1']);
    const context = await browser.newContext();
    const seen: string[] = [];
    try {
      context.on('request', (request) => seen.push(`${request.method()} ${request.url()}`));
      const page = await context.newPage();
      const messages: string[] = [];
      page.on('console', (message) => messages.push(message.text()));
      await page.goto(attacker.origin, { waitUntil: 'load', timeout: PAGE_TIMEOUT });
      // Chromium fetched the framed document and refused to show it.
      await expect
        .poll(() => seen.some((r) => r.startsWith(`GET ${origin}/graphql?`)), {
          timeout: PAGE_TIMEOUT,
        })
        .toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      expect(seen.filter((r) => r.includes('/graphiql/assets/'))).toEqual([]);
      expect(seen.filter((r) => r.startsWith(`POST ${origin}`))).toEqual([]);
      expect(messages.join('\n')).toMatch(/frame-ancestors 'none'|Refused to (display|frame)/);
    } finally {
      await context.close();
      await closeServer(attacker.server);
    }
  }, 120_000);
});
