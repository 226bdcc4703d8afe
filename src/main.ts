/*
 * `npm start`: loads the configuration, opens the store (MONGODB_URI, or the embedded
 * FerretDB under DATA_DIR with demo data on first start), serves the gateway, and on
 * SIGINT / SIGTERM shuts down in order: stop accepting connections, let in-flight
 * requests finish (bounded by SHUTDOWN_TIMEOUT_MS), close the database client, stop the
 * embedded database.
 */

import type { Server as HttpServer } from 'node:http';
import { Server } from 'node:net';
import type { Logger } from 'pino';
import { parseCommandLine } from './cli/help.js';
import { systemClock } from './clock.js';
import {
  CONFIG_DEFAULTS,
  type Config,
  DEFAULT_WORKSPACE_CONCURRENCY,
  exitOnStartupFailure,
  loadConfig,
} from './config.js';
import {
  DEMO_DATASET,
  developmentKeyFile,
  ensureDevelopmentData,
  workspacesBeforeDemo,
} from './demo/seed.js';
import { reportEmbeddedSize } from './embedded/sizeNotice.js';
import { createGateway, type GatewayOptions } from './http/app.js';
import {
  createLogger,
  createMetrics,
  type Metrics,
  observeDatabase,
} from './http/observability.js';
import { listen, whenListening } from './http/server.js';
import { traceDatabase } from './http/tracing.js';
import { serveGraphqlWebSocket } from './http/webSocket.js';
import { type OpenedStore, openStore } from './openStore.js';
import { databaseTimeouts } from './store/database.js';
import { embedPending } from './store/embeddings.js';

const say = (line: string) => process.stdout.write(`${line}\n`);

// Given here, not read from this file's doc comment: the build (dist/main.js) drops comments.
const USAGE = `Usage: npm start

Serves the gateway. It takes no options: it is configured by environment variables
(MONGODB_URI and MONGODB_DB for a MongoDB; otherwise the embedded FerretDB under DATA_DIR;
HOST, PORT, LOG_LEVEL, and the rest), every one listed in docs/CONFIGURATION.md.`;

// Before the configuration is read or anything opened: --help, or an argument it takes none of
// (one named after a setting, `--port 5000`, is answered with `PORT=5000 npm start`).
parseCommandLine(import.meta.url, { options: {} }, USAGE, {
  command: 'npm start',
  variables: Object.keys(CONFIG_DEFAULTS),
});

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.LOG_LEVEL);
  const metrics = createMetrics();
  const tracing = await startTracingWhenConfigured(config);
  const store = await openObservedStore(config, metrics, tracing);
  const demo = await loadDemoOnFirstStart(config, store);
  const gateway = createGateway(gatewayOptions(config, store, demo, { logger, metrics, tracing }));
  const server = listen(gateway.fetch, listenOptions(config), (info) => {
    const base = `http://${info.family === 'IPv6' ? `[${info.address}]` : info.address}:${info.port}`;
    printBanner(base, config, store, demo);
    countEmbeddedStoreLater(store, logger);
  });
  await listeningOrStoreClosed(server, config, store);
  const webSocket = serveGraphqlWebSocket(server, gateway, {
    ...embeddedHostCheck(config, store),
    maxPayloadBytes: config.BODY_LIMIT_BYTES,
  });
  shutDownOnSignals({ config, logger, gateway, webSocket, server, store, tracing });
}

/** Tracing only with an endpoint to send spans to: otherwise nothing is installed. */
async function startTracingWhenConfigured(config: Config) {
  return config.OTEL_EXPORTER_OTLP_ENDPOINT
    ? (await import('./http/tracingExport.js')).startTracing(config.OTEL_SERVICE_NAME)
    : null;
}

type Tracing = Awaited<ReturnType<typeof startTracingWhenConfigured>>;

/** The store, its commands counted (DB_COMMAND_METRICS) and traced when asked. */
async function openObservedStore(
  config: Config,
  metrics: Metrics,
  tracing: Tracing,
): Promise<OpenedStore> {
  const store = await openStore(config, 'server', (line) => process.stderr.write(`${line}\n`), {
    // Fail fast when the database is unreachable: requests get a 503 within this bound
    // instead of hanging; the driver reconnects by itself when the database returns.
    ...databaseTimeouts(config.DB_TIMEOUT_MS),
    monitorCommands: config.DB_COMMAND_METRICS || tracing !== null,
  });
  if (config.DB_COMMAND_METRICS) observeDatabase(store.database.client, metrics);
  if (tracing) traceDatabase(store.database.client, tracing.tracer);
  return store;
}

/** What the embedded store's first start gave: the development key, or what kept the demo out. */
interface FirstStart {
  devKey: string | null;
  before: { names: string[]; total: number } | null;
}

async function loadDemoOnFirstStart(config: Config, store: OpenedStore): Promise<FirstStart> {
  const devKey = store.embedded
    ? await ensureDevelopmentData(store.database.collections, config.DATA_DIR, systemClock())
    : null;
  // Said in the banner: a newcomer whose store was not empty on first start (a key made
  // with the CLI before `npm start`) otherwise gets no key and no demo, and no reason.
  const before =
    store.embedded && !devKey ? await workspacesBeforeDemo(store.database.collections) : null;

  // The demo's vectors now, not at its first recall.
  if (devKey && store.embedder) {
    await embedPending(store.database.collections, store.embedder, null);
  }
  return { devKey, before };
}

/** The gateway's settings: the configuration's, and the defaults of the store it runs on. */
function gatewayOptions(
  config: Config,
  store: OpenedStore,
  { devKey }: FirstStart,
  { logger, metrics, tracing }: { logger: Logger; metrics: Metrics; tracing: Tracing },
): GatewayOptions {
  return {
    database: store.database,
    embedder: store.embedder,
    logger,
    metrics,
    graphiql: config.GRAPHIQL,
    introspection: config.GRAPHQL_INTROSPECTION,
    rateLimitPerMinute: config.RATE_LIMIT_PER_MINUTE,
    rateLimitPerAddressPerMinute: config.RATE_LIMIT_PER_ADDRESS_PER_MINUTE,
    rateLimitStore: config.RATE_LIMIT_STORE ?? (store.embedded ? 'process' : 'database'),
    rateLimitStoreTimeoutMs: config.RATE_LIMIT_STORE_TIMEOUT_MS,
    bodyLimitBytes: config.BODY_LIMIT_BYTES,
    readCacheTtlMs: config.CACHE_TTL_MS,
    keyUseFlushMs: config.KEY_USE_FLUSH_MS,
    trustedDocuments: config.TRUSTED_DOCUMENTS,
    ...(tracing ? { tracer: tracing.tracer } : {}),
    dbTimeoutMs: config.DB_TIMEOUT_MS,
    workspaceConcurrency:
      config.WORKSPACE_CONCURRENCY ??
      DEFAULT_WORKSPACE_CONCURRENCY[store.embedded ? 'embedded' : 'mongodb'],
    workspaceQueue: config.WORKSPACE_QUEUE,
    corsOrigins: config.CORS_ORIGINS,
    live: {
      pollMs: config.LIVE_POLL_MS,
      maxStreams: config.LIVE_STREAMS,
      maxStreamsPerKey: config.LIVE_STREAMS_PER_KEY,
      bufferLimit: config.LIVE_BUFFER,
      maxConnectionsPerKey: config.LIVE_CONNECTIONS_PER_KEY,
      maxConnectionsPerAddress: config.LIVE_CONNECTIONS_PER_ADDRESS,
    },
    ...embeddedHostCheck(config, store),
    // Never in production, whatever the store: a page that carries a key is a development aid.
    ...(devKey && config.NODE_ENV !== 'production' ? { developmentKey: devKey } : {}),
  };
}

/**
 * The Host check (HTTP and WebSocket) guards the development key and the embedded store
 * from DNS rebinding; a MONGODB_URI deployment sits behind its own proxy and names.
 */
function embeddedHostCheck(config: Config, store: OpenedStore): { allowedHosts?: string[] } {
  return store.embedded && config.ALLOWED_HOSTS !== '*'
    ? { allowedHosts: config.ALLOWED_HOSTS }
    : {};
}

/** Where the server listens, and how long a client may take (src/http/server.ts). */
function listenOptions(config: Config) {
  return {
    port: config.PORT,
    hostname: config.HOST,
    timeouts: {
      headersTimeoutMs: config.HEADERS_TIMEOUT_MS,
      requestTimeoutMs: config.REQUEST_TIMEOUT_MS,
      keepAliveTimeoutMs: config.KEEP_ALIVE_TIMEOUT_MS,
    },
  };
}

/** The start-up banner: where everything is, which database, and a key to try it with. */
function printBanner(base: string, config: Config, store: OpenedStore, demo: FirstStart): void {
  say(`Memory gateway listening on ${base}`);
  say(`  Start page:         ${base}/  (links to everything below)`);
  say(`  GraphQL / GraphiQL: ${base}/graphql${config.GRAPHIQL ? '' : ' (GraphiQL off)'}`);
  say(`  REST:               ${base}/v1/memory/semantic/...  ${base}/api/memories`);
  say(`  MCP (agents):       ${base}/mcp  (docs/MCP.md)`);
  say(`  Memory explorer:    ${base}/explorer`);
  say(`  API docs:           ${base}/docs  (${base}/openapi.json)`);
  say(`  Health, metrics:    ${base}/healthz  ${base}/readyz  ${base}/metrics`);
  if (store.embedded) {
    say(
      `  Database:           embedded FerretDB (${store.embedded.uri}), files in ${config.DATA_DIR}`,
    );
  } else {
    say('  Database:           MONGODB_URI');
  }
  if (demo.devKey) sayDevelopmentKey(base, config, demo.devKey);
  else sayWhyNoDemo(config, demo.before);
}

function sayDevelopmentKey(base: string, config: Config, devKey: string): void {
  say(
    `  Development key (workspace "development", scopes read,write,admin; kept in ${developmentKeyFile(config.DATA_DIR)}):`,
  );
  say(`    ${devKey}`);
  say(`  Try: curl -H "Authorization: Bearer ${devKey}" \\`);
  say(`         "${base}/v1/memory/semantic/datasets/${DEMO_DATASET}/facts"`);
}

function sayWhyNoDemo(config: Config, before: FirstStart['before']): void {
  const names = before?.names.map((name) => `"${name}"`).join(', ');
  const more =
    before && before.total > before.names.length
      ? ` and ${before.total - before.names.length} more`
      : '';
  say(
    before
      ? `  Demo data not loaded: the store already holds workspace(s) ${names}${more}, and ${developmentKeyFile(config.DATA_DIR)} does not exist (the demo loads only into an empty store; start with an empty DATA_DIR to get it).`
      : '  Demo data not loaded: it loads only into the embedded database (MONGODB_URI is set).',
  );
  say(
    `  API key: none printed; make one with  npm run keys -- create --workspace ${before?.names[0] ?? 'NAME'} --scopes read,write,admin`,
  );
}

/** Counted after the server is up (a large store takes a while to count), never failing it. */
function countEmbeddedStoreLater(store: OpenedStore, logger: Logger): void {
  if (store.embedded) {
    reportEmbeddedSize(store.database.collections, say).catch((error: unknown) =>
      logger.warn({ err: error }, 'could not count the embedded store'),
    );
  }
}

async function listeningOrStoreClosed(
  server: HttpServer,
  config: Config,
  store: OpenedStore,
): Promise<void> {
  try {
    await whenListening(server, { port: config.PORT, hostname: config.HOST });
  } catch (error) {
    // The embedded database this process started stops with it, and its record is released.
    await store.close().catch(() => {});
    throw error;
  }
}

/** What shutdown stops. */
interface Running {
  config: Config;
  logger: Logger;
  gateway: ReturnType<typeof createGateway>;
  webSocket: ReturnType<typeof serveGraphqlWebSocket>;
  server: HttpServer;
  store: OpenedStore;
  tracing: Tracing;
}

/** SIGINT or SIGTERM, or the embedded database gone for good: shutdown, once. */
function shutDownOnSignals(running: Running): void {
  const { store, logger } = running;
  let stopping = false;
  const shutdown = async (code: number, reason: string) => {
    if (stopping) return;
    stopping = true;
    await stopInOrder(running, reason);
    process.exit(code);
  };
  process.once('SIGINT', () => void shutdown(0, 'SIGINT'));
  process.once('SIGTERM', () => void shutdown(0, 'SIGTERM'));
  if (store.embedded?.owned) {
    void store.embedded.exited.then((code) => {
      if (stopping) return;
      logger.error(
        { code },
        'the embedded database kept dying or could not be started again (see the lines above); stopping',
      );
      void shutdown(1, 'embedded database exited');
    });
  }
}

/** Shutdown's steps, in the order this file's first comment gives. */
async function stopInOrder(
  { config, logger, gateway, webSocket, server, store, tracing }: Running,
  reason: string,
): Promise<void> {
  logger.info({ reason }, 'shutting down');
  // Every live stream ends (SHUTTING_DOWN, then complete; WebSockets close as "going
  // away"), so its client resumes on another process from its last cursor.
  gateway.beginShutdown();
  await webSocket.close();
  await finishOpenConnections(server, gateway, logger, config.SHUTDOWN_TIMEOUT_MS);
  await gateway.flushKeyUse();
  await store.close();
  // The last spans are sent before the process ends.
  await tracing
    ?.shutdown()
    .catch((error: unknown) => logger.warn({ err: error }, 'could not send the last traces'));
  logger.info('stopped');
}

/**
 * Stop accepting without touching open connections: http.Server#close would also
 * drop connections it thinks idle, including ones whose request is still arriving.
 * Each open connection gets its response with `Connection: close` and ends; only
 * what is still open after SHUTDOWN_TIMEOUT_MS is closed by force.
 */
async function finishOpenConnections(
  server: HttpServer,
  gateway: Running['gateway'],
  logger: Logger,
  timeoutMs: number,
): Promise<void> {
  const closed = new Promise<void>((done) => Server.prototype.close.call(server, () => done()));
  const timer = setTimeout(() => {
    logger.warn(
      { inFlight: gateway.inFlight() },
      'shutdown timeout: closing remaining connections',
    );
    if ('closeAllConnections' in server) server.closeAllConnections();
  }, timeoutMs);
  await closed;
  clearTimeout(timer);
}

main().catch((error: unknown) => exitOnStartupFailure(error, 'start'));
