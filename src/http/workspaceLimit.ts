import pLimit, { type LimitFunction } from 'p-limit';

/**
 * Database work per workspace, bounded in each gateway process: at most `concurrency`
 * requests of one workspace run at once; up to `queue` more wait for a slot, each no
 * longer than its own database time (DB_TIMEOUT_MS); past either, the request is refused
 * (429 with Retry-After) before it runs anything. So one tenant's burst of heavy queries
 * takes at most its share of the database, and another tenant's requests keep their
 * normal time. With several replicas each process allows its own share (like the rate
 * limits).
 */

export type LimitRefusal = 'queue full' | 'waited too long';

export function workspaceLimiter(options: { concurrency: number; queue: number }) {
  const limits = new Map<string, LimitFunction>();
  const limitOf = (workspaceId: string): LimitFunction => {
    let limit = limits.get(workspaceId);
    if (!limit) {
      limit = pLimit(options.concurrency);
      limits.set(workspaceId, limit);
    }
    return limit;
  };
  /** An idle workspace's limit goes, once p-limit has counted the work out (it does so once the work's promise settles). */
  const forgetIfIdle = (workspaceId: string, limit: LimitFunction) =>
    setImmediate(() => {
      if (limits.get(workspaceId) === limit && limit.activeCount === 0 && limit.pendingCount === 0)
        limits.delete(workspaceId);
    });
  return {
    /**
     * Runs `work` in one of the workspace's slots, waiting for one until `deadline` (a
     * `performance.now()` instant) at the most; or says why it will not.
     */
    async run(
      workspaceId: string,
      deadline: number,
      work: () => Promise<void>,
    ): Promise<LimitRefusal | null> {
      const limit = limitOf(workspaceId);
      if (limit.activeCount >= options.concurrency && limit.pendingCount >= options.queue) {
        return 'queue full';
      }
      const forget = () => forgetIfIdle(workspaceId, limit);
      if (limit.activeCount < options.concurrency) {
        // A free slot (so nobody waits: p-limit fills slots from its queue at once): the
        // work starts now, with no wait to bound.
        try {
          await limit(work);
        } finally {
          forget();
        }
        return null;
      }
      let abandoned = false;
      let begin: () => void = () => {};
      const started = new Promise<void>((resolve) => {
        begin = resolve;
      });
      const done = limit(async () => {
        // A waiter that gave up leaves its slot at once.
        if (abandoned) return;
        begin();
        await work();
      });
      let timer: NodeJS.Timeout | undefined;
      const wait = Number.isFinite(deadline) ? Math.max(0, deadline - performance.now()) : null;
      const gaveUp =
        wait === null
          ? new Promise<never>(() => {})
          : new Promise<'gave up'>((resolve) => {
              timer = setTimeout(() => resolve('gave up'), wait);
            });
      const first = await Promise.race([started.then(() => 'started' as const), gaveUp]);
      clearTimeout(timer);
      if (first === 'gave up') {
        abandoned = true;
        void done.finally(forget);
        return 'waited too long';
      }
      try {
        await done;
      } finally {
        forget();
      }
      return null;
    },
    /**
     * Runs `work` in one of the workspace's slots, waiting as long as it takes: a live
     * stream's event, which cannot be refused (the stream would lose it) but waits its
     * turn behind the workspace's other work, and counts while it waits, so a workspace's
     * busy streams leave its requests less room, never another workspace's.
     */
    async queue<T>(workspaceId: string, work: () => Promise<T>): Promise<T> {
      const limit = limitOf(workspaceId);
      try {
        return await limit(work);
      } finally {
        forgetIfIdle(workspaceId, limit);
      }
    },
    /** How many workspaces have requests running or waiting (for tests). */
    size: () => limits.size,
  };
}
