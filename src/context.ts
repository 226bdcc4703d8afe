import { randomUUID } from 'node:crypto';
import type { Tracer } from '@opentelemetry/api';
import type { AuthenticatedKey } from './domain/apiKey.js';
import { type ErrorScope, GatewayError } from './errors.js';
import { type BatchObserver, createLoaders, type Loaders } from './loaders.js';
import type { Meaning } from './recall/meaning.js';
import type { FeedPosition } from './store/changes.js';
import type { FeedEvent } from './store/changeWatch.js';
import type { Collections } from './store/collections.js';
import { withDeadline } from './store/deadline.js';
import type { ReadCache } from './store/readCache.js';
import type { Tenant } from './store/tenant.js';
import { authenticateApiKey, type KeyUseRecorder } from './store/workspaces.js';

/**
 * The per-request context, built once at the HTTP edge; the same object serves the
 * GraphQL endpoint and the REST adapters (which run GraphQL operations with it).
 */
export interface RequestContext {
  requestId: string;
  /** One instant for the whole request, so "now" means the same thing in every resolver. */
  now: Date;
  /**
   * The store, bounded by the request's database time (store/deadline.ts): every read
   * carries the time the request has left, nothing is sent once it is up.
   */
  store: Collections;
  /** When the request's database time ends (a `performance.now()` instant). */
  deadline: number;
  /** The gateway's short memory of verified keys and existing datasets (null: off). */
  readCache: ReadCache | null;
  /** Recall by meaning: the model and the process's vector index; null when EMBEDDINGS=off. */
  meaning: Meaning | null;
  /** The key's workspace and scopes; null when no valid key was sent. */
  auth: AuthenticatedKey | null;
  /** Why `auth` is null: no Authorization header, or a key that is not valid. */
  authProblem: 'missing' | 'invalid' | null;
  /** DataLoaders for the key's workspace; created lazily, once, for this request. */
  readonly loaders: Loaders;
  /**
   * What the edge reports about this request once it is answered (logs, metrics):
   * `problems` are failures the answer survived (a side write that did not land), logged as
   * a warning so none goes unseen; `failure` is what made a GraphQL answer fail unexpectedly
   * (the client sees the masked message; the request's error log line shows this).
   */
  observed: { operation: string | null; problems: string[]; failure?: unknown };
  /**
   * The request's JSON body as text, when the edge read and checked it (src/http/app.ts):
   * GraphQL parses it from here rather than reading the body a second time. Null: not read.
   */
  checkedBody: string | null;
  /**
   * Live streams (src/http/liveStreams.ts); null where none are served (a context built
   * outside the gateway's edge).
   */
  live: LiveUpdates | null;
  /** Aborted when the client goes (a live stream then ends at once). */
  signal: AbortSignal;
  /** Where this request's spans go (src/http/tracing.ts); null: tracing is off. */
  tracer: Tracer | null;
  /**
   * A live stream's next event is resolved as a request of its own: a new instant, a new
   * database deadline and new loaders (a stream lives far longer than one request); the
   * loaders given when every stream of the workspace that receives the event shares them.
   */
  beginEvent(now: Date, shared?: Loaders): void;
  /** Whether the key this request sent is still valid (not revoked, not expired at `now`), read from the database. */
  keyStillValid(now: Date): Promise<boolean>;
  /**
   * Runs a live stream's event execution in one of its workspace's fairness slots
   * (src/http/workspaceLimit.ts), waiting for one: a subscription holds no slot for its
   * life, but each event it executes takes one, like any query, whatever carries it.
   */
  inWorkspaceSlot<T>(work: () => Promise<T>): Promise<T>;
}

/**
 * Every way an operation reaches the gateway. Each one hands its requests to the edge's one
 * admission pipeline (src/http/app.ts): the key, the scopes, trusted documents, cost and
 * depth, the rate limits and the workspace's fairness slot are decided there, before
 * anything runs, and the answer leaves through the same masking, access log, metrics and
 * span. A transport only parses, calls `gateway.fetch` and shapes the answer; none reaches
 * the executor another way. `test/hardening/transportMatrix.test.ts` walks every rule over
 * every transport named here: a transport added without its column fails it.
 */
export const TRANSPORTS = [
  /** GraphQL over HTTP, POST (application/json and the other media types Yoga reads). */
  'graphql-post',
  /** GraphQL over HTTP, GET (queries only). */
  'graphql-get',
  /** GraphQL over server-sent events (a subscription's stream, or any answer asked as one). */
  'graphql-sse',
  /** GraphQL over WebSocket (graphql-ws): src/http/webSocket.ts. */
  'graphql-ws',
  /** The REST compatibility routes (src/rest/): named operations run in-process. */
  'rest',
  /** MCP's Streamable HTTP transport (src/mcp/): each tool a named operation run in-process. */
  'mcp',
] as const;

export type Transport = (typeof TRANSPORTS)[number];

/**
 * What a request asks of the gateway's live streams: the edge's LiveStreams
 * (src/http/liveStreams.ts) serves it, and is handed to each request's context.
 */
export interface LiveUpdates {
  /**
   * A stream of the dataset's changes after `after` (null: from now) for the request's key.
   * `joined` settles once its first `next()` has fixed where "now" is in the feed: what is
   * committed after that is the stream's.
   */
  follow(
    ctx: AuthenticatedContext,
    tenant: Tenant,
    after: FeedPosition | null,
  ): AsyncIterableIterator<FeedEvent> & { joined: Promise<void> };
  /** Ends every open stream of a key, now (it was revoked, or it expired). */
  endKey(keyId: string): void;
  /** Whether this process has ended the key's streams. */
  keyEnded(keyId: string | undefined): boolean;
}

/** Hono's per-request variables at the edge: the request context, built once, and the request id. */
export type GatewayEnv = {
  /**
   * What an in-process transport tells the edge about a request it hands in (the
   * WebSocket transport: `{ transport: 'graphql-ws' }`); requests from the listener carry
   * the Node adapter's own bindings, so no client can claim a transport.
   */
  Bindings: {
    transport?: Transport;
    /** The connection the request came on (the Node adapter's binding; the peer's address). */
    incoming?: { socket: { remoteAddress?: string } };
  };
  Variables: {
    requestContext: RequestContext;
    requestId: string;
    /** What made the edge answer 5xx, for the request's error log line. */
    failure?: unknown;
  };
};

const BEARER = /^Bearer\s+(\S+)\s*$/i;

export async function createRequestContext(
  request: Request,
  store: Collections,
  options: {
    requestId?: string;
    /** The request's instant, read once from the gateway's clock. */
    now: Date;
    /** How long the request may spend on the database in all (DB_TIMEOUT_MS; absent: unbounded). */
    dbTimeoutMs?: number;
    onBatch?: BatchObserver;
    readCache?: ReadCache | null;
    meaning?: Meaning | null;
    live?: LiveUpdates | null;
    /** Where a verified key's use is noted (the gateway's; absent: not noted). */
    keyUse?: KeyUseRecorder;
    tracer?: Tracer | null;
    /** The gateway's fairness slots (absent: events run at once). */
    workspaceSlot?: <T>(workspaceId: string, work: () => Promise<T>) => Promise<T>;
  },
): Promise<RequestContext> {
  const readCache = options.readCache ?? null;
  const bounds = () => {
    const deadline =
      options.dbTimeoutMs === undefined
        ? Number.POSITIVE_INFINITY
        : performance.now() + options.dbTimeoutMs;
    return { deadline, store: Number.isFinite(deadline) ? withDeadline(store, deadline) : store };
  };
  const first = bounds();
  const header = request.headers.get('authorization');
  const key = header ? BEARER.exec(header)?.[1] : undefined;
  const auth = key ? await authenticateApiKey(first.store, key, readCache, options.now) : null;
  let loaders: Loaders | null = null;
  const context: RequestContext = {
    requestId: options.requestId ?? randomUUID(),
    now: options.now,
    store: first.store,
    deadline: first.deadline,
    readCache,
    meaning: options.meaning ?? null,
    auth,
    authProblem: auth ? null : header ? 'invalid' : 'missing',
    get loaders() {
      if (!auth) throw unauthenticated(header ? 'invalid' : 'missing');
      const self = this as RequestContext;
      loaders ??= createLoaders(self.store, auth.workspaceId, self.now, {
        readCache,
        onBatch: options.onBatch,
        tracer: options.tracer ?? null,
      });
      return loaders;
    },
    observed: { operation: null, problems: [] },
    checkedBody: null,
    live: options.live ?? null,
    tracer: options.tracer ?? null,
    // Read when a stream or Yoga asks: on Node, the edge's request is a lightweight stand-in
    // that builds a whole WHATWG Request (and its AbortController) the first time its
    // signal or body is read, which a REST GET never needs.
    get signal() {
      return request.signal;
    },
    // `this`, not the object built here: the server adapter hands GraphQL a copy of it
    // (its properties, getters included), and the copy is what resolvers read.
    beginEvent(this: RequestContext, now: Date, shared?: Loaders) {
      const next = bounds();
      this.now = now;
      this.store = next.store;
      this.deadline = next.deadline;
      loaders = shared ?? null;
    },
    keyStillValid: async (now: Date) =>
      key !== undefined && (await authenticateApiKey(store, key, null, now)) !== null,
    inWorkspaceSlot: (work) =>
      auth && options.workspaceSlot ? options.workspaceSlot(auth.workspaceId, work) : work(),
  };
  // When the key was last used: noted in memory, written later by the gateway (no I/O here).
  if (auth) options.keyUse?.note(auth, options.now);
  return context;
}

export function unauthenticated(
  problem: 'missing' | 'invalid' | null,
  scope: ErrorScope = 'field',
): GatewayError {
  return new GatewayError(
    'UNAUTHENTICATED',
    problem === 'invalid'
      ? 'The API key is not valid (unknown, revoked or malformed)'
      : 'Missing API key: send Authorization: Bearer <key>',
    undefined,
    scope,
  );
}

/**
 * The context of a request with a valid key: what a root field declared with
 * `t.withAuth(...)` gets (Pothos's AuthContexts, src/schema/builder.ts), so its resolver
 * reads `ctx.auth` with no check of its own.
 */
export type AuthenticatedContext = RequestContext & { auth: AuthenticatedKey };

/** The tenant a root field's store call acts for: the key's workspace and the dataset asked for. */
export function tenantOf(ctx: AuthenticatedContext, dataset: string): Tenant {
  return { workspaceId: ctx.auth.workspaceId, dataset };
}
