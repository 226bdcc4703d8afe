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
 * Also the connections held open (a WebSocket, an SSE response): how many each client
 * address and each key holds, and their close when their key is no longer valid.
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
   * Connections held open per key (LIVE_CONNECTIONS_PER_KEY) and per client address
   * (LIVE_CONNECTIONS_PER_ADDRESS); 0: no cap.
   */
  maxConnectionsPerKey: number;
  maxConnectionsPerAddress: number;
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

/** A connection held open for a key: `end` closes it, saying why, when the key ends. */
interface OpenConnection {
  end: (why: GatewayError) => void;
}

/**
 * One key's open streams and connections, how to verify the key again, and the timer of
 * its expiry.
 */
interface KeyHolds {
  streams: Set<OpenStream>;
  connections: Set<OpenConnection>;
  stillValid: () => Promise<boolean>;
  expiry: NodeJS.Timeout | null;
}

/** A connection's key, as the request context of that key carries it (src/context.ts). */
export type ConnectionKey = Pick<AuthenticatedContext, 'auth' | 'keyStillValid'>;

/**
 * A connection held open (`LiveStreams.holdConnection`), counted against its client
 * address until `release`, and against its key once `identify` has named it.
 */
export interface HeldConnection {
  /**
   * Counts the connection against its key too (RATE_LIMITED past LIVE_CONNECTIONS_PER_KEY;
   * UNAUTHENTICATED for a key this process has ended), and keeps `end`, which closes it
   * when the key is revoked, expires or a recheck finds it no longer valid. After
   * `release`, nothing.
   */
  identify(key: ConnectionKey, end: (why: GatewayError) => void): void;
  /** The connection closed: its places are free (once, however often it is called). */
  release(): void;
}

const keyEnded = () =>
  new GatewayError(
    'UNAUTHENTICATED',
    'The API key of this connection is no longer valid (revoked or expired)',
  );

/** The longest delay a Node timer takes (about 24.8 days); a later expiry is left to the rechecks. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export class LiveStreams implements LiveUpdates {
  readonly watches: ChangeWatches;
  private readonly byKey = new Map<string, KeyHolds>();
  /** Keys this process ended the streams of (revoked here, or expired): none opens again. */
  private readonly endedKeys = new Set<string>();
  private open = 0;
  /** Connections held open, in all and per client address. */
  private connections = 0;
  private readonly byAddress = new Map<string, number>();
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

  /** Streams and connections open now, and the keys holding them, for metrics and tests. */
  counts(): { streams: number; connections: number; keys: number } {
    return { streams: this.open, connections: this.connections, keys: this.byKey.size };
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
  ): AsyncIterableIterator<FeedEvent> & { joined: Promise<void> } {
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
    const { events, end, leave, joined } = this.watches.follow(tenant, after);
    const stream: OpenStream = { end };
    const holds = this.holdsOf(ctx);
    holds.streams.add(stream);
    this.open++;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      this.open--;
      holds.streams.delete(stream);
      this.forgetIfIdle(keyId, holds);
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
      joined,
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
   * A connection held open from `address` (a WebSocket from its upgrade, an SSE response
   * while it streams) until its `release`, or RATE_LIMITED when the address already holds
   * LIVE_CONNECTIONS_PER_ADDRESS. Its key, once known, counts it too (`identify`).
   */
  holdConnection(address: string): HeldConnection {
    const { maxConnectionsPerKey: perKey, maxConnectionsPerAddress: perAddress } = this.options;
    const atAddress = this.byAddress.get(address) ?? 0;
    if (perAddress > 0 && atAddress >= perAddress) {
      throw new GatewayError(
        'RATE_LIMITED',
        `This client address has ${perAddress} connections open, the most allowed (LIVE_CONNECTIONS_PER_ADDRESS)`,
      );
    }
    this.byAddress.set(address, atAddress + 1);
    this.connections++;
    let released = false;
    let ofKey: { keyId: string; holds: KeyHolds; connection: OpenConnection } | null = null;
    return {
      identify: (key, end) => {
        if (released || ofKey) return;
        const { keyId } = key.auth;
        if (this.endedKeys.has(keyId)) throw keyEnded();
        if (perKey > 0 && (this.byKey.get(keyId)?.connections.size ?? 0) >= perKey) {
          throw new GatewayError(
            'RATE_LIMITED',
            `This API key has ${perKey} connections open, the most allowed (LIVE_CONNECTIONS_PER_KEY)`,
          );
        }
        const holds = this.holdsOf(key);
        const connection: OpenConnection = { end };
        holds.connections.add(connection);
        ofKey = { keyId, holds, connection };
      },
      release: () => {
        if (released) return;
        released = true;
        this.connections--;
        const left = (this.byAddress.get(address) ?? 1) - 1;
        if (left > 0) this.byAddress.set(address, left);
        else this.byAddress.delete(address);
        if (ofKey) {
          ofKey.holds.connections.delete(ofKey.connection);
          this.forgetIfIdle(ofKey.keyId, ofKey.holds);
        }
      },
    };
  }

  /** The key's streams and connections, registered with its expiry and its recheck. */
  private holdsOf({ auth, keyStillValid }: ConnectionKey): KeyHolds {
    let holds = this.byKey.get(auth.keyId);
    if (!holds) {
      holds = {
        streams: new Set(),
        connections: new Set(),
        stillValid: () => keyStillValid(this.clock()),
        expiry: this.expiryTimer(auth.keyId, auth.expiresAt),
      };
      this.byKey.set(auth.keyId, holds);
    }
    return holds;
  }

  /** A key that holds nothing open any more is no longer rechecked nor timed. */
  private forgetIfIdle(keyId: string, holds: KeyHolds): void {
    if (holds.streams.size > 0 || holds.connections.size > 0) return;
    if (this.byKey.get(keyId) !== holds) return;
    this.byKey.delete(keyId);
    if (holds.expiry) clearTimeout(holds.expiry);
  }

  /**
   * Ends every open stream of a key, now, and closes its connections: the key was revoked
   * by this process (`revokeApiKey`), or it expired, or a recheck found it no longer valid.
   * What its streams had waiting is dropped, and an event being executed for it is not
   * delivered (`keyEnded`, asked by src/http/sharedEvents.ts before each delivery).
   */
  endKey(keyId: string): void {
    this.endedKeys.add(keyId);
    const holds = this.byKey.get(keyId);
    if (!holds) return;
    this.byKey.delete(keyId);
    if (holds.expiry) clearTimeout(holds.expiry);
    for (const stream of holds.streams) stream.end('revoked');
    for (const connection of holds.connections) connection.end(keyEnded());
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

  /**
   * Every key with open streams or connections, verified again; a key no longer valid ends
   * its streams and closes its connections.
   */
  private async recheckKeys(): Promise<void> {
    for (const [keyId, holds] of this.byKey) {
      let valid = true;
      try {
        valid = await holds.stillValid();
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
    for (const holds of this.byKey.values()) {
      if (holds.expiry) clearTimeout(holds.expiry);
    }
    this.watches.endAll('shutdown');
  }
}
