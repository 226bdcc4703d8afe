import { randomUUID } from 'node:crypto';
import { OpenAPIHono } from '@hono/zod-openapi';
import { type Span, SpanStatusCode, type Tracer } from '@opentelemetry/api';
import { shouldRenderGraphiQL } from 'graphql-yoga';
import type { Context, MiddlewareHandler, Next } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { Logger } from 'pino';
import { type RateLimiterAbstract, RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { type Clock, systemClock } from '../clock.js';
import { CONFIG_DEFAULTS, DEFAULT_WORKSPACE_CONCURRENCY } from '../config.js';
import { createRequestContext, type GatewayEnv } from '../context.js';
import { isJsonMediaType, readJsonBody } from '../domain/jsonBodies.js';
import type { Embedder } from '../embeddings/embedder.js';
import { ERROR_STATUS, type ErrorCode, maskError } from '../errors.js';
import { MeaningIndex } from '../recall/meaningIndex.js';
import {
  errorResponse,
  errorResponseFor,
  graphqlErrorBody,
  methodNotAllowed,
} from '../rest/errorBodies.js';
import { mountRestRoutes, REST_PATHS } from '../rest/routes.js';
import { errorShapeOf, MCP_PATH, surfaceOf } from '../rest/surfaces.js';
import { inSpan } from '../spans.js';
import { type Database, pingDatabase } from '../store/database.js';
import { removeEndedRateLimits, sharedRateLimiter } from '../store/rateLimits.js';
import { createReadCache } from '../store/readCache.js';
import { type KeyUseRecorder, keyUseRecorder } from '../store/workspaces.js';
import { mountApiDocs } from './apiDocs.js';
import { authenticateFirst } from './authenticateFirst.js';
import { type CorsOrigins, corsPolicy, originMayCall } from './cors.js';
import { mountExplorer } from './explorer.js';
import { graphiqlPage, mountGraphiql } from './graphiql.js';
import { heldWhileStreaming } from './heldConnections.js';
import { peerAddress, requestHostName } from './hosts.js';
import { mountLanding } from './landing.js';
import { type LiveStreamOptions, LiveStreams } from './liveStreams.js';
import type { Metrics } from './observability.js';
import { setResponseHeader } from './responseHeaders.js';
import { routeMethods } from './routeMethods.js';
import { trailingSlashRedirect } from './trailingSlash.js';
import { transportOf } from './transports.js';
import { workspaceLimiter } from './workspaceLimit.js';
import { createGraphqlYoga, DEFAULT_QUERY, type YogaOptions } from './yoga.js';

export interface GatewayOptions extends YogaOptions {
  database: Database;
  /** The embedding model (EMBEDDINGS=on): recall by meaning; absent or null: by words alone. */
  embedder?: Embedder | null;
  /** Where each request reads its one instant ("now"); default the system clock. */
  clock?: Clock;
  logger?: Logger;
  metrics?: Metrics;
  /** Requests per minute per API key; 0 or absent: no limit. */
  rateLimitPerMinute?: number;
  /**
   * Where the rate limits count (RATE_LIMIT_STORE): `database`, shared by every process of
   * the database (store/rateLimits.ts), or `process` (each its own; the default here).
   */
  rateLimitStore?: 'database' | 'process';
  /** How long a shared count may take before this process counts alone (RATE_LIMIT_STORE_TIMEOUT_MS). */
  rateLimitStoreTimeoutMs?: number;
  /**
   * Requests per minute per client address, checked before the key is looked up, so a
   * flood of made-up keys costs no database reads; 0 or absent: no limit.
   */
  rateLimitPerAddressPerMinute?: number;
  /** Largest request body, in bytes (BODY_LIMIT_BYTES). */
  bodyLimitBytes?: number;
  /** How long verified keys and existing datasets are remembered (0 or absent: not at all). */
  readCacheTtlMs?: number;
  /**
   * How often the keys' last use is written (KEY_USE_FLUSH_MS; default a minute); 0: only
   * when `flushKeyUse` is called (the server calls it at shutdown).
   */
  keyUseFlushMs?: number;
  /**
   * How long one request may spend on the database in all (DB_TIMEOUT_MS): every read
   * carries what is left as `maxTimeMS` (src/store/deadline.ts). Absent: unbounded.
   */
  dbTimeoutMs?: number;
  /**
   * Requests of one workspace running at once in this process, and how many more may wait
   * (src/http/workspaceLimit.ts); default the embedded store's (DEFAULT_WORKSPACE_CONCURRENCY,
   * WORKSPACE_QUEUE); 0 concurrency: no limit.
   */
  workspaceConcurrency?: number;
  workspaceQueue?: number;
  /**
   * Where spans go (src/http/tracing.ts; the server passes one when OTEL_EXPORTER_OTLP_ENDPOINT
   * is set); absent: no span is made and nothing is wrapped.
   */
  tracer?: Tracer;
  /** Origins whose pages may call GraphQL and REST (`*`: any); absent or empty: none. */
  corsOrigins?: CorsOrigins;
  /**
   * Host names requests may use; others are refused (403) before anything runs. Set in
   * embedded mode (DNS rebinding would otherwise reach a developer's gateway); absent: any.
   */
  allowedHosts?: readonly string[];
  /**
   * Live streams (docs/LIVE_UPDATES.md): LIVE_POLL_MS, LIVE_STREAMS, LIVE_STREAMS_PER_KEY,
   * LIVE_BUFFER; the keys of open streams are verified again every `readCacheTtlMs` (1 s
   * without a cache) unless `keyRecheckMs` says otherwise.
   */
  live?: Partial<LiveStreamOptions>;
}

/** How often a process removes the shared rate limits' ended windows. */
const RATE_LIMIT_SWEEP_MS = 10 * 60_000;

/** The live-stream limits' defaults: src/config.ts's. */
const LIVE_DEFAULTS = {
  pollMs: CONFIG_DEFAULTS.LIVE_POLL_MS,
  maxStreams: CONFIG_DEFAULTS.LIVE_STREAMS,
  maxStreamsPerKey: CONFIG_DEFAULTS.LIVE_STREAMS_PER_KEY,
  bufferLimit: CONFIG_DEFAULTS.LIVE_BUFFER,
  maxConnectionsPerKey: CONFIG_DEFAULTS.LIVE_CONNECTIONS_PER_KEY,
  maxConnectionsPerAddress: CONFIG_DEFAULTS.LIVE_CONNECTIONS_PER_ADDRESS,
};

/** The pages the gateway serves, with their assets (`/docs/*` also matches `/docs`). */
const PAGE_PATHS = ['/', '/graphiql/*', '/docs/*', '/explorer/*'];

/** Longest path and query accepted (414 past it); Node refuses more than 16 KiB of headers itself (431). */
export const MAX_URL_LENGTH = 8192;

/** An incoming x-request-id is honoured when it is a plausible id, else a new one is made. */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** An error answered by the edge itself, in the shape of the surface the request hit. */
function edgeError(c: Context, code: ErrorCode, message: string): Response {
  return errorResponse(c, errorShapeOf(c.req.path), code, message);
}

/**
 * The MCP surface (src/mcp/), loaded by the first request to /mcp rather than at start: its
 * SDK holds about 15 MB that a gateway no agent calls need not (docs/PERFORMANCE.md,
 * "Memory").
 */
let mcpSurface: Promise<
  [typeof import('../mcp/server.js'), typeof import('../mcp/batches.js')]
> | null = null;
const loadMcp = () =>
  (mcpSurface ??= Promise.all([import('../mcp/server.js'), import('../mcp/batches.js')]));

/**
 * A request refused for a limit (rate, fairness): the edge's error, except on MCP, where a
 * refused tool call is a tool result the model can act on (src/mcp/server.ts).
 */
function limitRefusal(c: Context<GatewayEnv>, message: string): Response | Promise<Response> {
  return c.req.path === MCP_PATH
    ? loadMcp().then(([mcp]) => mcp.mcpRefusal(c, 'RATE_LIMITED', message))
    : edgeError(c, 'RATE_LIMITED', message);
}

const clientAddress = (c: Context): string => peerAddress(c) ?? 'in-process';

type EdgeApp = OpenAPIHono<GatewayEnv>;
interface Lifecycle {
  shuttingDown: boolean;
  inFlight: number;
}

/**
 * The HTTP edge: one Hono app. It gives every request an id, builds the request context
 * once (auth, loaders, now), applies the body and rate limits, and routes to the GraphQL
 * endpoint, the REST compatibility routes (which run GraphQL operations with that same
 * context), the API docs, the metrics and the health probes. It logs one line per
 * request and exposes a WHATWG `fetch`, so tests drive it in-process without a listener.
 * Each step below is one job; the order of the calls is the order a request meets them.
 */
export function createGateway(options: GatewayOptions) {
  const app: EdgeApp = new OpenAPIHono<GatewayEnv>();
  const lifecycle: Lifecycle = { shuttingDown: false, inFlight: 0 };
  const live = openLiveStreams(options);
  const keyUse = keyUseRecorder(options.database.collections);
  const keyUseWrites = writeKeyUseEvery(options, keyUse);
  const rateLimitSweeps = sweepRateLimits(options);
  observeRequests(app, options, lifecycle);
  checkHosts(app, options);
  serveProbes(app, options, lifecycle);
  const edge = guardApiRoutes(app, options, live, keyUse);
  const restNotFound = mountRestRoutes(app);
  mountLanding(app, options);
  mountApiDocs(app);
  mountExplorer(app, options);
  mountGraphiql(app, options);
  serveMcpRoute(app, options, live);
  serveGraphql(app, options, live);
  answerErrors(app, options, restNotFound);
  return {
    app,
    /**
     * The one door (src/http/transports.ts): every request, whatever carried it, is
     * answered here, through the edge's admission pipeline. The executor is not exposed
     * otherwise. `env` is what an in-process transport says of the request (its name,
     * the connection it came on).
     */
    fetch: (request: Request, env?: GatewayEnv['Bindings']) => app.fetch(request, env),
    live,
    /** Which origins may open a WebSocket (CORS_ORIGINS): the upgrade's own check. */
    corsOrigins: options.corsOrigins ?? [],
    /** The per-address limit, which a WebSocket upgrade also counts against. */
    addressLimiter: edge.addressLimiter,
    /**
     * A connection's key, checked as the pipeline's first rule checks it: the context's
     * `auth`, or its `authProblem` ('missing'; 'invalid': unknown, revoked, expired or
     * malformed), and `keyStillValid` for the rechecks while the connection stays open.
     */
    connectionKey: (authorization: string | null) =>
      edge.contextOf(
        new Request('http://in-process/graphql', {
          headers: authorization ? { authorization } : {},
        }),
        randomUUID(),
      ),
    /**
     * Shutdown: readiness turns 503, responses ask clients to reconnect elsewhere, and every
     * live stream ends with SHUTTING_DOWN.
     */
    beginShutdown: () => {
      lifecycle.shuttingDown = true;
      live.close();
      keyUseWrites.stop();
      rateLimitSweeps.stop();
    },
    /** Writes when each key was last used, noted since the last write (the count of keys). */
    flushKeyUse: keyUseWrites.flush,
    shuttingDown: () => lifecycle.shuttingDown,
    inFlight: () => lifecycle.inFlight,
  };
}

/** The live streams every request's context is handed (`LIVE_*`, keys rechecked as cached). */
function openLiveStreams(options: GatewayOptions): LiveStreams {
  return new LiveStreams(options.database.collections, options.clock ?? systemClock, {
    ...LIVE_DEFAULTS,
    keyRecheckMs:
      options.readCacheTtlMs && options.readCacheTtlMs > 0 ? options.readCacheTtlMs : 1000,
    ...(options.logger
      ? {
          onReadError: (err: unknown) =>
            options.logger?.warn({ err }, 'live: reading a feed failed'),
        }
      : {}),
    ...options.live,
  });
}

/** A timer's work that runs until `stop` (none when `every` is 0); it holds no process open. */
function repeating(work: () => unknown, every: number): { stop: () => void } {
  const timer = every > 0 ? setInterval(work, every) : null;
  timer?.unref();
  return { stop: () => timer && clearInterval(timer) };
}

/** When each key was last used, written every KEY_USE_FLUSH_MS and on `flush`. */
function writeKeyUseEvery(options: GatewayOptions, keyUse: KeyUseRecorder) {
  const flush = () =>
    keyUse.flush().catch((error: unknown) => {
      options.logger?.warn({ err: error }, 'could not write when API keys were last used');
      return 0;
    });
  const every = options.keyUseFlushMs ?? CONFIG_DEFAULTS.KEY_USE_FLUSH_MS;
  return { flush, ...repeating(flush, every) };
}

/** Shared rate limits: their ended windows removed now and then (FerretDB has no TTL). */
function sweepRateLimits(options: GatewayOptions): { stop: () => void } {
  if (options.rateLimitStore !== 'database') return { stop: () => {} };
  const sweep = () =>
    removeEndedRateLimits(options.database, (options.clock ?? systemClock)()).catch(
      (error: unknown) => options.logger?.warn({ err: error }, 'rate limits not swept'),
    );
  return repeating(sweep, RATE_LIMIT_SWEEP_MS);
}

/** Request id, in-flight count, access log and request metrics, around everything. */
function observeRequests(
  app: EdgeApp,
  { logger, metrics, tracer }: GatewayOptions,
  lifecycle: Lifecycle,
) {
  app.use('*', async (c, next) => {
    const started = performance.now();
    const incoming = c.req.header('x-request-id');
    const requestId = incoming && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    c.set('requestId', requestId);
    lifecycle.inFlight++;
    try {
      if (tracer) await inSpan(tracer, `HTTP ${c.req.method}`, {}, (span) => traced(c, next, span));
      else await next();
    } finally {
      lifecycle.inFlight--;
      setResponseHeader(c, 'x-request-id', requestId);
      if (lifecycle.shuttingDown) setResponseHeader(c, 'connection', 'close');
      const ctx = c.get('requestContext');
      if (c.res.status === 401) announceBearer(c, ctx?.authProblem === 'invalid');
      const route = c.req.routePath && c.req.routePath !== '/*' ? c.req.routePath : 'unmatched';
      const transport = transportOf(c);
      const operation = ctx?.observed.operation ?? null;
      const seconds = (performance.now() - started) / 1000;
      metrics?.requests.inc({
        route,
        method: c.req.method,
        status: String(c.res.status),
        transport: transport ?? '',
      });
      metrics?.latency.observe(
        { route, method: c.req.method, operation: operation ?? '' },
        seconds,
      );
      logger?.info(
        {
          requestId,
          method: c.req.method,
          route,
          transport,
          operation,
          workspace: ctx?.auth?.workspace ?? null,
          status: c.res.status,
          latencyMs: Math.round(seconds * 10_000) / 10,
        },
        'request',
      );
      if (ctx?.observed.problems.length) {
        logger?.warn({ requestId, problems: ctx.observed.problems }, 'request answered despite');
      }
      // Every 5xx is an error of the gateway's to look at, with its request id; a client
      // that hung up before the answer is not.
      if (c.res.status >= 500 && !c.req.raw.signal.aborted) {
        logger?.error(
          {
            requestId,
            method: c.req.method,
            route,
            status: c.res.status,
            err: c.get('failure') ?? ctx?.observed.failure,
          },
          'request failed',
        );
      }
    }
  });
}

/**
 * A 401 says how to authenticate (RFC 9110 requires `WWW-Authenticate` on it; RFC 6750
 * gives a bearer API's form): `Bearer`, and `error="invalid_token"` when a key was sent
 * and refused (unknown, revoked, expired or malformed), whatever surface answered.
 */
function announceBearer(c: Context<GatewayEnv>, keyRefused: boolean): void {
  setResponseHeader(
    c,
    'www-authenticate',
    keyRefused
      ? 'Bearer realm="memory-gateway", error="invalid_token", error_description="The API key is not valid"'
      : 'Bearer realm="memory-gateway"',
  );
}

/**
 * The request's own span, the parent of everything it runs: named by method and route
 * (the route's pattern, never the path a client sent), with its status, request id and
 * GraphQL operation once answered.
 */
async function traced(c: Context<GatewayEnv>, next: () => Promise<void>, span: Span) {
  span.setAttributes({
    'http.request.method': c.req.method,
    'gateway.request_id': c.get('requestId'),
  });
  await next();
  const route = c.req.routePath && c.req.routePath !== '/*' ? c.req.routePath : 'unmatched';
  span.updateName(`${c.req.method} ${route}`);
  span.setAttributes({ 'http.route': route, 'http.response.status_code': c.res.status });
  const transport = transportOf(c);
  if (transport) span.setAttribute('gateway.transport', transport);
  const operation = c.get('requestContext')?.observed.operation;
  if (operation) span.setAttribute('graphql.operation.name', operation);
  if (c.res.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
}

/**
 * Embedded mode: only the allowed Host names. A page on a DNS name rebound to 127.0.0.1
 * is same-origin with the gateway in the browser's eyes; its Host is not.
 */
function checkHosts(app: EdgeApp, options: GatewayOptions) {
  if (!options.allowedHosts) return;
  const allowedHosts = new Set(options.allowedHosts);
  app.use('*', async (c, next) => {
    const name = requestHostName(c);
    if (!allowedHosts.has(name)) {
      return edgeError(c, 'FORBIDDEN', `Host "${name}" is not allowed; see ALLOWED_HOSTS`);
    }
    await next();
  });
}

/** Liveness, readiness (the database answers a ping) and the metrics page. */
function serveProbes(app: EdgeApp, { database, metrics }: GatewayOptions, lifecycle: Lifecycle) {
  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  app.get('/readyz', async (c) => {
    if (lifecycle.shuttingDown) return c.json({ status: 'shutting down' }, 503);
    try {
      await pingDatabase(database);
      return c.json({ status: 'ready' });
    } catch {
      return c.json({ status: 'database unavailable' }, 503);
    }
  });
  if (metrics) {
    app.get('/metrics', async (c) =>
      c.body(await metrics.registry.metrics(), 200, {
        'content-type': metrics.registry.contentType,
      }),
    );
  }
}

/**
 * What every route that reads or writes memory (GraphQL, REST and MCP) passes, cheapest
 * refusal first: CORS (preflights answered before anything else), MCP's Origin, the URL's
 * length, the per-address rate limit (before any key lookup), the body's size, then the
 * request context (the key verified, the clock read), the key's verdict (401 before any
 * rule about the operation), and the per-key rate limit.
 */
function guardApiRoutes(
  app: EdgeApp,
  options: GatewayOptions,
  live: LiveStreams,
  keyUse: KeyUseRecorder,
) {
  const { metrics } = options;
  const bodyLimitBytes = options.bodyLimitBytes ?? CONFIG_DEFAULTS.BODY_LIMIT_BYTES;
  const { keyLimiter, workspaces, addressLimiter } = apiLimits(options);
  const contextOf = requestContexts(options, live, keyUse, workspaces);
  const keyFirst = authenticateFirst(options);

  // The pages and their assets (GraphiQL's page is GET /graphql, below) count against the
  // client address's limit too: loading them costs more bytes than any API answer.
  if (addressLimiter) {
    for (const path of PAGE_PATHS) app.use(path, limitPerAddress(addressLimiter, metrics));
  }

  const cors = corsPolicy(options.corsOrigins ?? []);
  for (const path of ['/graphql', MCP_PATH, ...REST_PATHS]) {
    app.use(path, cors);
    // MCP asks servers to check Origin (DNS rebinding): a page may call only from the
    // gateway's own origin or one CORS_ORIGINS allows, as for a WebSocket.
    if (path === MCP_PATH) app.use(path, checkMcpOrigin(options.corsOrigins ?? []));
    app.use(path, refuseLongUrls);
    if (addressLimiter) app.use(path, limitPerAddress(addressLimiter, metrics));
    app.use(path, limitBodies(bodyLimitBytes));
    app.use(path, async (c, next) => {
      c.set('requestContext', await contextOf(c.req.raw, c.get('requestId')));
      await next();
    });
    // Without a valid key, 401 before any rule about the operation (src/http/authenticateFirst.ts).
    app.use(path, keyFirst);
    // A JSON body GraphQL or MCP cannot read (src/domain/jsonBodies.ts) is the client's mistake;
    // GraphQL's other media types are Yoga's to judge (MCP's the SDK's), and the REST routes
    // that take a body declare their own check (src/rest/surfaceApp.ts `jsonBody`).
    if (path === '/graphql' || path === MCP_PATH) app.use(path, refuseUnreadableJson);
    // An MCP batch's messages re-enter this pipeline one by one, so the limits below count
    // each message, not the batch (src/mcp/server.ts).
    if (path === MCP_PATH) {
      app.use(path, async (c, next) => (await loadMcp())[1].answerMcpBatches(app.fetch)(c, next));
    }
    if (keyLimiter) app.use(path, limitPerKey(keyLimiter, metrics));
    if (workspaces) app.use(path, takeWorkspaceSlot(workspaces, metrics));
  }
  return { addressLimiter, contextOf };
}

/**
 * The API's limits, each null when off: per API key and per client address (requests per
 * minute, counted in this process or shared through the database), and per workspace
 * (requests running at once in this process).
 */
function apiLimits(options: GatewayOptions) {
  const shared = options.rateLimitStore === 'database';
  const perMinute = (name: string, points: number | undefined): RateLimiterAbstract | null =>
    !points || points <= 0
      ? null
      : shared
        ? sharedRateLimiter(options.database, {
            name,
            points,
            durationSeconds: 60,
            timeoutMs:
              options.rateLimitStoreTimeoutMs ?? CONFIG_DEFAULTS.RATE_LIMIT_STORE_TIMEOUT_MS,
          })
        : new RateLimiterMemory({ points, duration: 60 });
  const keyLimiter = perMinute('key', options.rateLimitPerMinute);
  const concurrency = options.workspaceConcurrency ?? DEFAULT_WORKSPACE_CONCURRENCY.embedded;
  const workspaces =
    concurrency > 0
      ? workspaceLimiter({
          concurrency,
          queue: options.workspaceQueue ?? CONFIG_DEFAULTS.WORKSPACE_QUEUE,
        })
      : null;
  const addressLimiter = perMinute('address', options.rateLimitPerAddressPerMinute);
  return { keyLimiter, workspaces, addressLimiter };
}

type WorkspaceLimiter = ReturnType<typeof workspaceLimiter>;

/** The request context: built once per request, the same for GraphQL, REST and WebSocket. */
function requestContexts(
  options: GatewayOptions,
  live: LiveStreams,
  keyUse: KeyUseRecorder,
  workspaces: WorkspaceLimiter | null,
) {
  const { metrics } = options;
  const store = options.database.collections;
  const clock = options.clock ?? systemClock;
  const readCache = createReadCache(options.readCacheTtlMs ?? 0);
  // Recall by meaning: one vector index per process, derived from the store.
  const meaning = options.embedder
    ? { embedder: options.embedder, index: new MeaningIndex(() => systemClock().getTime()) }
    : null;
  return (request: Request, requestId: string) =>
    createRequestContext(request, store, {
      requestId,
      now: clock(),
      ...(options.dbTimeoutMs === undefined ? {} : { dbTimeoutMs: options.dbTimeoutMs }),
      readCache,
      meaning,
      live,
      keyUse,
      tracer: options.tracer ?? null,
      ...(workspaces ? { workspaceSlot: workspaces.queue } : {}),
      ...(metrics
        ? {
            onBatch: (loader: string, size: number) =>
              metrics.loaderBatches.observe({ loader }, size),
          }
        : {}),
    });
}

/** One point from `limiter` for `who`, or a 429 with Retry-After in the surface's shape. */
async function rateLimited(
  c: Context<GatewayEnv>,
  next: () => Promise<void>,
  limiter: RateLimiterAbstract,
  who: string,
  metrics: Metrics | undefined,
): Promise<Response | undefined> {
  try {
    await limiter.consume(who);
  } catch (rejection) {
    if (!(rejection instanceof RateLimiterRes)) throw rejection;
    c.header('Retry-After', String(Math.max(1, Math.ceil(rejection.msBeforeNext / 1000))));
    metrics?.errors.inc({ code: 'RATE_LIMITED' });
    return limitRefusal(c, 'Too many requests; retry after the time in Retry-After');
  }
  await next();
}

/** The per-address rate limit: before any key is looked up, so made-up keys cost no reads. */
function limitPerAddress(
  limiter: RateLimiterAbstract,
  metrics: Metrics | undefined,
): MiddlewareHandler<GatewayEnv> {
  return (c, next) => rateLimited(c, next, limiter, clientAddress(c), metrics);
}

/** The per-key rate limit, for a request with a valid key. */
function limitPerKey(
  limiter: RateLimiterAbstract,
  metrics: Metrics | undefined,
): MiddlewareHandler<GatewayEnv> {
  return (c, next) => {
    const auth = c.get('requestContext').auth;
    return auth ? rateLimited(c, next, limiter, auth.keyId, metrics) : next();
  };
}

/** MCP's Origin check: the gateway's own origin, or one CORS_ORIGINS allows. */
function checkMcpOrigin(corsOrigins: CorsOrigins): MiddlewareHandler<GatewayEnv> {
  return async (c, next) => {
    const origin = c.req.header('origin');
    if (!originMayCall(corsOrigins, origin, c.req.header('host'))) {
      return edgeError(
        c,
        'FORBIDDEN',
        `Origin "${origin}" may not call MCP here; see CORS_ORIGINS`,
      );
    }
    await next();
  };
}

/** A URL past MAX_URL_LENGTH: 414. */
async function refuseLongUrls(c: Context<GatewayEnv>, next: Next) {
  // Path and query: what a client sends on the request line (a fragment never is).
  const url = c.req.url;
  const start = url.indexOf('/', url.indexOf('//') + 2);
  const fragment = url.indexOf('#', start);
  if ((fragment < 0 ? url.length : fragment) - start > MAX_URL_LENGTH) {
    return edgeError(c, 'URI_TOO_LONG', `URL too long (at most ${MAX_URL_LENGTH} characters)`);
  }
  await next();
}

/** A body past BODY_LIMIT_BYTES: 413. */
function limitBodies(bodyLimitBytes: number): MiddlewareHandler<GatewayEnv> {
  const limitBody = bodyLimit({
    maxSize: bodyLimitBytes,
    onError: (c) => {
      // The rest of the body is not read: the connection cannot carry another request,
      // so the answer says it closes (a client must not reuse it).
      c.header('Connection', 'close');
      return edgeError(
        c,
        'PAYLOAD_TOO_LARGE',
        `Request body too large (at most ${bodyLimitBytes} bytes)`,
      );
    },
  });
  // GET and HEAD carry no body the gateway reads (the request stand-in drops one), so they
  // skip the check, which would build the whole WHATWG Request just to see none.
  return (c, next) =>
    c.req.method === 'GET' || c.req.method === 'HEAD' ? next() : limitBody(c, next);
}

/**
 * A JSON body that cannot be read: the client's mistake, 400 (after the key's 401). The
 * body is read here once: Hono keeps the bytes for MCP's reader, and the text goes in the
 * context for GraphQL's (src/http/yoga.ts), so neither reads it, nor a copy of it, again.
 */
async function refuseUnreadableJson(c: Context<GatewayEnv>, next: Next) {
  const contentType = c.req.header('content-type');
  const ctx = c.get('requestContext');
  if (c.req.method !== 'POST' || !ctx.auth) return next();
  if (!isJsonMediaType(contentType)) return next();
  const read = readJsonBody(contentType, await c.req.arrayBuffer(), false);
  if (read.problem) return edgeError(c, read.problem.code, read.problem.message);
  ctx.checkedBody = read.text;
  await next();
}

/** The workspace's fairness slot (src/http/workspaceLimit.ts), or a 429 when none comes. */
function takeWorkspaceSlot(
  workspaces: WorkspaceLimiter,
  metrics: Metrics | undefined,
): MiddlewareHandler<GatewayEnv> {
  return async (c, next) => {
    const ctx = c.get('requestContext');
    if (!ctx.auth) return next();
    const refused = await workspaces.run(ctx.auth.workspaceId, ctx.deadline, next);
    if (!refused) return;
    c.header('Retry-After', '1');
    metrics?.errors.inc({ code: 'RATE_LIMITED' });
    return limitRefusal(
      c,
      `This workspace has as many requests running as one gateway runs at once (${refused}); retry after the time in Retry-After`,
    );
  };
}

/**
 * The GraphQL endpoint. A request without a valid key reaches it only for GraphiQL's page
 * (when turned on; it holds no key) or an operation of introspection alone while
 * introspection is on (src/http/authenticateFirst.ts).
 */
function serveGraphql(app: EdgeApp, options: GatewayOptions, live: LiveStreams): void {
  const yoga = createGraphqlYoga(options);
  app.on(['GET', 'POST'], '/graphql', async (c) => {
    const ctx = c.get('requestContext');
    const page = options.graphiql !== false && shouldRenderGraphiQL(c.req.raw);
    if (page) {
      return graphiqlPage(c, {
        developmentKey: options.developmentKey,
        defaultQuery: DEFAULT_QUERY,
      });
    }
    const response = await yoga.fetch(c.req.raw, ctx);
    // Yoga refuses a media type it does not read with an empty 415: say so in GraphQL's shape.
    if (response.status === 415) {
      return edgeError(
        c,
        'UNSUPPORTED_MEDIA_TYPE',
        'Content-Type must be application/json (or application/graphql, multipart/form-data, application/x-www-form-urlencoded)',
      );
    }
    // An answer streamed over SSE holds its connection: counted, or refused past the caps.
    return heldWhileStreaming(c, live, response, options.metrics);
  });
}

/**
 * `/mcp` (src/mcp/server.ts), behind the pipeline. A listen's stream (MCP 2026-07-28) holds
 * its connection, counted or refused past the caps, as GraphQL's streams are.
 */
function serveMcpRoute(app: EdgeApp, options: GatewayOptions, live: LiveStreams): void {
  app.post(MCP_PATH, async (c) => {
    const [mcp] = await loadMcp();
    return heldWhileStreaming(c, live, await mcp.serveMcp(c, options), options.metrics);
  });
}

/**
 * Failures outside a route's own handler (building the context reads the key from the
 * database) and unknown paths, answered in the shape of the surface they hit.
 */
function answerErrors(
  app: EdgeApp,
  { metrics, corsOrigins }: GatewayOptions,
  restNotFound: ReturnType<typeof mountRestRoutes>,
) {
  // A route's path with a trailing slash: 308 to the path without it (src/http/trailingSlash.ts).
  const trailingSlash = trailingSlashRedirect(app, corsOrigins ?? []);
  const methodsAt = routeMethods(app);
  app.onError((error, c) => {
    const surface = surfaceOf(c.req.path);
    const masked = maskError(error);
    metrics?.errors.inc({ code: String(masked.extensions.code) });
    // Logged with the request's line once it is answered (observeRequests), if a 5xx.
    c.set('failure', error);
    if (surface) return errorResponseFor(c, surface, error);
    const code = String(masked.extensions.code);
    const status = code in ERROR_STATUS ? ERROR_STATUS[code as ErrorCode] : 500;
    return c.json(graphqlErrorBody(code, masked.message), status as ContentfulStatusCode);
  });
  app.notFound(async (c) => {
    const redirect = await trailingSlash(c);
    if (redirect) return redirect;
    const surface = surfaceOf(c.req.path);
    if (surface) return restNotFound(c, surface);
    // A path a route serves, asked with another method (PUT /graphql, GET /mcp).
    const allowed = methodsAt(c.req.path);
    if (allowed.length > 0) return methodNotAllowed(c, errorShapeOf(c.req.path), allowed);
    return errorResponse(c, 'plain', 'NOT_FOUND', 'Not found');
  });
}
