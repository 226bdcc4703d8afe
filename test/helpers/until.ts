/**
 * Waits until `condition` holds, checking it every `everyMs`: for a moment a test can
 * observe (a stream open, a log line printed, a process gone) instead of a pause, which a
 * loaded machine can outlast. Past `withinMs` it fails, saying what it waited for (`what`,
 * or what the function says by then). That bound only ends a wait that would never
 * succeed: generous (the suite's tests get 60 s), never a speed limit.
 */
export async function until(
  condition: () => boolean | Promise<boolean>,
  what: string | (() => string),
  { withinMs = 30_000, everyMs = 10 }: { withinMs?: number; everyMs?: number } = {},
): Promise<void> {
  const deadline = performance.now() + withinMs;
  while (!(await condition())) {
    if (performance.now() > deadline) {
      throw new Error(`not within ${withinMs} ms: ${typeof what === 'string' ? what : what()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
