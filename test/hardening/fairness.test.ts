import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { runFairness } from '../../bench/fairness.js';
import { createLogger } from '../../src/http/observability.js';

/**
 * One tenant's heavy queries cannot starve another, and work nobody waits for stops: a
 * workspace with a dataset of 5,000 facts runs ten concurrent full-history lists for six
 * seconds against an embedded FerretDB of its own (without the store's scalar declarations,
 * so the lists are scanned, not index-served), with DB_TIMEOUT_MS at 1.5 s, while
 * another workspace lists its eight facts (bench/fairness.ts measures it; this checks what
 * it reports and prints the figures).
 */
const DB_TIMEOUT_MS = 1500;

describe('a heavy workspace beside a light one', () => {
  it('the light one keeps answering, the heavy one is bounded, and the database stops when the requests give up', {
    timeout: 300_000,
  }, async () => {
    // The gateway's error lines (a 5xx and what caused it), shown if an answer is not as expected.
    const errors: string[] = [];
    const errorLines = new Writable({
      write(chunk, _encoding, done) {
        errors.push(String(chunk));
        done();
      },
    });
    const report = await runFairness({
      logger: createLogger('error', errorLines),
      facts: 5000,
      clients: 10,
      seconds: 6,
      dbTimeoutMs: DB_TIMEOUT_MS,
      // Index-served, this list takes milliseconds; the heavy load has to be heavy in the
      // database, as a query shape no index serves is.
      indexServed: false,
    });
    console.log(`fairness: ${JSON.stringify(report)}`);
    // The light workspace: every answer a 200, none waiting out the heavy one's time.
    const unexpected = errors.filter((line) => !line.includes('"status":503')).slice(0, 3);
    expect(Object.keys(report.lightUnderLoad.statuses), unexpected.join('\n')).toEqual(['200']);
    expect(report.lightUnderLoad.maxMs).toBeLessThan(DB_TIMEOUT_MS);
    // The heavy one: answered, stopped at its database time (503), or refused for its
    // share (429, with Retry-After); never a request that outlives its bound.
    for (const status of Object.keys(report.heavy.statuses)) {
      expect(['200', '429', '503'], unexpected.join('\n')).toContain(status);
    }
    expect(report.heavy.retryAfter).toBe(true);
    expect(report.heavy.maxMs).toBeLessThan(DB_TIMEOUT_MS + 2500);
    // It did meet its bound: the test is not vacuous.
    expect(
      (report.heavy.statuses['503'] ?? 0) + (report.heavy.statuses['429'] ?? 0),
    ).toBeGreaterThan(0);
    // Once the heavy requests are over, the database is idle: nothing goes on for nobody.
    expect(report.databaseCpuAfter).not.toBeNull();
    expect(report.databaseCpuAfter!).toBeLessThan(0.3);
  });
});
