import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { buildExplorer } from '../scripts/buildExplorer.ts';
import { parseCommandLine } from '../src/cli/help.js';
import { DEMO_DATASET, loadDemoDataset } from '../src/demo/seed.js';
import { startFerretDb } from '../src/embedded/ferretdb.js';
import { createGateway } from '../src/http/app.js';
import { openDatabase } from '../src/store/database.js';
import { createApiKey } from '../src/store/workspaces.js';
import { launchChromium } from '../test/helpers/browser.js';
import { closeServer, listenOnLoopback } from '../test/helpers/listener.js';
import { seedDataset } from './generate.js';
import { median, round1 } from './measure.js';

/**
 * How the memory explorer's page holds up on a large dataset, in the suite's Chromium:
 * the demo dataset (7 facts) is the baseline, a generated dataset of --facts facts (10,000
 * by default) the subject, measured in the same run against the same embedded FerretDB.
 * For each: open the timeline, then scroll it to the end of what is loaded --pages times
 * (each time the next page of 100 arrives and is drawn), then scroll back and forth
 * --steps times. Reported: the page's longest main-thread task and its total blocking
 * time (the part of each task over 50 ms: what a user feels as a frozen page), the
 * document's rows, how long the first page and the next ones took to be drawn, and the
 * subject over the baseline.
 *
 *   npm run bench:explorer [-- --facts 10000] [--pages 5] [--steps 40] [--out report.json]
 *
 * docs/PERFORMANCE.md ("The memory explorer") records a run.
 */

const { values } = parseCommandLine(import.meta.url, {
  options: {
    facts: { type: 'string', default: '10000' },
    pages: { type: 'string', default: '5' },
    steps: { type: 'string', default: '40' },
    out: { type: 'string' },
  },
});
const FACTS = Number(values.facts);
const PAGES = Number(values.pages);
const STEPS = Number(values.steps);
if (!(FACTS >= 100) || !(PAGES >= 1) || !(STEPS >= 1)) {
  throw new Error('--facts takes at least 100; --pages and --steps at least 1');
}
const WORKSPACE = 'explorer-bench';
const LARGE = 'large';

interface Measure {
  dataset: string;
  facts: number;
  loaded: number;
  rowsInDocument: number;
  longestTaskMs: number;
  totalBlockingMs: number;
  /** From setting a scroll position to the frame after the one that drew it. */
  slowestScrollStepMs: number;
  medianScrollStepMs: number;
  /** From asking for the page to its first bar drawn (the first page of facts). */
  firstPageMs: number;
  /** From scrolling to the end to the next page drawn, median over the pages. */
  nextPageMs: number | null;
}

async function loadedCount(page: Page): Promise<number> {
  const text = (await page.getByTestId('timeline-summary').textContent()) ?? '';
  const loaded = /\((\d+) loaded\)/.exec(text);
  return loaded ? Number(loaded[1]) : Number(/^(\d+)/.exec(text)?.[1] ?? 0);
}

async function measure(page: Page, origin: string, dataset: string, facts: number) {
  const asked = performance.now();
  await page.goto(`${origin}/explorer#/${encodeURIComponent(dataset)}`, { waitUntil: 'load' });
  await page.locator('.bar').first().waitFor({ timeout: 120_000 });
  const firstPageMs = performance.now() - asked;
  const scroller = page.getByTestId('timeline');
  const pageMs: number[] = [];
  for (let i = 1; i < PAGES; i++) {
    const before = await loadedCount(page);
    if (before >= facts) break;
    const scrolled = performance.now();
    await scroller.evaluate((element) => {
      element.scrollTop = element.scrollHeight;
    });
    await page.waitForFunction(
      (n) =>
        !document
          .querySelector('[data-testid="timeline-summary"]')
          ?.textContent?.includes(`(${n} loaded)`),
      before,
      { timeout: 120_000 },
    );
    pageMs.push(performance.now() - scrolled);
  }
  // Each step: move the scroll position, then wait for the frame after the one that drew it.
  const stepMs: number[] = [];
  for (let i = 0; i < STEPS; i++) {
    stepMs.push(
      await scroller.evaluate(
        async (element, down) => {
          const started = performance.now();
          element.scrollTop = down ? element.scrollTop + 600 : Math.max(0, element.scrollTop - 300);
          await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
          return performance.now() - started;
        },
        i % 4 !== 3,
      ),
    );
  }
  const tasks = await page.evaluate(
    () => (window as unknown as { __longTasks: number[] }).__longTasks,
  );
  // The long-task log must see a task we make, or its silence proves nothing.
  const seen = await page.evaluate(async () => {
    const log = (window as unknown as { __longTasks: number[] }).__longTasks;
    const before = log.length;
    await new Promise((done) => setTimeout(done, 10));
    const until = performance.now() + 120;
    while (performance.now() < until);
    // Entries arrive when the browser is idle again.
    for (let i = 0; i < 20 && !log.slice(before).some((d) => d >= 100); i++) {
      await new Promise((done) => setTimeout(done, 50));
    }
    return log.slice(before).some((d) => d >= 100);
  });
  if (!seen) throw new Error('the long-task observer missed a 120 ms task: no measure');
  return {
    dataset,
    facts,
    loaded: await loadedCount(page),
    rowsInDocument: await page.locator('.statement').count(),
    longestTaskMs: round1(Math.max(0, ...tasks)),
    totalBlockingMs: round1(tasks.reduce((sum, d) => sum + Math.max(0, d - 50), 0)),
    slowestScrollStepMs: round1(Math.max(...stepMs)),
    medianScrollStepMs: round1(median(stepMs)),
    firstPageMs: round1(firstPageMs),
    nextPageMs: pageMs.length > 0 ? round1(median(pageMs)) : null,
  } satisfies Measure;
}

const dir = mkdtempSync(join(tmpdir(), 'explorer-bench-'));
const ferret = await startFerretDb(join(dir, 'db'));
try {
  const database = await openDatabase(ferret.uri, 'explorer_bench');
  await buildExplorer();
  await loadDemoDataset(database.collections, WORKSPACE, new Date());
  process.stdout.write(`seeding ${FACTS} facts…\n`);
  await seedDataset(database.collections, WORKSPACE, {
    dataset: LARGE,
    facts: Math.ceil(FACTS / 0.8),
    entities: Math.max(10, Math.round(FACTS / 7)),
    episodes: Math.max(5, Math.round(FACTS / 12)),
    memories: 20,
  });
  const { key } = await createApiKey(database.collections, WORKSPACE, ['read']);
  const { server, origin } = await listenOnLoopback(createGateway({ database }).fetch);
  const browser = await launchChromium();
  try {
    const results: Measure[] = [];
    for (const [dataset, facts] of [
      [DEMO_DATASET, 7],
      [LARGE, FACTS],
    ] as const) {
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      // Before the page's first script: the key (as typed in once) and a long-task log.
      await context.addInitScript((k) => {
        sessionStorage.setItem('memory-explorer.key', k);
        const log: number[] = [];
        (window as unknown as { __longTasks: number[] }).__longTasks = log;
        new PerformanceObserver((list) => {
          for (const entry of list.getEntries()) log.push(entry.duration);
        }).observe({ type: 'longtask', buffered: true });
      }, key);
      results.push(await measure(await context.newPage(), origin, dataset, facts));
      await context.close();
    }
    const [baseline, subject] = results as [Measure, Measure];
    const ratio = (a: number, b: number) => (b > 0 ? round1(a / b) : a > 0 ? Infinity : 1);
    const report = {
      results,
      ratios: {
        // A task under 50 ms is no long task: a baseline without any counts as 50 ms.
        longestTask: ratio(
          Math.max(subject.longestTaskMs, 50),
          Math.max(baseline.longestTaskMs, 50),
        ),
        slowestScrollStep: ratio(subject.slowestScrollStepMs, baseline.slowestScrollStepMs),
        medianScrollStep: ratio(subject.medianScrollStepMs, baseline.medianScrollStepMs),
        rowsInDocument: ratio(subject.rowsInDocument, baseline.rowsInDocument),
        firstPage: ratio(subject.firstPageMs, baseline.firstPageMs),
      },
    };
    for (const r of results) {
      process.stdout.write(
        `${r.dataset.padEnd(8)} ${String(r.facts).padStart(6)} facts, ${r.loaded} loaded, ${r.rowsInDocument} rows in the document; longest task ${r.longestTaskMs} ms, total blocking ${r.totalBlockingMs} ms; scroll step median ${r.medianScrollStepMs} ms, slowest ${r.slowestScrollStepMs} ms; first page ${r.firstPageMs} ms, next pages ${r.nextPageMs ?? '-'} ms\n`,
      );
    }
    process.stdout.write(
      `${LARGE} over ${DEMO_DATASET}: longest task ×${report.ratios.longestTask}, scroll step median ×${report.ratios.medianScrollStep}, slowest ×${report.ratios.slowestScrollStep}, rows in the document ×${report.ratios.rowsInDocument}, first page ×${report.ratios.firstPage}\n`,
    );
    if (values.out) writeFileSync(values.out, `${JSON.stringify(report, null, 2)}\n`);
  } finally {
    await browser.close();
    await closeServer(server);
    await database.close();
  }
} finally {
  await ferret.stop();
  rmSync(dir, { recursive: true, force: true });
}
