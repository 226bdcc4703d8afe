import {
  changesAfter,
  datasetErasureAfter,
  erasureNotice,
  type FeedChange,
  type FeedPosition,
  feedAfter,
  feedKey,
  lastChangeSeq,
  localFeedWrites,
} from './changes.js';
import type { Collections } from './collections.js';
import { findDataset } from './datasets.js';
import type { Tenant } from './tenant.js';

/**
 * Live followers of datasets' change feeds (docs/LIVE_UPDATES.md), for one process: one
 * watch per followed dataset reads the feed for all of its followers, so the database work
 * grows with the datasets followed, not with the followers. A watch reads when a write of
 * this process appended to the feed (at once) and every `pollMs` (other processes'
 * writes); each read is two commands, the dataset (its creation instant: an erasure
 * changes it) and the changes after the last one it read.
 */

export interface ChangeWatchOptions {
  /** How often a watch reads the feed for other processes' writes. */
  pollMs: number;
  /** Changes a follower may have waiting; past it, its stream ends with `overflow`. */
  bufferLimit: number;
  /** A watch's read that failed (the database is down): it reads again at its next poll. */
  onReadError?: (error: unknown) => void;
}

/** Why a stream ended, when the server ended it. */
export type StreamEnd = 'overflow' | 'shutdown' | 'revoked';

export type FeedEvent = { change: FeedChange } | { end: StreamEnd };

/** Changes read at once, by the watch and by a follower's replay. */
const PAGE = 200;

/** One follower: what the watch pushed and it has not delivered yet, bounded. */
class Follower {
  private waiting: FeedEvent[] = [];
  private wake: (() => void) | null = null;
  ended = false;

  constructor(private readonly bufferLimit: number) {}

  push(changes: readonly FeedChange[]): void {
    if (this.ended) return;
    if (this.waiting.length + changes.length > this.bufferLimit) {
      this.end('overflow');
      return;
    }
    for (const change of changes) this.waiting.push({ change });
    this.notify();
  }

  /** Ends the stream: what waits is dropped, the reason is delivered next. */
  end(reason: StreamEnd): void {
    if (this.ended) return;
    this.ended = true;
    this.waiting = [{ end: reason }];
    this.notify();
  }

  /** Stops waiting (the client left): no reason to deliver. */
  leave(): void {
    this.ended = true;
    this.waiting = [];
    this.notify();
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  /** The next event, waiting for one; null once the stream has nothing more. */
  async next(): Promise<FeedEvent | null> {
    for (;;) {
      const event = this.waiting.shift();
      if (event) return event;
      if (this.ended) return null;
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
    }
  }

  /** An end reason that is waiting, ahead of changes (the replay checks it between pages). */
  endPending(): StreamEnd | null {
    const first = this.waiting[0];
    return first && 'end' in first ? first.end : null;
  }
}

/** The watch of one dataset: its position in the feed and its followers. */
class DatasetWatch {
  readonly followers = new Set<Follower>();
  /** The creation instant of the dataset as last read (0: it did not exist). */
  epoch = 0;
  /** The highest number read from the feed of `epoch`. */
  seq = 0;
  readonly ready: Promise<void>;
  private timer: NodeJS.Timeout | null = null;
  private reading: Promise<void> | null = null;
  private readAgain = false;
  private stopped = false;
  private readonly onWrite = () => this.readNow();

  constructor(
    private readonly db: Collections,
    readonly tenant: Tenant,
    private readonly options: ChangeWatchOptions,
  ) {
    localFeedWrites.on(feedKey(tenant), this.onWrite);
    this.ready = this.start();
  }

  /** Where the feed ends now: what followers without a cursor start after. */
  private async start(): Promise<void> {
    const dataset = await findDataset(this.db, this.tenant.workspaceId, this.tenant.dataset);
    this.epoch = dataset?.createdAt.getTime() ?? 0;
    this.seq = dataset ? await lastChangeSeq(this.db, this.tenant) : 0;
    this.schedule();
  }

  private schedule(): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.readNow(), this.options.pollMs);
    this.timer.unref();
  }

  /** Reads at once, or once more right after the read under way (writes may have landed since it began). */
  readNow(): void {
    if (this.stopped) return;
    if (this.reading) {
      this.readAgain = true;
      return;
    }
    this.reading = this.read()
      .catch((error: unknown) => this.options.onReadError?.(error))
      .finally(() => {
        this.reading = null;
        if (this.readAgain) {
          this.readAgain = false;
          this.readNow();
        } else {
          this.schedule();
        }
      });
  }

  private async read(): Promise<void> {
    await this.ready;
    const dataset = await findDataset(this.db, this.tenant.workspaceId, this.tenant.dataset);
    const epoch = dataset?.createdAt.getTime() ?? 0;
    const found: FeedChange[] = [];
    if (epoch !== this.epoch) {
      // Erased (and perhaps written again): followers learn it, then read the new feed.
      if (this.epoch !== 0) {
        const erased = await datasetErasureAfter(this.db, this.tenant, new Date(this.epoch));
        found.push(erasureNotice(erased, this.tenant, epoch));
      }
      this.epoch = epoch;
      this.seq = 0;
    }
    if (epoch !== 0) {
      for (;;) {
        const page = await changesAfter(this.db, this.tenant, this.seq, PAGE);
        for (const change of page) found.push({ ...change, epoch });
        const last = page.at(-1);
        if (last) this.seq = last.seq;
        if (page.length < PAGE) break;
      }
    }
    if (found.length === 0) return;
    for (const follower of this.followers) follower.push(found);
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    localFeedWrites.off(feedKey(this.tenant), this.onWrite);
  }
}

export class ChangeWatches {
  private readonly watches = new Map<string, DatasetWatch>();

  constructor(
    private readonly db: Collections,
    private readonly options: ChangeWatchOptions,
  ) {}

  /** Settles once every watch has read where its feed ends (tests wait for it). */
  async started(): Promise<void> {
    await Promise.all([...this.watches.values()].map((watch) => watch.ready));
  }

  /** Datasets watched and followers, for metrics and tests. */
  counts(): { datasets: number; followers: number } {
    let followers = 0;
    for (const watch of this.watches.values()) followers += watch.followers.size;
    return { datasets: this.watches.size, followers };
  }

  /**
   * Follows a dataset's feed from after `after` (null: from now), as events: every change
   * once, in the feed's order, then whatever end the server gave it. `handle.end(reason)`
   * ends it from outside (a revoked key, shutdown); `handle.leave()` then returning from the
   * iterator leaves (the client went).
   *
   * Joining misses nothing and repeats nothing: the follower registers with the watch
   * first (what the watch reads from then on waits in its buffer), then replays the feed
   * after its cursor page by page until a page comes back short, then delivers what waits,
   * skipping what the replay delivered. A change committed after the replay's last read is
   * read by the watch, which began before it.
   */
  follow(
    tenant: Tenant,
    after: FeedPosition | null,
  ): {
    events: AsyncGenerator<FeedEvent>;
    end: (reason: StreamEnd) => void;
    leave: () => void;
    joined: Promise<void>;
  } {
    const follower = new Follower(this.options.bufferLimit);
    let joined!: () => void;
    const whenJoined = new Promise<void>((resolve) => {
      joined = resolve;
    });
    const events = this.stream(tenant, after, follower, joined);
    return {
      events,
      end: (reason) => follower.end(reason),
      leave: () => {
        follower.leave();
        joined();
      },
      joined: whenJoined,
    };
  }

  /**
   * `joined` is called once the follower is registered with the watch and the watch knows
   * where the feed ended then (it runs with the first `next()`): a change committed after it
   * is the follower's, whichever it reads first.
   */
  private async *stream(
    tenant: Tenant,
    after: FeedPosition | null,
    follower: Follower,
    joined: () => void,
  ): AsyncGenerator<FeedEvent> {
    const key = feedKey(tenant);
    let watch = this.watches.get(key);
    if (!watch) {
      watch = new DatasetWatch(this.db, tenant, this.options);
      this.watches.set(key, watch);
    }
    watch.followers.add(follower);
    try {
      await watch.ready.finally(joined);
      let position: FeedPosition = { epoch: watch.epoch, seq: watch.seq };
      if (after) {
        position = after;
        for (;;) {
          const reason = follower.endPending();
          if (reason) break;
          const page =
            watch.epoch === 0
              ? await this.erasedDataset(tenant, position)
              : await feedAfter(this.db, tenant, watch.epoch, position, PAGE);
          for (const change of page) {
            position = { epoch: change.epoch, seq: change.seq };
            yield { change };
          }
          if (page.length < PAGE) break;
        }
      }
      for (;;) {
        const event = await follower.next();
        if (!event) return;
        if ('change' in event) {
          const { change } = event;
          // Read by the replay already (the watch read it too, after registering).
          if (change.epoch === position.epoch && change.seq <= position.seq) continue;
          position = { epoch: change.epoch, seq: change.seq };
        }
        yield event;
        if ('end' in event) return;
      }
    } finally {
      follower.leave();
      watch.followers.delete(follower);
      if (watch.followers.size === 0 && this.watches.get(key) === watch) {
        watch.stop();
        this.watches.delete(key);
      }
    }
  }

  /**
   * A cursor into a dataset that does not exist now: its erasure, if the audit trail says
   * one came after the cursor's epoch, and nothing else (a dataset that never existed, or
   * another workspace's, is silent).
   */
  private async erasedDataset(tenant: Tenant, position: FeedPosition): Promise<FeedChange[]> {
    if (position.epoch === 0) return [];
    const erased = await datasetErasureAfter(this.db, tenant, new Date(position.epoch));
    return erased ? [erasureNotice(erased, tenant, 0)] : [];
  }

  /** Ends every stream with `reason` (shutdown): followers get it, then nothing. */
  endAll(reason: StreamEnd): void {
    for (const watch of this.watches.values()) {
      for (const follower of watch.followers) follower.end(reason);
    }
  }
}
