import type { ServerType } from '@hono/node-server';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedDataset } from '../../bench/generate.js';
import { createGateway } from '../../src/http/app.js';
import { createApiKey } from '../../src/store/workspaces.js';
import { launchChromium, PAGE_TIMEOUT } from '../helpers/browser.js';
import { openTestDatabase } from '../helpers/database.js';
import { closeServer, listenOnLoopback } from '../helpers/listener.js';

/**
 * The memory explorer on a dataset of 10,000 facts, in the suite's Chromium: it opens
 * with one page of facts, keeps only the rows in view in the document however many are
 * loaded (so scrolling stays light), and asks for the next page, within the gateway's
 * page limit, as the end comes into view. Counts, not times: how fast it feels is a
 * benchmark's business (docs/PERFORMANCE.md).
 */

const DATASET = 'large';

interface LoadedFact {
  factId: string;
  validAt: string;
}
/** The generator puts 80 % of its facts in the main dataset. */
const MAIN_FACTS = 10_000;

let server: ServerType | null = null;
let browser: Browser | null = null;
let origin = '';
let key = '';
let totalFacts = 0;

beforeAll(async () => {
  const database = await openTestDatabase();
  const { generated } = await seedDataset(database.collections, 'big', {
    dataset: DATASET,
    facts: MAIN_FACTS / 0.8,
    entities: 1500,
    episodes: 800,
    memories: 20,
  });
  totalFacts = generated.lines
    .map((line) => JSON.parse(line) as { type: string; dataset: string })
    .filter((record) => record.type === 'fact' && record.dataset === DATASET).length;
  key = (await createApiKey(database.collections, 'big', ['read'])).key;
  const gateway = createGateway({ database });
  ({ server, origin } = await listenOnLoopback(gateway.fetch));
}, 600_000);

afterAll(async () => {
  await browser?.close();
  await closeServer(server);
});

describe('the memory explorer on 10,000 facts', () => {
  it('opens with one page, keeps the document small while scrolling, and pages within limits', async () => {
    expect(totalFacts).toBeGreaterThanOrEqual(MAIN_FACTS);
    browser = await launchChromium(['--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1']);
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const pageSizes: number[] = [];
    const withCounts: boolean[] = [];
    const firstPages: boolean[] = [];
    // Each page by the cursor it was asked after (null: the first), the latest answer kept:
    // a page asked again (the first, when the live stream opens) replaces itself.
    const pages = new Map<string | null, LoadedFact[]>();
    const pageErrors: string[] = [];
    try {
      const page = await context.newPage();
      page.setDefaultTimeout(PAGE_TIMEOUT);
      page.on('pageerror', (error) => pageErrors.push(error.message));
      page.on('response', async (response) => {
        if (!response.url().endsWith('/graphql')) return;
        const body = response.request().postDataJSON() as {
          operationName: string;
          variables: { after?: string | null };
        };
        if (body.operationName !== 'ExplorerTimeline') return;
        // A response still arriving when the test closes its page has no body left to
        // read: it is no page the test looked at.
        const answer = (await response.json().catch(() => null)) as {
          data: { dataset: { facts: { edges: { node: LoadedFact }[] } } };
        } | null;
        if (!answer) return;
        pages.set(
          body.variables.after ?? null,
          answer.data.dataset.facts.edges.map((edge) => edge.node),
        );
      });
      page.on('request', (request) => {
        if (!request.url().endsWith('/graphql')) return;
        const body = request.postDataJSON() as {
          operationName: string;
          variables: { first?: number; after?: string | null; withCounts?: boolean };
        };
        if (body.operationName !== 'ExplorerTimeline') return;
        pageSizes.push(body.variables.first ?? 0);
        withCounts.push(body.variables.withCounts ?? true);
        firstPages.push(body.variables.after == null);
      });
      // The key as a user types it in once: kept in the tab's session storage.
      await page.goto(`${origin}/explorer`, { waitUntil: 'load' });
      await page.getByLabel('API key').fill(key);
      await page.getByRole('button', { name: 'Open' }).click();
      await page.getByRole('link', { name: DATASET, exact: true }).click();
      const summary = page.getByTestId('timeline-summary');
      await expect
        .poll(() => summary.textContent(), { timeout: PAGE_TIMEOUT })
        .toMatch(new RegExp(`^${totalFacts} facts known now.*\\(100 loaded\\)`));

      // Scroll to the end of what is loaded, again and again: each time the next page comes.
      const scroller = page.getByTestId('timeline');
      for (let pages = 2; pages <= 4; pages++) {
        await scroller.evaluate((element) => {
          element.scrollTop = element.scrollHeight;
        });
        await expect
          .poll(() => summary.textContent(), { timeout: PAGE_TIMEOUT })
          .toContain(`(${pages * 100} loaded)`);
      }
      // Hundreds of facts loaded, a few dozen rows in the document.
      const rows = await page.locator('.statement').count();
      const bars = await page.locator('.bar').count();
      expect(rows).toBeGreaterThan(0);
      expect(rows).toBeLessThanOrEqual(40);
      expect(bars).toBeLessThan(400);
      // The pages join up: no fact twice, none skipped in the gateway's order (validAt,
      // then factId, descending), so the rows the page drew are the dataset's first facts.
      await expect.poll(() => pages.size).toBeGreaterThanOrEqual(4);
      const loaded = [...pages.values()].flat();
      expect(new Set(loaded.map((f) => f.factId)).size).toBe(loaded.length);
      const order = (f: LoadedFact) => `${f.validAt} ${f.factId}`;
      expect(loaded.map(order)).toEqual(loaded.map(order).sort().reverse());
      // Every page asked for at most the gateway's largest page.
      expect(pageSizes.length).toBeGreaterThanOrEqual(4);
      expect(Math.max(...pageSizes)).toBeLessThanOrEqual(100);
      // The counts come with a first page only (the first, and the first again when the
      // live stream opens and the timeline asks once more for what it may have missed),
      // never with the next pages: no count over 10,000 facts per page scrolled.
      expect(withCounts).toEqual(firstPages);
      expect(withCounts[0]).toBe(true);
      expect(withCounts.filter((counted) => !counted).length).toBeGreaterThanOrEqual(3);
      expect(pageErrors).toEqual([]);
    } finally {
      await context.close();
    }
  }, 600_000);
});
