import { describe, expect, it } from 'vitest';
import { workspaceLimiter } from '../../src/http/workspaceLimit.js';

/** Work that runs until `finish()` is called, recording when it started. */
function gate(log: string[], name: string) {
  let finish: () => void = () => {};
  const finished = new Promise<void>((resolve) => {
    finish = resolve;
  });
  return {
    work: async () => {
      log.push(`start ${name}`);
      await finished;
      log.push(`end ${name}`);
    },
    finish: () => finish(),
  };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));
const FAR = Number.POSITIVE_INFINITY;

describe("a workspace's share of one gateway process", () => {
  it('runs at once while a slot is free, queues the next ones in order, refuses past the queue', async () => {
    const limiter = workspaceLimiter({ concurrency: 2, queue: 1 });
    const log: string[] = [];
    const [a, b, c, d] = ['a', 'b', 'c', 'd'].map((n) => gate(log, n));
    const ran = [a!, b!, c!].map((g) => limiter.run('w1', FAR, g.work));
    await tick();
    // Two slots: a and b run; c waits.
    expect(log).toEqual(['start a', 'start b']);
    // The queue (1) is full: d is refused before it runs.
    expect(await limiter.run('w1', FAR, d!.work)).toBe('queue full');
    // Another workspace has slots of its own.
    const other = gate(log, 'x');
    const otherRan = limiter.run('w2', FAR, other.work);
    await tick();
    expect(log).toEqual(['start a', 'start b', 'start x']);
    a!.finish();
    await tick();
    expect(log).toEqual(['start a', 'start b', 'start x', 'end a', 'start c']);
    b!.finish();
    c!.finish();
    other.finish();
    expect(await Promise.all([...ran, otherRan])).toEqual([null, null, null, null]);
    expect(log).not.toContain('start d');
    await tick();
    expect(limiter.size()).toBe(0);
  });

  it('a waiter past its deadline is refused and never runs', async () => {
    const limiter = workspaceLimiter({ concurrency: 1, queue: 5 });
    const log: string[] = [];
    const [a, late] = ['a', 'late'].map((n) => gate(log, n));
    const first = limiter.run('w', FAR, a!.work);
    const refused = limiter.run('w', performance.now() + 20, late!.work);
    expect(await refused).toBe('waited too long');
    a!.finish();
    expect(await first).toBeNull();
    await tick();
    expect(log).toEqual(['start a', 'end a']);
    expect(limiter.size()).toBe(0);
  });
});
