import { describe, expect, it } from 'vitest';
import { buildProgress, formatElapsed } from '../../src/embedded/buildProgress.js';

/** A clock the test moves, and the reporter's repeating tick, run as a timer would. */
function harness(terminal: boolean) {
  let at = 1000;
  let lastTick = at;
  let tick: (() => void) | null = null;
  let every = 0;
  let stopped = false;
  const lines: string[] = [];
  const written: string[] = [];
  const progress = buildProgress({
    log: (line) => lines.push(line),
    terminal: terminal ? { write: (text: string) => written.push(text) } : null,
    now: () => at,
    every: (run, ms) => {
      tick = run;
      every = ms;
      return () => {
        stopped = true;
      };
    },
  });
  return {
    progress,
    lines,
    written,
    advance(ms: number) {
      const until = at + ms;
      while (lastTick + every <= until) {
        lastTick += every;
        at = lastTick;
        tick?.();
      }
      at = until;
    },
    /** What a terminal shows: each line as its last rewrite left it. */
    screen: () =>
      written
        .join('')
        .split('\n')
        .map((line) => line.split('\r\x1b[K').at(-1)),
    every: () => every,
    stopped: () => stopped,
  };
}

describe('formatElapsed', () => {
  it.each([
    [0, '0s'],
    [999, '0s'],
    [45_400, '45s'],
    [60_000, '1m 0s'],
    [80_000, '1m 20s'],
    [3 * 60_000 + 31_900, '3m 31s'],
    [-5, '0s'],
  ])('%i ms reads %s', (ms, shown) => {
    expect(formatElapsed(ms)).toBe(shown);
  });
});

describe('the progress of the embedded build', () => {
  it('on a terminal, rewrites one line every second with the step and the time so far', () => {
    const h = harness(true);
    expect(h.every()).toBe(1000);
    h.progress.step("downloading FerretDB's Go module");
    expect(h.screen()).toEqual(["  downloading FerretDB's Go module (0s)"]);
    h.advance(12_500);
    expect(h.screen()).toEqual(["  downloading FerretDB's Go module (12s)"]);
    h.progress.step('compiling');
    h.advance(68_000);
    expect(h.written.at(-1)).toBe('\r\x1b[K  compiling (1m 20s)');
    h.progress.end('built');
    // The finished step keeps its last line; the next one starts below it.
    expect(h.screen()).toEqual([
      "  downloading FerretDB's Go module (12s)",
      '  compiling (1m 20s)',
      '',
    ]);
    expect(h.lines).toEqual(['Built the embedded database in 1m 20s.']);
    expect(h.stopped()).toBe(true);
  });

  it('elsewhere, prints each step as a line, and again every half minute while it lasts', () => {
    const h = harness(false);
    expect(h.every()).toBe(30_000);
    h.progress.step('copying the module and applying embedded-db/_ferretdb');
    h.advance(2_000);
    h.progress.step('compiling');
    h.advance(30_000);
    h.advance(30_000);
    h.progress.end('built');
    expect(h.written).toEqual([]);
    expect(h.lines).toEqual([
      '  copying the module and applying embedded-db/_ferretdb (0s)',
      '  compiling (2s)',
      '  compiling (30s)',
      '  compiling (1m 0s)',
      'Built the embedded database in 1m 2s.',
    ]);
  });

  it('a failed build ends the live line and leaves the failure to its error', () => {
    const h = harness(true);
    h.progress.step('compiling');
    h.advance(5_000);
    h.progress.end('failed');
    expect(h.written.at(-1)).toBe('\n');
    expect(h.lines).toEqual([]);
    expect(h.stopped()).toBe(true);
  });
});
