import type { ServerType } from '@hono/node-server';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDemoDataset } from '../../src/demo/seed.js';
import { createGateway } from '../../src/http/app.js';
import { createApiKey } from '../../src/store/workspaces.js';
import { launchChromium, PAGE_TIMEOUT } from '../helpers/browser.js';
import { openTestDatabase } from '../helpers/database.js';
import { closeServer, listenOnLoopback } from '../helpers/listener.js';

/**
 * GraphiQL on a phone's width (390 × 844), in the suite's headless Chromium, offline as in
 * test/e2e/graphiql.test.ts: the gateway's own narrow style sheet (src/http/graphiql.ts)
 * stacks the result under the editors at the page's width and keeps the title clear of
 * the tabs and the editors, and a query runs with its result in sight.
 * GRAPHIQL_390_SCREENSHOT=docs/graphiql-390.png writes docs/EXPLORER.md's screenshot.
 *
 * Deliberately no skip: without Chromium this file fails.
 */

const WIDTH = 390;
const HEIGHT = 844;

let server: ServerType | null = null;
let browser: Browser | null = null;
let origin = '';

beforeAll(async () => {
  const database = await openTestDatabase();
  await loadDemoDataset(database.collections, 'acme', new Date());
  const key = (await createApiKey(database.collections, 'acme', ['read'])).key;
  // As in embedded mode: the page on a loopback host gets the key prefilled.
  const gateway = createGateway({ database, developmentKey: key });
  ({ server, origin } = await listenOnLoopback(gateway.fetch));
});

afterAll(async () => {
  await browser?.close();
  await closeServer(server);
});

type Box = { x: number; y: number; width: number; height: number };

async function boxOf(page: Page, selector: string): Promise<Box> {
  const box = await page.locator(selector).first().boundingBox();
  expect(box, `${selector} is laid out`).not.toBeNull();
  return box!;
}

/** Whether two boxes share any area (touching edges do not count). */
const intersects = (a: Box, b: Box) =>
  a.x < b.x + b.width - 0.5 &&
  b.x < a.x + a.width - 0.5 &&
  a.y < b.y + b.height - 0.5 &&
  b.y < a.y + a.height - 0.5;

/** The text of a Monaco editor's rendered lines, non-breaking spaces made plain. */
async function editorText(page: Page, selector: string): Promise<string> {
  const text = await page.locator(`${selector} .view-lines`).first().textContent();
  return (text ?? '').replace(/\u00a0/g, ' ');
}

describe('GraphiQL at 390 px wide', () => {
  it('stacks the result under the editors at the page width, the title clear of the tabs, and runs a query', async () => {
    browser = await launchChromium(['--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1']);
    const context = await browser.newContext({ viewport: { width: WIDTH, height: HEIGHT } });
    const foreign: string[] = [];
    const pageErrors: string[] = [];
    try {
      const page = await context.newPage();
      page.setDefaultTimeout(PAGE_TIMEOUT);
      page.on('pageerror', (error) => pageErrors.push(error.message));
      await page.route('**/*', (route) => {
        const url = new URL(route.request().url());
        if (url.origin === origin || url.protocol === 'data:' || url.protocol === 'blob:') {
          return route.continue();
        }
        foreign.push(url.href);
        return route.abort('internetdisconnected');
      });
      const response = await page.goto(`${origin}/graphql`, { waitUntil: 'load' });
      expect(response?.status()).toBe(200);
      // A phone lays the page out at its own width, not a desktop's 980 px.
      expect(await page.locator('meta[name="viewport"]').getAttribute('content')).toContain(
        'width=device-width',
      );
      const queryEditor = '.graphiql-query-editor';
      await page.locator(`${queryEditor} .view-lines`).first().waitFor({ state: 'visible' });
      await expect
        .poll(() => editorText(page, queryEditor), { timeout: PAGE_TIMEOUT })
        .toContain('dataset(name: "user_42")');

      // The result pane: most of the page's width, below the editors, not beside them.
      const result = await boxOf(page, '.graphiql-response');
      const editors = await boxOf(page, '.graphiql-editors');
      expect(result.width).toBeGreaterThanOrEqual(0.8 * WIDTH);
      expect(editors.width).toBeGreaterThanOrEqual(0.8 * WIDTH);
      expect(result.y).toBeGreaterThanOrEqual(editors.y + editors.height - 1);
      // Nothing sticks out sideways: no horizontal scrolling of the page.
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(
        WIDTH,
      );

      // The title overlaps neither the tabs nor the editors, and shows whole.
      const title = await boxOf(page, '.graphiql-logo');
      expect(intersects(title, await boxOf(page, '.graphiql-tabs'))).toBe(false);
      expect(intersects(title, await boxOf(page, '.graphiql-tab'))).toBe(false);
      expect(intersects(title, editors)).toBe(false);
      expect(title.x + title.width).toBeLessThanOrEqual(WIDTH);
      const clipped = await page
        .locator('.graphiql-logo')
        .evaluate((e) => e.scrollWidth > e.clientWidth + 1);
      expect(clipped).toBe(false);

      // The default query runs, and its result is seen in the pane.
      const answer = page.waitForResponse(
        (r) => r.url() === `${origin}/graphql` && r.request().method() === 'POST',
      );
      await page.locator('.graphiql-execute-button').click();
      expect((await answer).status()).toBe(200);
      const responsePane = '.graphiql-response';
      await expect
        .poll(() => editorText(page, responsePane), { timeout: PAGE_TIMEOUT })
        .toContain('"totalCount": 3');
      await page.locator(responsePane).scrollIntoViewIfNeeded();
      const line = page.locator(`${responsePane} .view-line`, { hasText: '"totalCount": 3' });
      await line.scrollIntoViewIfNeeded();
      const lineBox = await line.boundingBox();
      expect(lineBox).not.toBeNull();
      // The whole line is in the viewport, not cut off by a one-character-wide pane.
      expect(lineBox!.y).toBeGreaterThanOrEqual(0);
      expect(lineBox!.y + lineBox!.height).toBeLessThanOrEqual(HEIGHT);
      const text = await page.locator(`${responsePane} .view-lines`).first().boundingBox();
      expect(text!.width).toBeGreaterThanOrEqual(0.6 * WIDTH);

      if (process.env.GRAPHIQL_390_SCREENSHOT) {
        await page.locator('#graphiql-session').evaluate((e) => {
          e.scrollTop = 0;
        });
        await page.screenshot({ path: process.env.GRAPHIQL_390_SCREENSHOT });
      }
      expect(foreign).toEqual([]);
      expect(pageErrors).toEqual([]);
    } finally {
      await context.close();
    }
  }, 180_000);
});
