import type { Clock } from '../clock.js';
import type { AuthenticatedContext, LiveUpdates } from '../context.js';
import { GatewayError } from '../errors.js';
import { createLoaders, type Loaders } from '../loaders.js';
import type { FeedChange, FeedPosition } from '../store/changes.js';
import { ChangeWatches, type FeedEvent, type StreamEnd } from '../store/changeWatch.js';
import type { Collections } from '../store/collections.js';
import type { Tenant } from '../store/tenant.js';

/**
 * The live streams of one gateway process (docs/LIVE_UPDATES.md), whatever their transport
 * (GraphQL over SSE or over WebSocket): the change watches they read from, the limits on
 * how many are open, the check that their keys are still valid, and their end at shutdown.
 */

export interface LiveStreamOptions {
  /** How often a watched feed is read for other processes' writes (LIVE_POLL_MS). */
  pollMs: number;
  /** Streams open at once in the process (LIVE_STREAMS) and per key (LIVE_STREAMS_PER_KEY); 0: none. */
  maxStreams: number;
  maxStreamsPerKey: number;
  /** Changes one stream may have waiting (LIVE_BUFFER). */
  bufferLimit: number;
  /**
   * How often the keys of open streams are verified again, read from the database (each
   * distinct key once): the key cache's TTL, so a revoked key's streams end within it.
   */
  keyRecheckMs: number;
  onReadError?: (error: unknown) => void;
}

interface OpenStream {
  end: (reason: StreamEnd) => void;
}

/** One key's open streams, how to verify the key again, and the timer of its expiry. */
interface KeyStreams {
  streams: Set<OpenStream>;
  stillValid: () => Promise<boolean>;
  expiry: NodeJS.Timeout | null;
}

/** The longest delay a Node timer takes (about 24.8 days); a later expiry is left to the rechecks. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export class LiveStreams implements LiveUpdates {
  readonly watches: ChangeWatches;
  private readonly byKey = new Map<string, KeyStreams>();
  /** Keys this process ended the streams of (revoked here, or expired): none opens again. */
  private readonly endedKeys = new Set<string>();
  private open = 0;
  private closed = false;
  private readonly recheck: NodeJS.Timeout;

  /**
   * One instant and one set of loaders per change a watch pushed, shared by every stream
   * that receives it (all of one workspace: a watch follows one dataset): a change seen by
   * a thousand subscribers loads its fact once, not a thousand times.
   */
  private readonly eventContexts = new WeakMap<FeedChange, { now: Date; loaders: Loaders }>();

  constructor(
    private readonly db: Collections,
    private readonly clock: Clock,
    private readonly options: LiveStreamOptions,
  ) {
    this.watches = new ChangeWatches(db, {
      pollMs: options.pollMs,
      bufferLimit: options.bufferLimit,
      ...(options.onReadError ? { onReadError: options.onReadError } : {}),
    });
    this.recheck = setInterval(() => void this.recheckKeys(), options.keyRecheckMs);
    this.recheck.unref();
  }

  /** Streams open now, for metrics and tests. */
  counts(): { streams: number; keys: number } {
    return { streams: this.open, keys: this.byKey.size };
  }

  /**
   * A stream of the dataset's changes after `after` (null: from now) for the request's key,
   * or RATE_LIMITED when the process or the key has as many open as allowed. Each event is
   * resolved with a fresh instant, deadline and loaders (`beginEvent`). It is counted open
   * from here until its client leaves or it ends, whether or not it was ever read.
   */
  follow(
    ctx: AuthenticatedContext,
    tenant: Tenant,
    after: FeedPosition | null,
  ): AsyncIterableIterator<FeedEvent> {
    if (this.closed) {
      throw new GatewayError('SHUTTING_DOWN', 'The gateway is shutting down; subscribe again');
    }
    const { keyId } = ctx.auth;
    if (this.endedKeys.has(keyId)) {
      throw new GatewayError('UNAUTHENTICATED', 'The API key of this stream is no longer valid');
    }
    const mine = this.byKey.get(keyId);
    if (this.open >= this.options.maxStreams) {
      throw new GatewayError(
        'RATE_LIMITED',
        `This gateway process has as many live streams open as it serves (${this.options.maxStreams}, LIVE_STREAMS); retry later or on another replica`,
      );
    }
    if ((mine?.streams.size ?? 0) >= this.options.maxStreamsPerKey) {
      throw new GatewayError(
        'RATE_LIMITED',
        `This API key has as many live streams open as one key may (${this.options.maxStreamsPerKey}, LIVE_STREAMS_PER_KEY); close one first`,
      );
    }
    const { events, end, leave } = this.watches.follow(tenant, after);
    const stream: OpenStream = { end };
    const keyStreams = mine ?? {
      streams: new Set(),
      stillValid: () => ctx.keyStillValid(this.clock()),
      expiry: this.expiryTimer(keyId, ctx.auth.expiresAt),
    };
    keyStreams.streams.add(stream);
    this.byKey.set(keyId, keyStreams);
    this.open++;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      this.open--;
      keyStreams.streams.delete(stream);
      if (keyStreams.streams.size === 0 && this.byKey.get(keyId) === keyStreams) {
        this.byKey.delete(keyId);
        if (keyStreams.expiry) clearTimeout(keyStreams.expiry);
      }
    };
    // The client went: the stream ends now, whether or not its iterator is ever returned.
    ctx.signal.addEventListener(
      'abort',
      () => {
        release();
        leave();
      },
      { once: true },
    );
    const eventContext = (event: FeedEvent): { now: Date; loaders?: Loaders } => {
      if (!('change' in event)) return { now: this.clock() };
      let shared = this.eventContexts.get(event.change);
      if (!shared) {
        const now = this.clock();
        shared = { now, loaders: createLoaders(this.db, ctx.auth.workspaceId, now) };
        this.eventContexts.set(event.change, shared);
      }
      return shared;
    };
    return {
      [Symbol.asyncIterator]() {
        return this;
      },
      async next() {
        const result = await events.next();
        if (result.done) {
          release();
        } else {
          const { now, loaders } = eventContext(result.value);
          ctx.beginEvent(now, loaders);
        }
        return result;
      },
      async return() {
        release();
        // Wakes the follower's wait, so the generator can finish and leave its watch.
        leave();
        await events.return(undefined);
        return { done: true, value: undefined };
      },
    };
  }

  /**
   * Ends every open stream of a key, now: the key was revoked by this process
   * (`revokeApiKey`), or it expired, or a recheck found it no longer valid. What its streams
   * had waiting is dropped, and an event being executed for it is not delivered
   * (`keyEnded`, asked by src/http/sharedEvents.ts before each delivery).
   */
  endKey(keyId: string): void {
    this.endedKeys.add(keyId);
    const keyStreams = this.byKey.get(keyId);
    if (!keyStreams) return;
    this.byKey.delete(keyId);
    if (keyStreams.expiry) clearTimeout(keyStreams.expiry);
    for (const stream of keyStreams.streams) stream.end('revoked');
  }

  /** Whether this process has ended the key's streams (a key no longer valid). */
  keyEnded(keyId: string | undefined): boolean {
    return keyId !== undefined && this.endedKeys.has(keyId);
  }

  /** The key's streams end at its expiry, by the gateway's clock (null: it never expires). */
  private expiryTimer(keyId: string, expiresAt: Date | null): NodeJS.Timeout | null {
    if (!expiresAt) return null;
    const wait = expiresAt.getTime() - this.clock().getTime();
    if (wait > MAX_TIMER_MS) return null;
    const timer = setTimeout(() => this.endKey(keyId), Math.max(0, wait));
    timer.unref();
    return timer;
  }

  /** Every key with open streams, verified again; a key no longer valid ends its streams. */
  private async recheckKeys(): Promise<void> {
    for (const [keyId, keyStreams] of this.byKey) {
      let valid = true;
      try {
        valid = await keyStreams.stillValid();
      } catch {
        // The database did not answer: the streams stay until a check can say.
        continue;
      }
      if (!valid) this.endKey(keyId);
    }
  }

  /** Shutdown: no new stream opens, every open one ends with SHUTTING_DOWN. */
  close(): void {
    this.closed = true;
    clearInterval(this.recheck);
    for (const keyStreams of this.byKey.values()) {
      if (keyStreams.expiry) clearTimeout(keyStreams.expiry);
    }
    this.watches.endAll('shutdown');
  }
}
