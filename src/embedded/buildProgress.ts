/**
 * What the first build of the embedded database prints while it runs (minutes of Go
 * compiling): each step with the time since the build began, so a newcomer sees it is
 * moving. On a terminal one line is rewritten every second; elsewhere (a CI log, a pipe)
 * each step is a line of its own, repeated every half minute while it lasts.
 */

/** Elapsed time as people read it: `0s`, `45s`, `1m 20s`, `12m 0s`. */
export function formatElapsed(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  const minutes = Math.floor(seconds / 60);
  return minutes > 0 ? `${minutes}m ${seconds % 60}s` : `${seconds}s`;
}

export interface BuildProgress {
  /** A new step begins (`copying FerretDB's module`). */
  step(name: string): void;
  /** The build is over: built (says how long it took), or failed (the error says why). */
  end(outcome: 'built' | 'failed'): void;
}

interface ProgressOptions {
  /** Plain lines (without a line ending): where the progress goes when there is no terminal. */
  log: (line: string) => void;
  /** A terminal to rewrite one live line on; null: plain lines through `log`. */
  terminal: { write(text: string): unknown } | null;
  now?: () => number;
  /** Runs `tick` every `ms` until the returned function is called. */
  every?: (tick: () => void, ms: number) => () => void;
}

/** How often a plain log repeats the current step: often enough to show life, rarely enough to read. */
const PLAIN_EVERY_MS = 30_000;
const LIVE_EVERY_MS = 1000;

const realEvery = (tick: () => void, ms: number) => {
  const timer = setInterval(tick, ms);
  // Progress never keeps the process alive on its own.
  timer.unref();
  return () => clearInterval(timer);
};

export function buildProgress({
  log,
  terminal,
  now = () => performance.now(),
  every = realEvery,
}: ProgressOptions): BuildProgress {
  const started = now();
  let current: string | null = null;
  const line = () => `  ${current} (${formatElapsed(now() - started)})`;
  // "\r" back to the line's start, ESC[K clears what a longer earlier line left.
  const redraw = () => terminal?.write(`\r\x1b[K${line()}`);
  const stop = terminal
    ? every(redraw, LIVE_EVERY_MS)
    : every(() => current !== null && log(line()), PLAIN_EVERY_MS);
  return {
    step(name) {
      // On a terminal the finished step keeps its last line; the new one starts below it.
      if (terminal && current !== null) terminal.write('\n');
      current = name;
      if (terminal) redraw();
      else log(line());
    },
    end(outcome) {
      stop();
      if (terminal && current !== null) terminal.write('\n');
      // A failure says so itself, in the error that stops start-up.
      if (outcome === 'built')
        log(`Built the embedded database in ${formatElapsed(now() - started)}.`);
    },
  };
}
