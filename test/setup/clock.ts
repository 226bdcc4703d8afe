import { vi } from 'vitest';

/**
 * `TEST_NOW=2031-06-01 npm test` runs the suite as if it were that date: every Date in the
 * test process (the gateway's system clock included) starts at TEST_NOW and moves with
 * real time; timers are not touched. CI runs the suite a second time this way, so a test
 * or demo fact that only holds until some date fails CI, not a user on that date.
 * Processes a test spawns (the server, the CLI) keep the real date.
 */
const at = process.env.TEST_NOW;
if (at) {
  const start = new Date(at);
  if (Number.isNaN(start.getTime())) throw new Error(`TEST_NOW="${at}" is not a date`);
  // Advanced every millisecond, as a real clock reads: with the default 20 ms steps, two
  // writes a few milliseconds apart got the same instant and counted as concurrent.
  vi.useFakeTimers({
    toFake: ['Date'],
    now: start,
    shouldAdvanceTime: true,
    advanceTimeDelta: 1,
  });
}
