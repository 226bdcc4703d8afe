import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import {
  type ExecutionArgs,
  type ExecutionResult,
  GraphQLError,
  type GraphQLFormattedError,
  parse,
} from 'graphql';
import type { Context as ConnectionContext, SubscribePayload } from 'graphql-ws';
import { useServer } from 'graphql-ws/use/ws';
import { type WebSocket, WebSocketServer } from 'ws';
import { CONFIG_DEFAULTS } from '../config.js';
import { unauthenticated } from '../context.js';
import { type ErrorCode, GatewayError } from '../errors.js';
import type { createGateway } from './app.js';
import type { HeldConnection } from './liveStreams.js';
import { admitUpgrade } from './webSocketAdmission.js';

/**
 * GraphQL over WebSocket (the graphql-ws protocol Apollo Client, urql and Relay speak) on
 * /graphql, beside GraphQL over HTTP and SSE on the same path. A transport, nothing more
 * (src/http/transports.ts): at the upgrade, what a connection needs before it exists (the
 * Host rule, the Origin: a browser's WebSocket is not subject to CORS, so the gateway checks
 * it against CORS_ORIGINS or its own pages; the per-address rate limit; shutdown); at
 * `connection_init`, the key (sent as `{ "authorization": "Bearer …" }`, since browsers
 * cannot set headers on a WebSocket); then each operation is handed whole to the gateway's
 * one door, `gateway.fetch`, as a GraphQL-over-HTTP request with the connection's key, and
 * its answer is shaped into graphql-ws messages. So every rule of the admission pipeline
 * (key, scopes, trusted documents, cost and depth, rate limits, the workspace's fairness
 * slot, masking, the access log, metrics, the span) holds here exactly as over HTTP.
 * Each connection is held open against its client address from the upgrade, and against its
 * key from `connection_init` (LIVE_CONNECTIONS_PER_ADDRESS, LIVE_CONNECTIONS_PER_KEY), until
 * it closes; the gateway closes it when its key is revoked or expires.
 */

type Gateway = ReturnType<typeof createGateway>;

export interface WebSocketOptions {
  /** Host names allowed (embedded mode), as the HTTP edge's ALLOWED_HOSTS; absent: any. */
  allowedHosts?: readonly string[];
  /** Largest message accepted, in bytes (the HTTP body limit). */
  maxPayloadBytes?: number;
  /** How often the server pings each connection (ws ping frames), so proxies keep it. */
  keepAliveMs?: number;
}

/**
 * The close code of each refusal a connection meets (docs/LIVE_UPDATES.md), graphql-ws's
 * codes; the reason is the gateway's code, then its message.
 */
const CLOSE_CODES: Partial<Record<ErrorCode, number>> = {
  /** graphql-ws's Forbidden: no valid key at connection_init, or the key ended since. */
  UNAUTHENTICATED: 4403,
  /** graphql-ws's "too many" (its own use: a second connection_init): a connection cap. */
  RATE_LIMITED: 4429,
};

type ClosableSocket = { close: (code: number, reason: string) => void };

function closeRefused(socket: ClosableSocket, refusal: GatewayError): void {
  // A close reason is at most 123 bytes.
  socket.close(
    CLOSE_CODES[refusal.code] ?? 4500,
    `${refusal.code}: ${refusal.message}`.slice(0, 123),
  );
}

/** Waits until `done` holds, looking every 20 ms, for at most `withinMs`. */
async function settled(done: () => boolean, withinMs: number): Promise<void> {
  for (let waited = 0; !done() && waited < withinMs; waited += 20) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** How long the streams' last events (SHUTTING_DOWN, UNAUTHENTICATED) get before their socket closes. */
const LAST_EVENTS_MS = 1000;

/** The `Authorization` value a connection_init payload carries (either spelling). */
function authorizationOf(params: Readonly<Record<string, unknown>> | undefined): string | null {
  const value = params?.authorization ?? params?.Authorization;
  return typeof value === 'string' ? value : null;
}

/**
 * What the pipeline answered one operation, as graphql-ws needs it: refused before it ran
 * (the errors, sent as an `error` message), one result, or a stream of results.
 */
type Answer =
  | { refused: GraphQLFormattedError[] }
  | { result: ExecutionResult }
  | { results: AsyncIterableIterator<ExecutionResult> };

/** The formatted errors the pipeline answered, kept for the `error` message as they were. */
const formatted = new WeakMap<GraphQLError, GraphQLFormattedError>();

function refusedWith(errors: GraphQLFormattedError[]): GraphQLError[] {
  return errors.map((error) => {
    const asError = new GraphQLError(error.message, {
      ...(error.extensions ? { extensions: error.extensions } : {}),
    });
    formatted.set(asError, error);
    return asError;
  });
}

/**
 * An answer's SSE stream, event by event: `next` results until `complete`. An iterator
 * rather than an async generator, so that `return()` (the client completed the operation,
 * or left) stops the stream at once, even while a read is waiting for the next event.
 */
function serverSentResults(
  body: ReadableStream<Uint8Array>,
  stop: () => void,
): AsyncIterableIterator<ExecutionResult> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const ready: ExecutionResult[] = [];
  let buffered = '';
  let ended = false;
  const end = async (): Promise<IteratorReturnResult<undefined>> => {
    if (!ended) {
      ended = true;
      stop();
      await reader.cancel().catch(() => {});
    }
    return { done: true, value: undefined };
  };
  /** Parses the complete events buffered; false once the stream said it is complete. */
  const parseEvents = (): boolean => {
    for (let cut = buffered.indexOf('\n\n'); cut >= 0; cut = buffered.indexOf('\n\n')) {
      const lines = buffered.slice(0, cut).split('\n');
      buffered = buffered.slice(cut + 2);
      const kind = lines
        .find((line) => line.startsWith('event:'))
        ?.slice(6)
        .trim();
      if (kind === 'complete') return false;
      if (kind !== 'next') continue;
      const data = lines
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).trimStart())
        .join('\n');
      ready.push(JSON.parse(data) as ExecutionResult);
    }
    return true;
  };
  return {
    [Symbol.asyncIterator]() {
      return this;
    },
    async next() {
      for (;;) {
        const result = ready.shift();
        if (result) return { done: false, value: result };
        if (ended) return { done: true, value: undefined };
        const { value, done } = await reader.read().catch(() => ({ done: true, value: undefined }));
        if (done) return end();
        buffered += decoder.decode(value, { stream: true });
        if (!parseEvents()) {
          // What came before `complete` is still delivered.
          ended = true;
          stop();
        }
      }
    },
    return: end,
  };
}

/** Documents that only tell graphql-ws how to deliver an answer already made (one, or a stream). */
const ONE_RESULT = parse('query Answered { __typename }');
const RESULT_STREAM = parse('subscription Answered { __typename }');

export function serveGraphqlWebSocket(
  server: Server,
  gateway: Gateway,
  options: WebSocketOptions = {},
): { close: () => Promise<void> } {
  const allowedHosts = options.allowedHosts ? new Set(options.allowedHosts) : null;
  const sockets = new WebSocketServer({
    noServer: true,
    maxPayload: options.maxPayloadBytes ?? CONFIG_DEFAULTS.BODY_LIMIT_BYTES,
  });
  const held = new WeakMap<object, HeldConnection>();
  /** An upgraded socket holds its place from now until it closes; past the cap, it is closed. */
  const connected = (ws: WebSocket, request: IncomingMessage) => {
    let connection: HeldConnection;
    try {
      connection = gateway.live.holdConnection(request.socket.remoteAddress ?? 'unknown');
    } catch (refusal) {
      if (!(refusal instanceof GatewayError)) throw refusal;
      closeRefused(ws, refusal);
      return;
    }
    held.set(ws, connection);
    ws.once('close', connection.release);
    sockets.emit('connection', ws, request);
  };
  const upgrade = (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    admitUpgrade(request, socket, { gateway, allowedHosts }, () =>
      sockets.handleUpgrade(request, socket, head, (ws) => connected(ws, request)),
    ).catch(() => socket.destroy());
  };
  server.on('upgrade', upgrade);
  const operations = serveOperations(sockets, gateway, options.keepAliveMs ?? 12_000, held);

  return {
    /** Shutdown: every connection is closed as "going away" (1001), so clients reconnect elsewhere. */
    close: async () => {
      server.off('upgrade', upgrade);
      // The streams' SHUTTING_DOWN events go out first (beginShutdown ended them), briefly.
      await settled(() => gateway.live.counts().streams === 0, LAST_EVENTS_MS);
      for (const client of sockets.clients) client.close(1001, 'Going away');
      await operations.dispose();
    },
  };
}

/**
 * graphql-ws on the admitted connections: the key at `connection_init`, then each operation
 * answered by the gateway's one door and delivered as graphql-ws messages.
 */
function serveOperations(
  sockets: WebSocketServer,
  gateway: Gateway,
  keepAliveMs: number,
  held: WeakMap<object, HeldConnection>,
) {
  const running = runningOperations();
  return useServer<Record<string, unknown>, Extra>(
    {
      connectionInitWaitTimeout: 10_000,
      onConnect: (ctx) => keyAccepted(gateway, ctx, held.get(ctx.extra.socket)),
      onSubscribe: async (ctx, id, payload) => {
        const controller = running.start(ctx.extra.socket, id);
        const answered = await answerOperation(
          gateway,
          ctx.extra.request,
          authorizationOf(ctx.connectionParams),
          payload,
          controller.signal,
          running.stopOf(ctx.extra.socket, id),
        );
        if ('refused' in answered) return refusedWith(answered.refused);
        return {
          schema: undefined as never,
          document: 'results' in answered ? RESULT_STREAM : ONE_RESULT,
          rootValue: answered,
        } satisfies Partial<ExecutionArgs> as ExecutionArgs;
      },
      // The answer is already made: graphql-ws only delivers it.
      execute: (args) => (args.rootValue as { result: ExecutionResult }).result,
      subscribe: (args) =>
        (args.rootValue as { results: AsyncIterableIterator<ExecutionResult> }).results,
      // Results and errors go out exactly as the pipeline answered them (masked there).
      onNext: (_ctx, _id, _payload, _args, result) => result as never,
      onError: (_ctx, _id, _payload, errors) =>
        errors.map((error) => formatted.get(error) ?? error.toJSON()),
      onComplete: (ctx, id) => running.stopOf(ctx.extra.socket, id)(),
    },
    sockets,
    keepAliveMs,
  );
}

type Extra = { request: IncomingMessage; socket: object };

/**
 * At `connection_init`: a connection without a valid key is closed at once (4403, with the
 * reason), before it subscribes, and one whose key holds LIVE_CONNECTIONS_PER_KEY
 * connections already with 4429; each operation is still decided on its own by the
 * pipeline. An accepted connection is closed (4403) when its key ends (revoked, expired,
 * or so found by a recheck), once its streams have said so (their UNAUTHENTICATED event).
 */
async function keyAccepted(
  gateway: Gateway,
  ctx: ConnectionContext<Record<string, unknown>, Extra>,
  held: HeldConnection | undefined,
): Promise<boolean> {
  const socket = ctx.extra.socket as ClosableSocket;
  const key = await gateway.connectionKey(authorizationOf(ctx.connectionParams));
  try {
    if (!key.auth) throw unauthenticated(key.authProblem);
    held?.identify({ auth: key.auth, keyStillValid: key.keyStillValid }, async (why) => {
      await settled(() => Object.keys(ctx.subscriptions).length === 0, LAST_EVENTS_MS);
      closeRefused(socket, why);
    });
    return true;
  } catch (refusal) {
    if (!(refusal instanceof GatewayError)) throw refusal;
    closeRefused(socket, refusal);
    return false;
  }
}

/** Each running operation's way to stop it (a completed one ends its stream in the gateway). */
function runningOperations() {
  const running = new WeakMap<object, Map<string, AbortController>>();
  return {
    /** The controller of an operation starting on `socket`, kept until it stops. */
    start(socket: object, id: string): AbortController {
      const controller = new AbortController();
      let ofSocket = running.get(socket);
      if (!ofSocket) {
        ofSocket = new Map();
        running.set(socket, ofSocket);
      }
      ofSocket.set(id, controller);
      return controller;
    },
    stopOf: (socket: object, id: string) => () => {
      running.get(socket)?.get(id)?.abort();
      running.get(socket)?.delete(id);
    },
  };
}

/**
 * One operation through the gateway's one door: a GraphQL-over-HTTP request with the
 * connection's key, on the connection's own socket (its address counts for the limits).
 */
async function answerOperation(
  gateway: Gateway,
  upgrade: IncomingMessage,
  authorization: string | null,
  payload: SubscribePayload & { documentId?: unknown },
  signal: AbortSignal,
  stop: () => void,
): Promise<Answer> {
  const host = upgrade.headers.host;
  const base = host && URL.canParse(`http://${host}/`) ? `http://${host}` : 'http://localhost';
  const response = await gateway.fetch(
    new Request(`${base}/graphql`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        // One result as JSON, with GraphQL over HTTP's statuses; a stream as SSE.
        accept: 'application/graphql-response+json, text/event-stream;q=0.9',
        ...(authorization ? { authorization } : {}),
      },
      body: JSON.stringify({
        query: payload.query,
        operationName: payload.operationName ?? null,
        variables: payload.variables ?? null,
        extensions: payload.extensions ?? null,
        ...(payload.documentId === undefined ? {} : { documentId: payload.documentId }),
      }),
      signal,
    }),
    { transport: 'graphql-ws', incoming: upgrade },
  );
  if (response.headers.get('content-type')?.startsWith('text/event-stream') && response.body) {
    return { results: serverSentResults(response.body, stop) };
  }
  const body = (await response.json()) as ExecutionResult & { errors?: GraphQLFormattedError[] };
  stop();
  // No `data`: refused before anything ran (GraphQL over HTTP's request errors).
  if (!('data' in body)) return { refused: body.errors ?? [] };
  return { result: body };
}
