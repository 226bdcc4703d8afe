import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { runFairness } from '../../bench/fairness.js';
import { createLogger } from '../../src/http/observability.js';

/**
 * One tenant's heavy queries cannot starve another, and work nobody waits for stops: a
 * workspace with a dataset of 5,000 facts runs thirty concurrent full-history lists for six
 * seconds against an embedded FerretDB of its own (without the store's scalar declarations,
 * so the lists are scanned, not index-served), with DB_TIMEOUT_MS at 3 s and two slots per
 * workspace, while another workspace lists its eight facts (bench/fairness.ts measures it;
 * this checks what it reports and prints the figures).
 *
 * No answer is held to a time of the test's own: a loaded machine slows them all. The
 * light workspace's bound is its database budget, which the gateway enforces (an answer
 * that met it is a 503, not a 200); the heavy one's answers are counted by status, and
 * their time held to a bound derived from the budget.
 */
const DB_TIMEOUT_MS = 3000;
/** The heavy workspace's concurrency (WORKSPACE_CONCURRENCY, the embedded store's default). */
const SLOTS = 2;

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
      // Many more than its slots: most of them wait, and past their budget are refused,
      // however fast the machine runs the two in the database.
      clients: 30,
      seconds: 6,
      dbTimeoutMs: DB_TIMEOUT_MS,
      workspaceConcurrency: SLOTS,
      // Index-served, this list takes milliseconds; the heavy load has to be heavy in the
      // database, as a query shape no index serves is.
      indexServed: false,
    });
    console.log(`fairness: ${JSON.stringify(report)}`);
    // The light workspace: every answer a 200, each asked while the heavy one had its slots
    // full and more requests waiting. A 200 is an answer within its own database budget
    // (DB_TIMEOUT_MS from the request's start, a wait for a slot included): past it, the
    // gateway answers 503. So none waited out the heavy one's time.
    const unexpected = errors.filter((line) => !line.includes('"status":503')).slice(0, 3);
    expect(Object.keys(report.lightUnderLoad.statuses), unexpected.join('\n')).toEqual(['200']);
    expect(report.lightUnderLoad.heavyOutstandingAtLeast).toBeGreaterThan(SLOTS);
    // The heavy one: answered, stopped at its database time (503), or refused for its
    // share (429, with Retry-After); never a request that outlives its bound (the wait for
    // a slot and the database share one budget, the socket timeout is a second past it:
    // three budgets leave a loaded machine the rest).
    for (const status of Object.keys(report.heavy.statuses)) {
      expect(['200', '429', '503'], unexpected.join('\n')).toContain(status);
    }
    expect(report.heavy.retryAfter).toBe(true);
    expect(report.heavy.maxMs).toBeLessThan(3 * DB_TIMEOUT_MS);
    // It did meet its bound: the test is not vacuous.
    expect(
      (report.heavy.statuses['503'] ?? 0) + (report.heavy.statuses['429'] ?? 0),
    ).toBeGreaterThan(0);
    // Once the heavy requests are over, the database is idle: nothing goes on for nobody.
    expect(report.databaseCpuAfter).not.toBeNull();
    expect(report.databaseCpuAfter!).toBeLessThan(0.3);
  });
});
