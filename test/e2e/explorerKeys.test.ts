import type { ServerType } from '@hono/node-server';
import axe from 'axe-core';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDemoDataset } from '../../src/demo/seed.js';
import { createGateway } from '../../src/http/app.js';
import type { Database } from '../../src/store/database.js';
import { createApiKey } from '../../src/store/workspaces.js';
import { openTestDatabase } from '../helpers/database.js';
import { closeServer, listenOnLoopback } from '../helpers/listener.js';
import { offlineBrowser } from '../helpers/offlineBrowser.js';

/**
 * The explorer's Keys page, in the suite's Chromium, offline: an admin makes a key (its
 * secret shown once), the key works on the REST routes, the admin revokes it (asked twice)
 * and it is refused at once; a key without admin is not offered the page. axe-core finds
 * no serious violation on it. Deliberately no skip: without Chromium this file fails.
 */

let server: ServerType | null = null;
let origin = '';
let database: Database;
let adminKey = '';
let readKey = '';
const browser = offlineBrowser(() => origin);

beforeAll(async () => {
  database = await openTestDatabase();
  await loadDemoDataset(database.collections, 'acme', new Date());
  adminKey = (await createApiKey(database.collections, 'acme', ['read', 'write', 'admin'])).key;
  readKey = (await createApiKey(database.collections, 'acme', ['read'])).key;
  const gateway = createGateway({ database, readCacheTtlMs: 60_000, keyUseFlushMs: 0 });
  ({ server, origin } = await listenOnLoopback(gateway.fetch));
});

afterAll(async () => {
  await browser.close();
  await closeServer(server);
});

async function openWithKey(page: Page, key: string, hash: string) {
  await page.goto(`${origin}/explorer`, { waitUntil: 'load' });
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Open' }).click();
  await page.getByRole('link', { name: 'user_42' }).waitFor();
  await page.evaluate((h) => {
    window.location.hash = h;
  }, hash);
}

const restStatus = async (key: string) =>
  (
    await fetch(`${origin}/v1/memory/semantic/datasets/user_42/facts`, {
      headers: { authorization: `Bearer ${key}` },
    })
  ).status;

describe('the Keys page', () => {
  it('makes a key shown once, which works; revokes it after asking again, and it is refused', async () => {
    await browser.withPage(
      async (page) => {
        await openWithKey(page, adminKey, '#~/keys');
        await page.getByTestId('keys-page').waitFor();
        const rows = page
          .getByRole('table', { name: 'API keys of this workspace' })
          .locator('tbody tr');
        await expect.poll(() => rows.count()).toBe(2);

        await page.getByLabel('Name').fill('ingest pipeline');
        await page.getByLabel('write').check();
        await page.getByRole('button', { name: 'Make the key' }).click();
        const secret = (await page.getByTestId('secret').textContent()) ?? '';
        expect(secret).toMatch(/^mk_[0-9a-f]{24}_[A-Za-z0-9_-]{43}$/);
        expect(await restStatus(secret)).toBe(200);
        const row = rows.filter({ hasText: 'ingest pipeline' });
        await expect.poll(() => row.getAttribute('data-status')).toBe('ACTIVE');
        expect(await row.textContent()).toContain('read, write');
        // The secret is shown once: not in the table, and gone once the page is left.
        expect(await page.getByRole('table').textContent()).not.toContain(secret);

        // No serious accessibility violation on the page.
        await page.evaluate(axe.source);
        const violations = await page.evaluate(async () => {
          const run = (
            window as unknown as {
              axe: {
                run: (d: Document) => Promise<{ violations: { id: string; impact: string }[] }>;
              };
            }
          ).axe.run;
          return (await run(document)).violations.filter(
            (v) => v.impact === 'serious' || v.impact === 'critical',
          );
        });
        expect(violations).toEqual([]);

        await row.getByRole('button', { name: 'Revoke ingest pipeline' }).click();
        await row.getByRole('button', { name: 'Confirm: revoke ingest pipeline' }).click();
        await expect.poll(() => row.getAttribute('data-status')).toBe('REVOKED');
        expect(await restStatus(secret)).toBe(401);

        await page.reload({ waitUntil: 'load' });
        await page.getByTestId('keys-page').waitFor();
        expect(await page.getByTestId('new-secret').count()).toBe(0);
      },
      { width: 1280, height: 900 },
      // axe is injected into the page: the test's context lets it past the page's CSP.
      { bypassCSP: true },
    );
  }, 180_000);

  it('a key without the admin scope is not offered the page', async () => {
    await browser.withPage(async (page) => {
      await openWithKey(page, readKey, '#/user_42');
      await page.getByTestId('timeline').waitFor();
      expect(await page.getByRole('link', { name: 'Keys' }).count()).toBe(0);
      await page.evaluate(() => {
        window.location.hash = '#~/keys';
      });
      await expect
        .poll(() => page.locator('main').textContent())
        .toContain('Managing keys needs a key with the admin scope');
    });
  }, 180_000);
});
