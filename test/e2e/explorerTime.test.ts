import type { ServerType } from '@hono/node-server';
import axe from 'axe-core';
import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDemoDataset } from '../../src/demo/seed.js';
import { createGateway } from '../../src/http/app.js';
import type { Database } from '../../src/store/database.js';
import { createApiKey } from '../../src/store/workspaces.js';
import { importJsonl } from '../../src/transfer/importJsonl.js';
import { openTestDatabase } from '../helpers/database.js';
import { DEMO } from '../helpers/demo.js';
import { closeServer, listenOnLoopback } from '../helpers/listener.js';
import { offlineBrowser, setInstant, typeInstant } from '../helpers/offlineBrowser.js';

/**
 * The explorer's time axis and what it answers about the past, in the suite's Chromium,
 * offline, on the demo dataset: the view fitted to 2026 with the 2035 fact marked at the
 * edge; zoom and pan by buttons, keys and the wheel, bars labelled throughout; readable bars
 * at phone width; instants shown and typed in UTC ISO 8601 under a 12-hour, non-English
 * locale; "Superseded by" opening a successor no loaded page holds; recall replayed at a
 * past "as known at", with why each result ranked; and an accessibility check (axe-core)
 * with no serious violation. Deliberately no skip: without Chromium this file fails.
 */

let server: ServerType | null = null;
let origin = '';
let database: Database;
const browser = offlineBrowser(() => origin);

/** A dataset whose successor fact lies on the timeline's second page, its predecessor on the first. */
const PAGED = {
  predecessor: '00000000-0000-4000-8000-00000000a001',
  successor: '00000000-0000-4000-8000-00000000a002',
};

beforeAll(async () => {
  database = await openTestDatabase();
  await loadDemoDataset(database.collections, 'acme', new Date());
  const key = (await createApiKey(database.collections, 'acme', ['read'])).key;
  const lines = Array.from({ length: 120 }, (_, i) =>
    JSON.stringify({
      type: 'fact',
      dataset: 'paged',
      factId: `00000000-0000-4000-8000-${(i + 1).toString(16).padStart(12, '0')}`,
      subject: `thing ${i}`,
      predicate: 'weighs',
      object: `${i} kg`,
      confidence: 0.9,
      validAt: new Date(Date.UTC(2025, 0, 1 + i)).toISOString(),
    }),
  );
  // The newest fact (first page), superseded by a correction valid from long before
  // (so the timeline, newest validAt first, draws it on a later page).
  lines.push(
    JSON.stringify({
      type: 'fact',
      dataset: 'paged',
      factId: PAGED.predecessor,
      subject: 'user',
      predicate: 'commutes by',
      object: 'bicycle',
      confidence: 0.9,
      validAt: '2026-06-01T00:00:00Z',
      recordedAt: '2026-06-01T00:00:00Z',
      invalidAt: '2026-07-01T00:00:00Z',
      invalidReason: 'superseded',
      supersededBy: PAGED.successor,
    }),
    JSON.stringify({
      type: 'fact',
      dataset: 'paged',
      factId: PAGED.successor,
      subject: 'user',
      predicate: 'commutes by',
      object: 'tram',
      confidence: 0.9,
      validAt: '2024-01-01T00:00:00Z',
      recordedAt: '2026-07-01T00:00:00Z',
    }),
  );
  const outcome = await importJsonl(database.collections, {
    now: new Date(),
    workspace: 'acme',
    content: lines.join('\n'),
  });
  expect(outcome.ok).toBe(true);
  const gateway = createGateway({ database, developmentKey: key });
  ({ server, origin } = await listenOnLoopback(gateway.fetch));
});

afterAll(async () => {
  await browser.close();
  await closeServer(server);
});

const bar = (page: Page, factId: string) => page.locator(`.bar[data-fact-id="${factId}"]`);

/** The span the axis shows, from its data attributes. */
async function viewSpan(page: Page): Promise<{ start: number; end: number; days: number }> {
  const axis = page.getByTestId('time-axis');
  const start = Date.parse((await axis.getAttribute('data-view-start'))!);
  const end = Date.parse((await axis.getAttribute('data-view-end'))!);
  return { start, end, days: (end - start) / 86_400_000 };
}

/**
 * Every bar's label, as drawn: its text, whether it is cut short, and its box. A label is
 * readable when it shows its whole text, within the window, in a font of at least 11 px.
 */
async function barLabels(page: Page) {
  return page.locator('.bar').evaluateAll((bars) =>
    bars.map((b) => {
      const id = b.getAttribute('data-fact-id');
      const label = document.querySelector<HTMLElement>(`.bar-label[data-label-for="${id}"]`);
      if (!label) return { id, text: '', cut: true, left: 0, right: 0, font: 0 };
      const box = label.getBoundingClientRect();
      return {
        id,
        text: label.textContent ?? '',
        cut: label.scrollWidth > label.clientWidth + 1,
        left: box.left,
        right: box.right,
        font: Number.parseFloat(getComputedStyle(label).fontSize),
      };
    }),
  );
}

async function expectReadableLabels(page: Page, count: number) {
  const labels = await barLabels(page);
  expect(labels).toHaveLength(count);
  const width = await page.evaluate(() => window.innerWidth);
  for (const label of labels) {
    expect(label.text.length, JSON.stringify(label)).toBeGreaterThan(0);
    expect(label.cut, JSON.stringify(label)).toBe(false);
    expect(label.left, JSON.stringify(label)).toBeGreaterThanOrEqual(0);
    expect(label.right, JSON.stringify(label)).toBeLessThanOrEqual(width);
    expect(label.font).toBeGreaterThanOrEqual(11);
  }
}

async function openTimeline(page: Page, dataset = 'user_42') {
  await page.goto(`${origin}/explorer#/${dataset}`, { waitUntil: 'load' });
  await page.getByTestId('timeline').waitFor();
}

/** Boxes that overlap (a marker's label over a tick's or another marker's). */
async function overlaps(boxes: Locator) {
  const rects = await boxes.evaluateAll((els) =>
    els.map((e) => {
      const r = e.getBoundingClientRect();
      return { text: e.textContent, left: r.left, right: r.right, top: r.top, bottom: r.bottom };
    }),
  );
  const found: string[] = [];
  rects.forEach((a, i) => {
    for (const b of rects.slice(i + 1)) {
      const apart =
        a.right <= b.left || b.right <= a.left || a.bottom <= b.top || b.bottom <= a.top;
      if (!apart) found.push(`${a.text} / ${b.text}`);
    }
  });
  return found;
}

describe('the time axis', () => {
  it('opens fitted to 2026 with the 2035 fact marked at the edge; zoom and move keep every bar labelled', async () => {
    await browser.withPage(async (page) => {
      await openTimeline(page);
      await expect.poll(() => page.locator('.bar').count()).toBe(8);
      const fitted = await viewSpan(page);
      expect(fitted.start).toBeGreaterThanOrEqual(Date.parse('2026-01-01T00:00:00Z'));
      expect(fitted.end).toBeLessThanOrEqual(Date.parse('2027-01-01T00:00:00Z'));
      // The test drive (15 January 2035) is a mark at the end, labelled with its date.
      expect(await bar(page, DEMO.facts.testDrive).getAttribute('data-beyond')).toBe('end');
      expect(
        await page.locator(`.bar-label[data-label-for="${DEMO.facts.testDrive}"]`).textContent(),
      ).toContain('15 Jan 2035');
      await expectReadableLabels(page, 8);

      // Buttons: zoom in halves the span, zoom out twice doubles it, Fit goes back.
      await page.getByRole('button', { name: 'Zoom in' }).click();
      await expect.poll(async () => (await viewSpan(page)).days).toBeCloseTo(fitted.days / 2, 0);
      await expectReadableLabels(page, 8);
      await page.getByRole('button', { name: 'Zoom out' }).click();
      await page.getByRole('button', { name: 'Zoom out' }).click();
      await expect.poll(async () => (await viewSpan(page)).days).toBeCloseTo(fitted.days * 2, 0);
      await expectReadableLabels(page, 8);
      const zoomedOut = await viewSpan(page);
      await page.getByRole('button', { name: 'Later' }).click();
      await expect
        .poll(async () => (await viewSpan(page)).start)
        .toBeCloseTo(zoomedOut.start + zoomedOut.days * 0.25 * 86_400_000, -5);
      await page.getByRole('button', { name: 'Fit' }).click();
      await expect.poll(async () => (await viewSpan(page)).days).toBeCloseTo(fitted.days, 0);

      // Keys on the axis: + zooms in, → moves later, 0 fits.
      const axis = page.getByTestId('time-axis');
      await axis.focus();
      await page.keyboard.press('+');
      await expect.poll(async () => (await viewSpan(page)).days).toBeCloseTo(fitted.days / 2, 0);
      const zoomed = await viewSpan(page);
      await page.keyboard.press('ArrowRight');
      await expect.poll(async () => (await viewSpan(page)).start).toBeGreaterThan(zoomed.start);
      await page.keyboard.press('0');
      await expect.poll(async () => (await viewSpan(page)).days).toBeCloseTo(fitted.days, 0);
      expect(await axis.getAttribute('aria-valuetext')).toMatch(/^from .+ to .+$/);

      // The wheel over the axis zooms; over the rows it scrolls them and leaves the view.
      const box = (await axis.boundingBox())!;
      await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
      await page.mouse.wheel(0, -400);
      await expect.poll(async () => (await viewSpan(page)).days).toBeLessThan(fitted.days * 0.9);
      const wheeled = await viewSpan(page);
      // A drag on the axis moves the view without zooming it.
      await page.mouse.down();
      await page.mouse.move(box.x + box.width / 2 - 150, box.y + box.height / 2, { steps: 5 });
      await page.mouse.up();
      await expect.poll(async () => (await viewSpan(page)).start).toBeGreaterThan(wheeled.start);
      expect((await viewSpan(page)).days).toBeCloseTo(wheeled.days, 3);
      const rows = (await page.getByTestId('timeline').boundingBox())!;
      await page.mouse.move(rows.x + rows.width / 2, rows.y + 40);
      await page.mouse.wheel(0, 200);
      await page.waitForTimeout(100);
      expect((await viewSpan(page)).days).toBeCloseTo(wheeled.days, 3);
      await expectReadableLabels(page, 8);

      // Now and both chosen instants are marked, none over a tick or another marker.
      await setInstant(page, origin, 'true-at', '2026-08-20T00:00:00Z');
      await setInstant(page, origin, 'known-at', '2026-08-16T09:14:07Z');
      await page.getByRole('button', { name: 'Fit' }).click();
      const markers = page.locator('.axis-marker');
      await expect.poll(() => markers.count()).toBe(3);
      expect(
        (await markers.evaluateAll((els) => els.map((e) => e.getAttribute('data-marker')))).sort(),
      ).toEqual(['known-at', 'now', 'true-at']);
      expect(await overlaps(page.locator('.axis-marker, .tick'))).toEqual([]);
      const axisBox = (await axis.boundingBox())!;
      for (const marker of await markers.all()) {
        const m = (await marker.boundingBox())!;
        expect(m.x).toBeGreaterThanOrEqual(axisBox.x - 1);
        expect(m.x + m.width).toBeLessThanOrEqual(axisBox.x + axisBox.width + 1);
      }
    });
  }, 180_000);

  it('at 390 px every demo bar shows readable text', async () => {
    await browser.withPage(
      async (page) => {
        await openTimeline(page);
        await expect.poll(() => page.locator('.bar').count()).toBe(8);
        await expectReadableLabels(page, 8);
        expect(
          await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth),
        ).toBe(true);
      },
      { width: 390, height: 844 },
    );
  }, 180_000);
});

describe('instants under a 12-hour, non-English locale', () => {
  it('are shown and typed as ISO 8601 in UTC; other text is refused and changes nothing', async () => {
    await browser.withPage(
      async (page) => {
        await openTimeline(page);
        // The browser's own formats are Korean and 12-hour (오후 = p.m.), in Los Angeles time.
        expect(
          await page.evaluate(() => new Date(Date.UTC(2026, 7, 16, 21)).toLocaleTimeString()),
        ).toContain('오후');
        await setInstant(page, origin, 'known-at', '2026-08-16T09:14:07');
        expect(await page.getByTestId('known-at').inputValue()).toBe('2026-08-16T09:14:07Z');
        await expect
          .poll(() => bar(page, DEMO.facts.hondaInterest).getAttribute('data-look'))
          .toBe('superseded');
        // Another zone is converted: 11:14:05 at +02:00 is 09:14:05 UTC, before the supersession.
        await setInstant(page, origin, 'known-at', '2026-08-16 11:14:05+02:00');
        expect(await page.getByTestId('known-at').inputValue()).toBe('2026-08-16T09:14:05Z');
        await expect
          .poll(() => bar(page, DEMO.facts.hondaInterest).getAttribute('data-look'))
          .toBe('live');
        // The details say UTC, in the page's own format.
        await bar(page, DEMO.facts.hondaInterest).hover();
        await expect
          .poll(() => page.getByTestId('details').textContent())
          .toContain('10 May 2026, 18:30:04 UTC');

        // A local, 12-hour time is refused, saying so, and nothing is asked.
        const before = browser.operations.length;
        await typeInstant(page, 'known-at', '16/08/2026 9:14 오후');
        expect(await page.getByTestId('known-at').getAttribute('aria-invalid')).toBe('true');
        expect(await page.getByRole('alert').textContent()).toContain('ISO 8601 in UTC');
        await page.waitForTimeout(200);
        expect(browser.operations.length).toBe(before);
        expect(await bar(page, DEMO.facts.hondaInterest).getAttribute('data-look')).toBe('live');
      },
      { width: 1280, height: 900 },
      { locale: 'ko-KR', timezoneId: 'America/Los_Angeles' },
    );
  }, 180_000);
});

describe('links lead somewhere', () => {
  it('"Superseded by" opens a successor that no loaded page holds, fetched by id', async () => {
    await browser.withPage(async (page) => {
      await openTimeline(page, 'paged');
      await expect.poll(() => bar(page, PAGED.predecessor).count()).toBe(1);
      // The first page (100 facts, newest validAt first) does not hold the correction.
      expect(await bar(page, PAGED.successor).count()).toBe(0);
      await bar(page, PAGED.predecessor).hover();
      await page.getByTestId('follow-successor').click();
      await expect
        .poll(() => page.evaluate(() => document.activeElement?.getAttribute('data-fact-id')))
        .toBe(PAGED.successor);
      expect(browser.operations).toContain('ExplorerFactById');
      await expect.poll(() => page.getByTestId('details').textContent()).toContain('tram');
      // An episode's and an entity's links from a fact open their pages, read by id and name.
      await page.goto(`${origin}/explorer#/user_42`, { waitUntil: 'load' });
      await bar(page, DEMO.facts.hondaInterest).hover();
      await page.getByTestId('details').getByRole('link', { name: 'honda civic' }).click();
      await expect
        .poll(() => page.getByTestId('entity-page').locator('h2').textContent())
        .toContain('honda civic');
    });
  }, 180_000);
});

describe('recall replayed in the search page', () => {
  it('before the Corolla was learned, ranks the Honda interest first, and shows why on demand', async () => {
    await browser.withPage(async (page) => {
      await page.goto(`${origin}/explorer#/user_42/search`, { waitUntil: 'load' });
      await typeInstant(page, 'known-at', '2026-08-16T09:14:05Z');
      await page.getByLabel('Words').fill('Is the user interested in a Toyota?');
      await page.getByLabel('Ranked recall (facts and memories)').check();
      await page.getByRole('button', { name: 'Search' }).click();
      const facts = page.getByRole('list', { name: 'Recalled facts' });
      await expect
        .poll(() => facts.locator('li').first().getAttribute('data-fact-id'))
        .toBe(DEMO.facts.hondaInterest);
      expect(await facts.textContent()).not.toContain('toyota corolla hybrid');
      expect(await page.getByTestId('recall-instants').textContent()).toContain(
        '16 Aug 2026, 09:14:05 UTC',
      );
      const why = facts.locator('li').first().locator('details.why');
      expect(await why.getAttribute('open')).toBeNull();
      await why.locator('summary').click();
      const terms = await why
        .locator('tr[data-term]')
        .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-term')));
      expect(terms).toEqual(['interest', 'user']);
      expect(await why.textContent()).toMatch(/confidence 0\.980 × recency/);
      // Browsing the past stamped nothing.
      expect(
        await database.collections.memories.countDocuments({ lastUsedAt: { $ne: null } }),
      ).toBe(0);
    });
  }, 180_000);
});

describe('accessibility', () => {
  /** axe-core's serious and critical violations on the page as it is now. */
  async function seriousViolations(page: Page) {
    // axe-core's own script, as the package ships it for browsers.
    await page.evaluate(axe.source);
    const violations = await page.evaluate(async () => {
      const axe = (
        window as unknown as {
          axe: {
            run: (
              c: Document,
              o: object,
            ) => Promise<{
              violations: { id: string; impact: string; nodes: { target: string[] }[] }[];
            }>;
          };
        }
      ).axe;
      const result = await axe.run(document, { resultTypes: ['violations'] });
      return result.violations.map((v) => ({
        id: v.id,
        impact: v.impact,
        nodes: v.nodes.map((n) => n.target.join(' ')).slice(0, 5),
      }));
    });
    return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  }

  it('the timeline, its zoom controls and the recall explanation have no serious violation', async () => {
    // axe is injected into the page: the test's context lets it past the page's CSP.
    await browser.withPage(
      async (page) => {
        await openTimeline(page);
        await expect.poll(() => page.locator('.bar').count()).toBe(8);
        await bar(page, DEMO.facts.hondaInterest).focus();
        // Each bar is announced with its statement, its state and its dates.
        expect(await bar(page, DEMO.facts.hondaInterest).getAttribute('aria-label')).toBe(
          'user is interested in honda civic: Superseded, valid 10 May 2026 to open, superseded by toyota corolla hybrid',
        );
        expect(await seriousViolations(page)).toEqual([]);

        await page.goto(`${origin}/explorer#/user_42/search`, { waitUntil: 'load' });
        await page.getByLabel('Words').fill('toyota');
        await page.getByLabel('Ranked recall (facts and memories)').check();
        await page.getByRole('button', { name: 'Search' }).click();
        const first = page.getByRole('list', { name: 'Recalled facts' }).locator('li').first();
        await first.locator('details.why summary').click();
        expect(await seriousViolations(page)).toEqual([]);
      },
      { width: 1280, height: 900 },
      { bypassCSP: true },
    );
  }, 180_000);
});
