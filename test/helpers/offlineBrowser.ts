import type { Browser, BrowserContext, BrowserContextOptions, Page } from 'playwright-core';
import { expect } from 'vitest';
import { launchChromium, PAGE_TIMEOUT } from './browser.js';

/**
 * The suite's Chromium as the explorer's browser tests use it: it can resolve no host name,
 * and every request for anything but the test server is aborted and recorded, so a passing
 * test proves the page works offline, from the gateway's own assets. Page errors and the
 * GraphQL operations the page sent are recorded too.
 */
export function offlineBrowser(origin: () => string) {
  let browser: Browser | null = null;
  const foreignRequests: string[] = [];
  const pageErrors: string[] = [];
  /** Every GraphQL request the pages made: its operation name. */
  const operations: string[] = [];

  async function openContext(
    viewport = { width: 1280, height: 900 },
    options: BrowserContextOptions = {},
  ): Promise<BrowserContext> {
    browser ??= await launchChromium(['--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1']);
    const context = await browser.newContext({ viewport, ...options });
    await context.route('**/*', (route) => {
      const url = new URL(route.request().url());
      if (url.origin === origin() || url.protocol === 'data:' || url.protocol === 'blob:') {
        if (url.pathname === '/graphql') {
          const body = route.request().postDataJSON() as { operationName?: string } | null;
          operations.push(body?.operationName ?? '(unnamed)');
        }
        return route.continue();
      }
      foreignRequests.push(url.href);
      return route.abort('internetdisconnected');
    });
    return context;
  }

  async function newPage(context: BrowserContext): Promise<Page> {
    const page = await context.newPage();
    page.setDefaultTimeout(PAGE_TIMEOUT);
    page.on('pageerror', (error) => pageErrors.push(error.message));
    return page;
  }

  /** Runs `body` on a page of a new context, then checks nothing left the machine or failed. */
  async function withPage(
    body: (page: Page) => Promise<void>,
    viewport?: { width: number; height: number },
    options?: BrowserContextOptions,
  ): Promise<void> {
    const context = await openContext(viewport, options);
    try {
      await body(await newPage(context));
    } finally {
      await context.close();
    }
    expect(foreignRequests).toEqual([]);
    expect(pageErrors).toEqual([]);
  }

  return {
    openContext,
    newPage,
    withPage,
    foreignRequests,
    pageErrors,
    operations,
    close: async () => {
      await browser?.close();
    },
  };
}

/** Types an instant (ISO 8601, UTC) into an instant field and presses Enter (empty: now). */
export async function typeInstant(page: Page, testId: string, value: string): Promise<void> {
  const field = page.getByTestId(testId);
  await field.fill(value);
  await field.press('Enter');
}

/** Types an instant and waits for the gateway's answer to the page's next request. */
export async function setInstant(
  page: Page,
  origin: string,
  testId: string,
  value: string,
): Promise<void> {
  const answered = page.waitForResponse(
    (r) =>
      r.url() === `${origin}/graphql` &&
      r.request().method() === 'POST' &&
      !(r.request().postData() ?? '').includes('ExplorerLiveChanges'),
  );
  await typeInstant(page, testId, value);
  expect((await answered).status()).toBe(200);
}
