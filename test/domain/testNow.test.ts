import { describe, expect, it } from 'vitest';

/** The suite's date switch (test/setup/clock.ts) really moves the clock when it is set. */
describe('TEST_NOW', () => {
  it('sets the date the suite runs at, and time still moves', async () => {
    const at = process.env.TEST_NOW;
    const before = new Date();
    if (at) {
      expect(Math.abs(before.getTime() - new Date(at).getTime())).toBeLessThan(24 * 3600_000);
    } else {
      expect(before.getUTCFullYear()).toBeGreaterThanOrEqual(2026);
    }
    await new Promise((done) => setTimeout(done, 30));
    expect(Date.now()).toBeGreaterThan(before.getTime());
    // In steps of a millisecond, as a real clock: two writes a few milliseconds apart must
    // not read the same instant (a replaceExisting would take them for concurrent).
    const later = Date.now();
    await new Promise((done) => setTimeout(done, 5));
    expect(Date.now()).toBeGreaterThan(later);
  });
});
