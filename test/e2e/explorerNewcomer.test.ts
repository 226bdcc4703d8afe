import type { ServerType } from '@hono/node-server';
import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDemoDataset } from '../../src/demo/seed.js';
import { createGateway } from '../../src/http/app.js';
import type { Database } from '../../src/store/database.js';
import { recordEpisode } from '../../src/store/recordEpisode.js';
import { createApiKey } from '../../src/store/workspaces.js';
import { openTestDatabase } from '../helpers/database.js';
import { episodeInput, factInput, testTenant } from '../helpers/episodeInput.js';
import { closeServer, listenOnLoopback } from '../helpers/listener.js';
import { offlineBrowser } from '../helpers/offlineBrowser.js';

/**
 * The explorer as a newcomer first meets it after `npm start` (issue "A newcomer's first
 * hour"): the development workspace (one dataset, the demo's user_42) opened with the
 * development key the page is handed, at a phone's width. Its one dataset is shown with its
 * views; an entity none of whose facts is believed any longer shows their history and what
 * happened to them; the Keys page names the development key; the key form's expiry says
 * empty is never; no message shows markdown backticks. In the suite's Chromium, offline.
 * EXPLORER_390_SCREENSHOT=docs/explorer-390.png writes docs/EXPLORER.md's screenshot.
 *
 * Deliberately no skip: without Chromium this file fails.
 */

const PHONE = { width: 390, height: 844 };

let server: ServerType | null = null;
let origin = '';
let emptyKey = '';
let database: Database;
const browser = offlineBrowser(() => origin);

beforeAll(async () => {
  const opened = await openTestDatabase();
  // As src/demo/seed.ts's ensureDevelopmentData: an admin key and the demo dataset.
  const developmentKey = (
    await createApiKey(opened.collections, 'development', ['read', 'write', 'admin'])
  ).key;
  await loadDemoDataset(opened.collections, 'development', new Date());
  // A key made with the CLI, unnamed too, and a workspace with no dataset.
  await createApiKey(opened.collections, 'development', ['read']);
  emptyKey = (await createApiKey(opened.collections, 'empty', ['read'])).key;
  database = opened;
  // As `npm start` on the embedded store: the page on a loopback host gets the key.
  const gateway = createGateway({ database: opened, developmentKey });
  ({ server, origin } = await listenOnLoopback(gateway.fetch));
});

afterAll(async () => {
  await browser.close();
  await closeServer(server);
});

const go = (page: Page, hash: string) =>
  page.evaluate((h) => {
    window.location.hash = h;
  }, hash);

/** An element's text, '' when it has none. */
const textOf = async (locator: Locator) => (await locator.textContent()) ?? '';

const mainText = (page: Page) => textOf(page.locator('main'));

describe('the explorer, as a newcomer first opens it, at 390 px', () => {
  it('shows the one dataset with its views, not a list of one link', async () => {
    await browser.withPage(async (page) => {
      await page.goto(`${origin}/explorer`, { waitUntil: 'load' });
      const only = page.getByTestId('only-dataset');
      await only.waitFor();
      expect(await only.textContent()).toContain('The one dataset of workspace development');
      for (const view of ['Timeline', 'What changed', 'Search', 'Memories']) {
        expect(await only.getByRole('link', { name: view, exact: true }).count(), view).toBe(1);
      }
      await only.getByRole('link', { name: 'What changed', exact: true }).click();
      await expect.poll(() => page.evaluate(() => window.location.hash)).toBe('#/user_42/changes');
      // The dataset's own link opens its timeline.
      await go(page, '#/');
      await page.getByRole('link', { name: 'user_42' }).click();
      await page.getByTestId('timeline').waitFor();
      await expect.poll(() => page.locator('.bar').count()).toBeGreaterThan(0);
      if (process.env.EXPLORER_390_SCREENSHOT) {
        await page.screenshot({ path: process.env.EXPLORER_390_SCREENSHOT });
      }
      // Nothing sticks out sideways at a phone's width.
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(
        PHONE.width,
      );
    }, PHONE);
  }, 180_000);

  it('an entity whose facts were all superseded shows their history and what happened', async () => {
    // The user rode a Brompton, then a tandem instead: nothing about the Brompton is
    // believed now (its fact superseded, its corrected version no longer valid).
    const tenant = testTenant('development', 'user_42');
    const rides = (object: string, validAt: string) =>
      episodeInput(
        [
          factInput('user', 'rides', object, {
            objectIsEntity: true,
            validAt: new Date(validAt),
            replaceExisting: true,
          }),
        ],
        { entities: [{ name: object, type: 'THING' }], occurredAt: new Date(validAt) },
      );
    await recordEpisode(
      database.collections,
      tenant,
      rides('brompton', '2026-09-01T00:00:00Z'),
      new Date('2026-09-01T10:00:00Z'),
    );
    await recordEpisode(
      database.collections,
      tenant,
      rides('tandem', '2026-10-01T00:00:00Z'),
      new Date('2026-10-01T10:00:00Z'),
    );
    await browser.withPage(async (page) => {
      await page.goto(`${origin}/explorer#/user_42/entity/brompton`, { waitUntil: 'load' });
      await page.getByTestId('entity-page').waitFor();
      const told = page.getByTestId('none-believed');
      await told.waitFor();
      const text = (await told.textContent()) ?? '';
      expect(text).toContain('No fact that mentions it is believed true now');
      expect(text).toContain('1 superseded');
      expect(text).toContain('1 no longer valid');
      expect(await mainText(page)).not.toContain('0 facts');
      // Its history: the superseded fact and its corrected version, on the timeline.
      const row = page.locator('[data-statement="user / rides"]');
      await expect.poll(() => row.locator('.bar').count()).toBe(2);
      expect(await row.locator('.bar[data-look="superseded"]').count()).toBe(1);
      expect(await row.locator('.bar[data-look="expired"]').count()).toBe(1);
      // And a way back to when it was believed: as known just before it was superseded.
      await told.getByRole('button', { name: /See them as known at 2026-10-01T09:59:59Z/ }).click();
      await expect
        .poll(() => page.getByTestId('known-at').inputValue())
        .toBe('2026-10-01T09:59:59Z');
      await expect
        .poll(() => page.locator('.summary').first().textContent())
        .toContain('1 fact believed true at the chosen instants');
      await expect.poll(() => row.locator('.bar[data-look="live"]').count()).toBe(1);
      expect(await page.getByTestId('none-believed').count()).toBe(0);
    }, PHONE);
  }, 180_000);

  it('the Keys page names the development key, and the expiry field says empty is never', async () => {
    await browser.withPage(async (page) => {
      await page.goto(`${origin}/explorer#~/keys`, { waitUntil: 'load' });
      await page.getByTestId('keys-page').waitFor();
      const rows = page
        .getByRole('table', { name: 'API keys of this workspace' })
        .locator('tbody tr');
      await expect.poll(() => rows.count()).toBe(2);
      const development = rows.filter({ has: page.getByTestId('development-key') });
      expect(await development.count()).toBe(1);
      expect(await development.textContent()).toContain('development key (printed by npm start)');
      expect(await development.textContent()).not.toContain('CLI');
      // The other unnamed key: the page knows the development key, so this one is the CLI's.
      const other = rows.filter({ hasNot: page.getByTestId('development-key') });
      expect(await other.textContent()).toContain('(no name: made with the CLI)');

      // The table scrolls sideways within the page; the page itself does not.
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(
        PHONE.width,
      );
      const expiry = page.getByTestId('key-expires-at');
      expect(await expiry.getAttribute('placeholder')).toBe('never');
      expect(await page.locator('.key-create').textContent()).toContain('empty: never');
      expect(await page.locator('.key-create').textContent()).not.toMatch(/\bnow\b/i);
    }, PHONE);
  }, 180_000);

  it("the dataset picker names the page's dataset, else the last one opened, else the only one", async () => {
    const picker = (page: Page) => page.getByRole('combobox', { name: 'Dataset' });
    await browser.withPage(async (page) => {
      // One dataset: the start page is about it, and so is the picker, on the Keys page too.
      await page.goto(`${origin}/explorer`, { waitUntil: 'load' });
      await page.getByTestId('only-dataset').waitFor();
      await expect.poll(() => picker(page).inputValue()).toBe('user_42');
      await go(page, '~/keys');
      await page.getByTestId('keys-page').waitFor();
      expect(await picker(page).inputValue()).toBe('user_42');
      // Its views stay one click away from the workspace's pages.
      await page
        .getByRole('navigation', { name: 'Views' })
        .getByRole('link', { name: 'Timeline' })
        .click();
      await page.getByTestId('timeline').waitFor();
      expect(await picker(page).inputValue()).toBe('user_42');
    }, PHONE);

    // Several datasets: nothing to name until one is opened, then that one.
    const severalKey = (await createApiKey(database.collections, 'several', ['read'])).key;
    for (const dataset of ['alpha', 'beta']) {
      await recordEpisode(
        database.collections,
        testTenant('several', dataset),
        episodeInput([factInput('user', 'likes', dataset)]),
        new Date('2026-11-01T10:00:00Z'),
      );
    }
    await browser.withPage(async (page) => {
      await page.goto(`${origin}/explorer`, { waitUntil: 'load' });
      await page.getByRole('button', { name: 'Change key' }).click();
      await page.getByLabel('API key').fill(severalKey);
      await page.getByRole('button', { name: 'Open' }).click();
      await page.getByRole('link', { name: 'beta', exact: true }).waitFor();
      expect(await picker(page).inputValue()).toBe('');
      expect(await picker(page).locator('option:checked').textContent()).toBe('Choose…');
      await page.getByRole('link', { name: 'beta', exact: true }).click();
      await page.getByTestId('timeline').waitFor();
      expect(await picker(page).inputValue()).toBe('beta');
      await go(page, '#/');
      await page.getByRole('link', { name: 'alpha', exact: true }).waitFor();
      expect(await picker(page).inputValue()).toBe('beta');
      // A dataset opened by its address is named, listed or not.
      await go(page, '#/gamma/memories');
      await expect.poll(() => picker(page).inputValue()).toBe('gamma');
    }, PHONE);
  }, 180_000);

  it('shows commands as code, never as raw markdown backticks', async () => {
    await browser.withPage(async (page) => {
      await page.goto(`${origin}/explorer`, { waitUntil: 'load' });
      await page.getByTestId('only-dataset').waitFor();
      // The key form.
      await page.getByRole('button', { name: 'Change key' }).click();
      const form = page.locator('.key-form');
      await form.waitFor();
      expect(await textOf(form)).not.toContain('`');
      expect(await form.locator('code').allTextContents()).toContain('npm run keys');
      // A refused key.
      await page.getByLabel('API key').fill('mk_not_a_key');
      await page.getByRole('button', { name: 'Open' }).click();
      const refused = page.getByRole('alert');
      await refused.waitFor();
      expect(await textOf(refused)).toContain('prints the development key');
      expect(await textOf(refused)).not.toContain('`');
      expect(await refused.locator('code').allTextContents()).toContain('npm start');
      // A workspace with no dataset yet.
      await page.getByLabel('API key').fill(emptyKey);
      await page.getByRole('button', { name: 'Open' }).click();
      const empty = page.locator('main .status.empty');
      await empty.waitFor();
      expect(await textOf(empty)).toContain('This workspace has no datasets yet');
      expect(await textOf(empty)).not.toContain('`');
      expect(await empty.locator('code').allTextContents()).toContain('npm run import');
    }, PHONE);
  }, 180_000);
});
