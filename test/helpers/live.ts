import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { type ExecutionResult, print } from 'graphql';
import { createClient as createSseClient } from 'graphql-sse';
import { createClient as createWsClient } from 'graphql-ws';
import WebSocket from 'ws';
import type { LiveStreams } from '../../src/http/liveStreams.js';
import type { GraphqlError } from './gateway.js';
import { until } from './until.js';

/**
 * A live subscription seen from its client: every result it received, in order, and
 * whether (and how) it ended. Built on the protocols' own client libraries: graphql-sse
 * (GraphQL over SSE, distinct connections: what Yoga serves) and graphql-ws.
 */
export interface LiveSubscription<T> {
  received: ExecutionResult<T>[];
  /** Waits until `count` results have arrived (the test's own timeout bounds the wait). */
  results(count: number): Promise<ExecutionResult<T>[]>;
  /** Settles when the server completed the stream (or the client library gave up: the error). */
  ended: Promise<{ error: unknown }>;
  close(): void;
}

type Subscribe = (sink: {
  next: (value: ExecutionResult<unknown>) => void;
  error: (error: unknown) => void;
  complete: () => void;
}) => () => void;

function follow<T>(subscribe: Subscribe): LiveSubscription<T> {
  const received: ExecutionResult<T>[] = [];
  const waiters: (() => void)[] = [];
  let settle!: (value: { error: unknown }) => void;
  const ended = new Promise<{ error: unknown }>((resolve) => {
    settle = resolve;
  });
  const wakeAll = () => {
    for (const wake of waiters.splice(0)) wake();
  };
  let isEnded = false;
  const stop = subscribe({
    next: (value) => {
      received.push(value as ExecutionResult<T>);
      wakeAll();
    },
    error: (error) => {
      isEnded = true;
      settle({ error });
      wakeAll();
    },
    complete: () => {
      isEnded = true;
      settle({ error: null });
      wakeAll();
    },
  });
  return {
    received,
    async results(count) {
      while (received.length < count) {
        if (isEnded)
          throw new Error(`the stream ended after ${received.length} of ${count} results`);
        await new Promise<void>((resolve) => waiters.push(resolve));
      }
      return received.slice(0, count);
    },
    ended,
    close: stop,
  };
}

/** GraphQL over SSE with graphql-sse's client, through `fetch` (in-process or over a listener). */
export function subscribeSse<T, V>(
  fetchFn: (request: Request) => Response | Promise<Response>,
  url: string,
  document: TypedDocumentNode<T, V>,
  variables: V,
  key: string | null,
): LiveSubscription<T> {
  const client = createSseClient({
    url,
    fetchFn: (input: RequestInfo | URL, init?: RequestInit) => fetchFn(new Request(input, init)),
    headers: key ? { authorization: `Bearer ${key}` } : {},
    retryAttempts: 0,
  });
  return follow<T>((sink) =>
    client.subscribe(
      { query: print(document), variables: variables as Record<string, unknown> },
      sink,
    ),
  );
}

/** GraphQL over WebSocket with graphql-ws's client; the key goes in connection_init. */
export function subscribeWs<T, V>(
  url: string,
  document: TypedDocumentNode<T, V>,
  variables: V,
  key: string | null,
  options: { origin?: string } = {},
): LiveSubscription<T> & { closed: Promise<{ code: number; reason: string }> } {
  let closedWith!: (value: { code: number; reason: string }) => void;
  const closed = new Promise<{ code: number; reason: string }>((resolve) => {
    closedWith = resolve;
  });
  class OriginWebSocket extends WebSocket {
    constructor(address: string, protocols?: string | string[]) {
      super(address, protocols, options.origin ? { origin: options.origin } : {});
    }
  }
  const client = createWsClient({
    url,
    webSocketImpl: OriginWebSocket,
    connectionParams: key ? { authorization: `Bearer ${key}` } : {},
    retryAttempts: 0,
    lazy: true,
    on: {
      closed: (event) => {
        const { code, reason } = event as { code: number; reason: string };
        closedWith({ code, reason: String(reason) });
      },
    },
  });
  const live = follow<T>((sink) =>
    client.subscribe(
      { query: print(document), variables: variables as Record<string, unknown> },
      sink,
    ),
  );
  return {
    ...live,
    close: () => {
      live.close();
      void client.dispose();
    },
    closed,
  };
}

/** The error codes of a result. */
export const codesOf = (result: ExecutionResult<unknown>) =>
  (result.errors ?? []).map((e) => (e as unknown as GraphqlError).extensions?.code);

/**
 * Waits until `live` has exactly `n` streams open, each following its dataset's feed, and
 * every watch has read where its feed ends (`watches.started()`): from then on a change
 * written reaches a stream that began "from now" (null cursor). Before it, a write can land
 * before the watch has read the end of the feed, and so count as part of "now", never
 * delivered. An observable moment, not a pause: on a loaded machine a watch's first reads
 * take however long they take. With `n` 0: every stream closed and every watch gone.
 */
export async function streamsFollowing(
  live: LiveStreams,
  n: number,
  options: { withinMs?: number } = {},
): Promise<void> {
  await until(
    () => live.counts().streams === n && live.watches.counts().followers === n,
    () =>
      `${n} live streams following their feeds (open: ${JSON.stringify(live.counts())}, watches: ${JSON.stringify(live.watches.counts())})`,
    options,
  );
  await live.watches.started();
}
