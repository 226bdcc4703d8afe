import { randomUUID } from 'node:crypto';
import type { ServerType } from '@hono/node-server';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDemoDataset } from '../../src/demo/seed.js';
import { createGateway } from '../../src/http/app.js';
import type { Database } from '../../src/store/database.js';
import { deleteFact } from '../../src/store/factLifecycle.js';
import { recordEpisode } from '../../src/store/recordEpisode.js';
import { createApiKey, workspaceIdFor } from '../../src/store/workspaces.js';
import { openTestDatabase } from '../helpers/database.js';
import { DEMO } from '../helpers/demo.js';
import { closeServer, listenOnLoopback } from '../helpers/listener.js';
import {
  offlineBrowser,
  setInstant as setInstantAndWait,
  typeInstant,
} from '../helpers/offlineBrowser.js';

/**
 * The memory explorer (/explorer) end to end, in the suite's headless Chromium against a
 * real listener on loopback and the demo dataset. As in test/e2e/graphiql.test.ts, every
 * request for anything but the test server is aborted and recorded, and the browser can
 * resolve no host name: a passing run proves the page works offline, from the gateway's
 * own assets, through its public GraphQL API alone.
 *
 * The demo's instants are fixed (2026); the page's empty instants mean the gateway's now.
 * EXPLORER_SCREENSHOT=docs/explorer.png writes the README's screenshot.
 *
 * Deliberately no skip: without Chromium this file fails.
 */

let server: ServerType | null = null;
let origin = '';
let developmentKey = '';
let database: Database;

const browser = offlineBrowser(() => origin);
const { openContext, newPage, foreignRequests, pageErrors, operations } = browser;

beforeAll(async () => {
  database = await openTestDatabase();
  await loadDemoDataset(database.collections, 'acme', new Date());
  developmentKey = (await createApiKey(database.collections, 'acme', ['read'])).key;
  // As `npm start` on the embedded store: the page on a loopback host gets the key.
  const gateway = createGateway({ database, developmentKey });
  ({ server, origin } = await listenOnLoopback(gateway.fetch));
});

afterAll(async () => {
  await browser.close();
  await closeServer(server);
});

/** The bar of one fact on the timeline. */
const bar = (page: Page, factId: string) => page.locator(`.bar[data-fact-id="${factId}"]`);

const setInstant = (page: Page, testId: string, value: string) =>
  setInstantAndWait(page, origin, testId, value);

describe('the memory explorer in a browser, offline, on the demo dataset', () => {
  it('opens with the prefilled key, draws the statements of user_42 and answers what was believed when', async () => {
    const context = await openContext();
    try {
      const page = await newPage(context);
      const response = await page.goto(`${origin}/explorer`, { waitUntil: 'load' });
      expect(response?.status()).toBe(200);
      expect(await page.title()).toBe('Memory explorer');

      // The key was prefilled: the workspace's datasets are listed.
      await page.getByRole('link', { name: 'user_42' }).click();
      const timeline = page.getByTestId('timeline');
      await timeline.waitFor();
      for (const statement of [
        'user / is interested in',
        'user / lives in',
        'user / has a budget of',
        'user / will test drive',
        'honda civic / is made by',
      ]) {
        await expect
          .poll(() => timeline.locator(`[data-statement="${statement}"]`).count())
          .toBe(1);
      }
      // Known now: all seven facts and the Civic interest's corrected version; the Civic
      // interest superseded, Berlin deleted.
      await expect.poll(() => page.locator('.bar').count()).toBe(8);
      expect(await bar(page, DEMO.facts.hondaInterest).getAttribute('data-look')).toBe(
        'superseded',
      );
      // Its corrected version: a bar that ends where its successor's begins, no longer valid.
      const version = bar(page, DEMO.facts.hondaInterestUntilToyota);
      expect(await version.getAttribute('data-look')).toBe('expired');
      const [versionBox, toyotaBox] = await Promise.all([
        version.boundingBox(),
        bar(page, DEMO.facts.toyotaInterest).boundingBox(),
      ]);
      expect(Math.abs(versionBox!.x + versionBox!.width - toyotaBox!.x)).toBeLessThan(1.5);
      await version.hover();
      await expect
        .poll(() => page.getByTestId('corrected-version').textContent())
        .toContain('true until user is interested in toyota corolla hybrid began');
      expect(await bar(page, DEMO.facts.livesInBerlin).getAttribute('data-look')).toBe('deleted');
      expect(await bar(page, DEMO.facts.testDrive).getAttribute('data-look')).toBe('future');

      // Hover shows the fact: confidence, source quote, episode, and the link to its successor.
      await bar(page, DEMO.facts.hondaInterest).hover();
      const details = page.getByTestId('details');
      await expect.poll(() => details.textContent()).toContain('the honda civic looks nice');
      expect(await details.textContent()).toContain('confidence 0.80');
      expect(await details.textContent()).toContain('toyota corolla hybrid');
      await page.getByTestId('follow-successor').click();
      await expect
        .poll(() => page.evaluate(() => document.activeElement?.getAttribute('data-fact-id')))
        .toBe(DEMO.facts.toyotaInterest);

      // As known just before the Civic interest was recorded (18:30:04): not there yet.
      await setInstant(page, 'known-at', '2026-05-10T18:30:03');
      await expect.poll(() => bar(page, DEMO.facts.hondaInterest).count()).toBe(0);
      expect(await page.locator('.bar').count()).toBe(1); // only Berlin was known

      // Known between recording and supersession: believed, and live on 1 June.
      await setInstant(page, 'known-at', '2026-06-01T00:00:00');
      await setInstant(page, 'true-at', '2026-06-01T00:00:00');
      await expect
        .poll(() => bar(page, DEMO.facts.hondaInterest).getAttribute('data-look'))
        .toBe('live');
      expect(await bar(page, DEMO.facts.toyotaInterest).count()).toBe(0);
      expect(await bar(page, DEMO.facts.hondaInterestUntilToyota).count()).toBe(0);

      // Known just after its invalidAt (09:14:06): superseded, the Corolla now believed,
      // and the Civic interest's version, live on 1 June.
      await setInstant(page, 'known-at', '2026-08-16T09:14:07');
      await expect
        .poll(() => bar(page, DEMO.facts.hondaInterest).getAttribute('data-look'))
        .toBe('superseded');
      expect(await bar(page, DEMO.facts.toyotaInterest).count()).toBe(1);
      expect(await bar(page, DEMO.facts.hondaInterestUntilToyota).getAttribute('data-look')).toBe(
        'live',
      );

      if (process.env.EXPLORER_SCREENSHOT) {
        await setInstant(page, 'true-at', '2026-08-20T00:00:00');
        await bar(page, DEMO.facts.hondaInterest).click();
        await page.screenshot({ path: process.env.EXPLORER_SCREENSHOT });
      }

      // Keyboard only: Tab from "As known at" reaches the bars, each showing its details;
      // Enter moves into them, Tab reaches the successor link, Enter follows it.
      const active = () =>
        page.evaluate(() => ({
          factId: document.activeElement?.getAttribute('data-fact-id') ?? null,
          testId: document.activeElement?.getAttribute('data-testid') ?? null,
        }));
      await page.getByTestId('known-at').focus();
      for (let i = 0; i < 30 && (await active()).factId !== DEMO.facts.hondaInterest; i++) {
        await page.keyboard.press('Tab');
      }
      expect((await active()).factId).toBe(DEMO.facts.hondaInterest);
      await expect
        .poll(() => details.textContent())
        .toContain(`factId ${DEMO.facts.hondaInterest}`);
      await page.keyboard.press('Enter');
      await expect.poll(async () => (await active()).testId).toBe('details');
      for (let i = 0; i < 10 && (await active()).testId !== 'follow-successor'; i++) {
        await page.keyboard.press('Tab');
      }
      expect((await active()).testId).toBe('follow-successor');
      await page.keyboard.press('Enter');
      await expect.poll(async () => (await active()).factId).toBe(DEMO.facts.toyotaInterest);
      // Escape from the details goes back to the fact.
      await page.keyboard.press('Enter');
      await expect.poll(async () => (await active()).testId).toBe('details');
      await page.keyboard.press('Escape');
      await expect.poll(async () => (await active()).factId).toBe(DEMO.facts.toyotaInterest);

      expect(operations).toContain('ExplorerTimeline');
      expect(new Set(operations)).toEqual(
        new Set(['ExplorerViewer', 'ExplorerTimeline', 'ExplorerLiveChanges']),
      );
    } finally {
      await context.close();
    }
    expect(foreignRequests).toEqual([]);
    expect(pageErrors).toEqual([]);
  }, 180_000);

  it('follows the dataset live while "as known at" is now: a fact recorded meanwhile appears, a deletion restyles it', async () => {
    const context = await openContext();
    try {
      const page = await newPage(context);
      await page.goto(`${origin}/explorer#/user_42`, { waitUntil: 'load' });
      await page.getByTestId('timeline').waitFor();
      await expect
        .poll(() => page.getByTestId('live-state').getAttribute('data-state'))
        .toBe('live');
      const tenant = { workspaceId: workspaceIdFor('acme'), dataset: 'user_42' };
      const recorded = await recordEpisode(
        database.collections,
        tenant,
        {
          episodeId: randomUUID(),
          occurredAt: new Date('2026-11-20T00:00:00Z'),
          source: 'chat',
          content: 'user: I bought a tandem bicycle',
          entities: [],
          facts: [
            {
              subject: 'user',
              predicate: 'owns',
              object: 'a tandem bicycle',
              objectIsEntity: false,
              confidence: 0.9,
              sourceQuote: null,
              validAt: new Date('2026-11-20T00:00:00Z'),
              validUntil: null,
              supersedes: [],
              replaceExisting: false,
            },
          ],
        },
        new Date(),
      );
      const factId = recorded.facts[0]!.factId;
      // No reload: the bar appears, believed true.
      await expect.poll(() => bar(page, factId).getAttribute('class')).toContain('look-live');
      expect(await page.getByTestId('timeline').textContent()).toContain('a tandem bicycle');
      await deleteFact(database.collections, tenant, factId, new Date());
      await expect.poll(() => bar(page, factId).getAttribute('class')).toContain('look-deleted');
      // Looking back in time ("as known at" set) is not live.
      await setInstant(page, 'known-at', '2026-09-01T00:00:00');
      expect(await page.getByTestId('live-state').count()).toBe(0);
    } finally {
      await context.close();
    }
    expect(foreignRequests).toEqual([]);
    expect(pageErrors).toEqual([]);
  }, 180_000);

  it('lists what changed between two known-at instants: the demo supersession', async () => {
    const context = await openContext();
    try {
      const page = await newPage(context);
      await page.goto(`${origin}/explorer#/user_42/changes`, { waitUntil: 'load' });
      await setInstant(page, 'changes-since', '2026-08-01T00:00:00');
      await setInstant(page, 'changes-until', '2026-09-01T00:00:00');
      const superseded = page.getByRole('list', { name: 'Facts superseded' });
      await expect
        .poll(() => superseded.locator(`[data-fact-id="${DEMO.facts.hondaInterest}"]`).count())
        .toBe(1);
      const text = await superseded.textContent();
      expect(text).toContain('user is interested in honda civic');
      expect(text).toContain('→ user is interested in toyota corolla hybrid');
      const learned = page.getByRole('list', { name: 'Facts learned' });
      // The Corolla, the test drive and the Civic interest's corrected version, recorded with
      // its supersession (polled: the previous range's answer stays on screen until the new
      // one is drawn).
      await expect.poll(() => learned.locator('li').count()).toBe(3);
      expect(
        await learned.locator(`[data-fact-id="${DEMO.facts.hondaInterestUntilToyota}"]`).count(),
      ).toBe(1);
      expect(await page.getByRole('list', { name: 'Facts deleted' }).count()).toBe(0);

      // Widened to July: Berlin's deletion (1 July) is listed too.
      await setInstant(page, 'changes-since', '2026-06-30T00:00:00');
      await expect
        .poll(() =>
          page
            .getByRole('list', { name: 'Facts deleted' })
            .locator(`[data-fact-id="${DEMO.facts.livesInBerlin}"]`)
            .count(),
        )
        .toBe(1);
    } finally {
      await context.close();
    }
    expect(foreignRequests).toEqual([]);
    expect(pageErrors).toEqual([]);
  }, 180_000);

  it('opens an entity page and an episode page', async () => {
    const context = await openContext();
    try {
      const page = await newPage(context);
      await page.goto(`${origin}/explorer#/user_42/entity/honda%20civic`, { waitUntil: 'load' });
      const entity = page.getByTestId('entity-page');
      await expect.poll(() => entity.locator('h2').textContent()).toContain('honda civic');
      // Its live fact (made by honda), and the history of "user is interested in" does not
      // show: that statement's live fact is about the Corolla.
      await expect.poll(() => bar(page, DEMO.facts.hondaMadeBy).count()).toBe(1);

      // As known on 1 June 2026: the Civic interest was believed, the Corolla unknown.
      await setInstant(page, 'known-at', '2026-06-01T00:00:00');
      await expect
        .poll(() => bar(page, DEMO.facts.hondaInterest).getAttribute('data-look'))
        .toBe('live');
      expect(await bar(page, DEMO.facts.toyotaInterest).count()).toBe(0);
      // Back to now: answered from the page's cache, so no request to wait for.
      await typeInstant(page, 'known-at', '');
      await expect.poll(() => bar(page, DEMO.facts.hondaInterest).count()).toBe(0);

      // From a fact's details to its episode.
      await bar(page, DEMO.facts.hondaMadeBy).hover();
      await page.getByTestId('details').getByRole('link', { name: /2026/ }).click();
      const episode = page.getByTestId('episode-page');
      await expect.poll(() => episode.textContent()).toContain('I need a family car');
      const facts = episode.getByRole('list', { name: 'Facts from this episode' });
      // Its four facts and the Civic interest's corrected version (no longer valid).
      expect(await facts.locator('li').count()).toBe(5);
      expect(
        await facts
          .locator(`[data-fact-id="${DEMO.facts.hondaInterestUntilToyota}"]`)
          .getAttribute('data-look'),
      ).toBe('expired');
      expect(
        await facts
          .locator(`[data-fact-id="${DEMO.facts.hondaInterest}"]`)
          .getAttribute('data-look'),
      ).toBe('superseded');
      expect(page.url()).toContain(`#/user_42/episode/${DEMO.episodes.hondaCivic}`);

      // As known before it was recorded, the store knew nothing of it.
      await setInstant(page, 'known-at', '2026-05-01T00:00:00');
      await expect
        .poll(() => page.locator('main').textContent())
        .toContain('knew nothing of it then');
      expect(await page.getByTestId('episode-page').count()).toBe(0);
    } finally {
      await context.close();
    }
    expect(foreignRequests).toEqual([]);
    expect(pageErrors).toEqual([]);
  }, 180_000);

  it('searches by words and by ranked recall, and lists memories live, archived and superseded', async () => {
    const context = await openContext();
    try {
      const page = await newPage(context);
      await page.goto(`${origin}/explorer#/user_42/search`, { waitUntil: 'load' });
      await page.getByLabel('Words').fill('corolla hybrid');
      await page.getByRole('button', { name: 'Search' }).click();
      const matching = page.getByRole('list', { name: 'Matching facts' });
      await expect.poll(() => matching.locator('li').count()).toBe(2);

      // As known on 1 June 2026 the Corolla was not yet heard of.
      await setInstant(page, 'known-at', '2026-06-01T00:00:00');
      await expect
        .poll(() => page.locator('main').textContent())
        .toContain('No fact contains every one of those words.');
      // Back to now: answered from the page's cache, so no request to wait for.
      await typeInstant(page, 'known-at', '');
      await expect.poll(() => matching.locator('li').count()).toBe(2);

      await page.getByLabel('Ranked recall (facts and memories)').check();
      await page.getByRole('button', { name: 'Search' }).click();
      const memories = page.getByRole('list', { name: 'Recalled memories' });
      await expect
        .poll(() => memories.textContent())
        .toContain('The user is interested in a Toyota Corolla Hybrid.');
      expect(await page.getByRole('list', { name: 'Recalled facts' }).textContent()).toContain(
        'relevance 1.00',
      );

      await page.getByRole('link', { name: 'Memories' }).click();
      const list = page.getByRole('list', { name: 'Memories' });
      await expect.poll(() => list.locator('li').count()).toBe(4);
      const statuses = await list
        .locator('li')
        .evaluateAll((items) => items.map((item) => item.getAttribute('data-status')).sort());
      expect(statuses).toEqual(['archived', 'live', 'live', 'superseded']);
      // As of 1 June 2026: the Corolla memory did not exist yet, the Civic one was valid and
      // the Berlin one not yet archived (1 July).
      await typeInstant(page, 'memories-as-of', '2026-06-01T00:00:00');
      await expect.poll(() => list.locator('li').count()).toBe(3);
      expect(await list.textContent()).not.toContain('Toyota Corolla');
      expect(
        await list
          .locator('li')
          .evaluateAll((items) => items.map((item) => item.getAttribute('data-status')).sort()),
      ).toEqual(['live', 'live', 'live']);
      await typeInstant(page, 'memories-as-of', '');
      await expect.poll(() => list.locator('li').count()).toBe(4);

      // The live view alone: neither the archived nor the superseded one.
      await page.getByLabel('Archived').uncheck();
      await page.getByLabel('Superseded').uncheck();
      await expect.poll(() => list.locator('li').count()).toBe(2);
    } finally {
      await context.close();
    }
    expect(foreignRequests).toEqual([]);
    expect(pageErrors).toEqual([]);
  }, 180_000);

  it('says the key is wrong on a 401, and is readable at phone width', async () => {
    const context = await openContext({ width: 390, height: 844 });
    try {
      const page = await newPage(context);
      await page.goto(`${origin}/explorer#/user_42`, { waitUntil: 'load' });
      await page.getByTestId('timeline').waitFor();
      // Nothing wider than the window: no sideways scrolling at phone width.
      expect(
        await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth),
      ).toBe(true);

      await page.getByRole('button', { name: 'Change key' }).click();
      await page.getByLabel('API key').fill('mk_wrong_key');
      const answered = page.waitForResponse((r) => r.url() === `${origin}/graphql`);
      await page.getByRole('button', { name: 'Open' }).click();
      expect((await answered).status()).toBe(401);
      await expect
        .poll(() => page.getByRole('alert').textContent())
        .toContain('The gateway refused this key (401 Unauthorized)');
      // The refused key is not kept, and the prefilled one is not silently reused.
      expect(await page.evaluate(() => sessionStorage.getItem('memory-explorer.key'))).toBe('');
    } finally {
      await context.close();
    }
    expect(foreignRequests).toEqual([]);
    expect(pageErrors).toEqual([]);
  }, 180_000);
});
