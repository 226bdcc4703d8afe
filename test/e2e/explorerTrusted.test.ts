import type { ServerType } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TrustedDocumentMode } from '../../src/config.js';
import { loadDemoDataset } from '../../src/demo/seed.js';
import { createGateway } from '../../src/http/app.js';
import { createApiKey } from '../../src/store/workspaces.js';
import { openTestDatabase } from '../helpers/database.js';
import { closeServer, listenOnLoopback } from '../helpers/listener.js';
import { offlineBrowser } from '../helpers/offlineBrowser.js';

/**
 * The explorer under each TRUSTED_DOCUMENTS mode, with a key that may not send text in
 * `only` (no admin scope): with `only` it works sending its registered operations by hash,
 * never their text; with `off` the gateway knows no hash, and the page falls back to the
 * text after the first "not found". Deliberately no skip: without Chromium this file fails.
 */

const servers: Partial<Record<TrustedDocumentMode, { server: ServerType; origin: string }>> = {};
let origin = '';
let key = '';
const browser = offlineBrowser(() => origin);

beforeAll(async () => {
  const database = await openTestDatabase();
  await loadDemoDataset(database.collections, 'acme', new Date());
  key = (await createApiKey(database.collections, 'acme', ['read'])).key;
  for (const mode of ['only', 'off'] as const) {
    const gateway = createGateway({ database, trustedDocuments: mode, developmentKey: key });
    servers[mode] = await listenOnLoopback(gateway.fetch);
  }
});

afterAll(async () => {
  await browser.close();
  for (const s of Object.values(servers)) await closeServer(s.server);
});

describe('the explorer and trusted documents', () => {
  it.each(['only', 'off'] as const)(
    'works with TRUSTED_DOCUMENTS=%s',
    async (mode) => {
      origin = servers[mode]!.origin;
      const bodies: { operationName?: string; query?: string; extensions?: unknown }[] = [];
      await browser.withPage(async (page) => {
        page.on('request', (request) => {
          if (request.url().endsWith('/graphql') && request.method() === 'POST') {
            bodies.push(request.postDataJSON());
          }
        });
        await page.goto(`${origin}/explorer#/user_42`, { waitUntil: 'load' });
        await page.getByTestId('timeline').waitFor();
        await expect.poll(() => page.locator('.bar').count()).toBe(8);
        await page.getByRole('link', { name: 'Search' }).click();
        await page.getByLabel('Words').fill('toyota');
        await page.getByLabel('Ranked recall (facts and memories)').check();
        await page.getByRole('button', { name: 'Search' }).click();
        await expect
          .poll(() => page.getByRole('list', { name: 'Recalled facts' }).locator('li').count())
          .toBeGreaterThan(0);
      });
      const names = new Set(bodies.map((b) => b.operationName));
      expect(names).toEqual(
        new Set(['ExplorerViewer', 'ExplorerTimeline', 'ExplorerLiveChanges', 'ExplorerRecall']),
      );
      if (mode === 'only') {
        // Every request named its operation by hash; none carried text.
        for (const body of bodies) {
          expect(body.query).toBeUndefined();
          expect(body.extensions).toMatchObject({ persistedQuery: { version: 1 } });
        }
      } else {
        // One request by hash, answered "not found"; every later one in text.
        expect(bodies[0]!.query).toBeUndefined();
        expect(bodies.slice(2).every((b) => typeof b.query === 'string')).toBe(true);
      }
    },
    180_000,
  );
});
