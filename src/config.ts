import { z } from 'zod';
import { LOOPBACK_HOSTS, normalizeHostName } from './domain/hostNames.js';

/** Which GraphQL operations run (docs/OPERATIONS.md, "Trusted documents"; src/http/trustedDocuments.ts). */
const TRUSTED_DOCUMENT_MODES = ['off', 'also', 'only'] as const;
export type TrustedDocumentMode = (typeof TRUSTED_DOCUMENT_MODES)[number];

/**
 * Configuration from the environment, parsed once at start. A bad value stops start-up
 * with one message naming the variable and what is wrong.
 */
// A plain decimal number: a bare z.coerce.number() would read " " as 0 (a random port)
// and "0x10" as 16.
const wholeNumber = (min: number, max: number) =>
  z
    .string()
    .trim()
    .regex(/^[+-]?(\d+\.?\d*|\.\d+)$/, 'must be a number')
    .pipe(
      z.coerce
        .number<string>()
        .int('must be a whole number')
        .min(min, `must be between ${min} and ${max}`)
        .max(max, `must be between ${min} and ${max}`),
    );

const flag = z
  .enum(['true', 'false'], { error: 'must be true or false' })
  .transform((v) => v === 'true');

/** `*`, or comma-separated origins exactly as browsers send them (scheme://host[:port]). */
const corsOrigins = z
  .string()
  .trim()
  .transform((value, ctx): '*' | string[] => {
    if (value === '*') return '*';
    const origins = value
      .split(',')
      .map((o) => o.trim())
      .filter(Boolean);
    for (const origin of origins) {
      let parsed: URL | null = null;
      try {
        parsed = new URL(origin);
      } catch {}
      if (!parsed || !/^https?:$/.test(parsed.protocol) || parsed.origin !== origin) {
        ctx.addIssue({
          code: 'custom',
          message: `must be * or origins like https://app.example.com (no path, no trailing slash); "${origin}" is not one`,
        });
        return z.NEVER;
      }
    }
    return origins;
  });

/** `*`, or comma-separated host names (example.com, 192.168.1.5, [::1]). */
const allowedHosts = z
  .string()
  .trim()
  .transform((value, ctx): '*' | string[] => {
    if (value === '*') return '*';
    const names: string[] = [];
    for (const raw of value.split(',').filter((h) => h.trim())) {
      const name = normalizeHostName(raw);
      if (!name) {
        ctx.addIssue({
          code: 'custom',
          message: `must be * or host names separated by commas; "${raw.trim()}" is not one`,
        });
        return z.NEVER;
      }
      names.push(name);
    }
    return names;
  });

const schema = z.object({
  PORT: wholeNumber(0, 65535).default(3004),
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  HOST: z.string().min(1, 'must not be empty').default('127.0.0.1'),
  MONGODB_URI: z
    .string()
    .regex(/^mongodb(\+srv)?:\/\//, 'must start with mongodb:// or mongodb+srv://')
    .optional(),
  MONGODB_DB: z
    .string()
    .regex(
      /^[^/\\. "$*<>:|?]{1,63}$/,
      'must be a MongoDB database name (1-63 characters, none of /\\. "$*<>:|?)',
    )
    .default('memory_gateway'),
  DATA_DIR: z.string().min(1, 'must not be empty').default('./data'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** Schema introspection; default on, off when NODE_ENV=production. */
  GRAPHQL_INTROSPECTION: flag.optional(),
  /** GraphiQL on GET /graphql; default on, off when NODE_ENV=production. */
  GRAPHIQL: flag.optional(),
  /** Requests per minute per API key; 0 turns it off. */
  RATE_LIMIT_PER_MINUTE: wholeNumber(0, 1_000_000).default(1200),
  /**
   * Requests per minute per client address, counted before the key is looked up (several
   * keys may share an address: a backend, a NAT); 0 turns it off.
   */
  RATE_LIMIT_PER_ADDRESS_PER_MINUTE: wholeNumber(0, 10_000_000).default(3600),
  /**
   * Where the rate limits count: `database` (shared by every replica of the database, with
   * this process's own count while the database is slower than RATE_LIMIT_STORE_TIMEOUT_MS)
   * or `process` (each process its own). Default `database` with MONGODB_URI (replicas),
   * `process` on the embedded store (one gateway; src/main.ts).
   */
  RATE_LIMIT_STORE: z.enum(['database', 'process']).optional(),
  RATE_LIMIT_STORE_TIMEOUT_MS: wholeNumber(10, 60_000).default(200),
  /** How long a client may take to send a request's headers. */
  HEADERS_TIMEOUT_MS: wholeNumber(1000, 600_000).default(10_000),
  /** How long a client may take to send a whole request, body included (at least HEADERS_TIMEOUT_MS). */
  REQUEST_TIMEOUT_MS: wholeNumber(1000, 3_600_000).default(30_000),
  /** How long an idle keep-alive connection stays open. */
  KEEP_ALIVE_TIMEOUT_MS: wholeNumber(1000, 600_000).default(5_000),
  /** Largest request body accepted, in bytes. */
  BODY_LIMIT_BYTES: wholeNumber(1024, 100 * 1024 * 1024).default(1024 * 1024),
  /**
   * How long a request may spend on the database in all (reads carry what is left as
   * maxTimeMS), and how long reaching it may take, before a 503.
   */
  DB_TIMEOUT_MS: wholeNumber(100, 120_000).default(5000),
  /**
   * Requests of one workspace that run at once in a gateway process; 0 turns it off.
   * Default: DEFAULT_WORKSPACE_CONCURRENCY, below.
   */
  WORKSPACE_CONCURRENCY: wholeNumber(0, 10_000).optional(),
  /** Requests of one workspace that may wait for a slot (the rest: 429). */
  WORKSPACE_QUEUE: wholeNumber(0, 100_000).default(32),
  /**
   * How long a verified API key, and a dataset's existence, are remembered per process;
   * 0 turns it off. See src/store/readCache.ts for what a few seconds of memory costs.
   */
  CACHE_TTL_MS: wholeNumber(0, 600_000).default(5000),
  /** Which GraphQL operations run: registered ones by hash (`only`), text too (`also`), text only (`off`). */
  TRUSTED_DOCUMENTS: z.enum(TRUSTED_DOCUMENT_MODES).default('also'),
  /**
   * Recall by meaning (docs/RECALL.md): `on` loads the embedding model
   * (models/all-minilm-l6-v2-q/) and stores a vector for each fact and memory; `off` recalls
   * by words alone, as before vectors existed.
   */
  EMBEDDINGS: z.enum(['on', 'off']).default('on'),
  /**
   * Where traces go, over OTLP/HTTP (OpenTelemetry's own variable; `/v1/traces` is added);
   * absent: tracing is off and costs nothing. The other OTEL_EXPORTER_OTLP_* variables
   * (headers, timeout) are read by the exporter itself.
   */
  OTEL_EXPORTER_OTLP_ENDPOINT: z.url({ protocol: /^https?$/ }).optional(),
  OTEL_SERVICE_NAME: z.string().min(1).max(200).default('memory-gateway'),
  /** How often a gateway process writes when each key was last used; 0: only at shutdown. */
  KEY_USE_FLUSH_MS: wholeNumber(0, 3_600_000).default(60_000),
  /**
   * The per-command database latency histogram. Off by default: the driver's command
   * monitoring decodes every reply a second time (about 40 % more driver CPU per request).
   */
  DB_COMMAND_METRICS: flag.default(false),
  /** Origins whose pages may call GraphQL and REST; default * in development, none in production. */
  CORS_ORIGINS: corsOrigins.optional(),
  /** Embedded mode only: the Host names requests may use (default loopback names and HOST). */
  ALLOWED_HOSTS: allowedHosts.optional(),
  /**
   * Live updates (docs/LIVE_UPDATES.md): how often each followed dataset's feed is read for
   * other processes' writes (this process's own wake it at once).
   */
  LIVE_POLL_MS: wholeNumber(50, 60_000).default(1000),
  /** Live streams open at once in a gateway process, and per API key (the rest: RATE_LIMITED). */
  LIVE_STREAMS: wholeNumber(0, 1_000_000).default(1000),
  LIVE_STREAMS_PER_KEY: wholeNumber(0, 100_000).default(20),
  /**
   * Connections held open (a WebSocket from its upgrade, an SSE response while it streams)
   * per API key and per client address; past them, RATE_LIMITED (WebSocket close 4429, SSE
   * 429). 0 turns a cap off. A browser with a few tabs of the explorer or GraphiQL holds
   * one each; an office behind one NAT, or a proxy in front of the gateway, shares an address.
   */
  LIVE_CONNECTIONS_PER_KEY: wholeNumber(0, 100_000).default(20),
  LIVE_CONNECTIONS_PER_ADDRESS: wholeNumber(0, 1_000_000).default(100),
  /** Changes one stream may have waiting for its client; past it, the stream ends (resume from the last cursor). */
  LIVE_BUFFER: wholeNumber(1, 1_000_000).default(1000),
  /** How long shutdown waits for in-flight requests before closing connections. */
  SHUTDOWN_TIMEOUT_MS: wholeNumber(0, 300_000).default(10_000),
});

export type Config = Omit<
  z.output<typeof schema>,
  'GRAPHQL_INTROSPECTION' | 'GRAPHIQL' | 'CORS_ORIGINS' | 'ALLOWED_HOSTS'
> & {
  GRAPHQL_INTROSPECTION: boolean;
  GRAPHIQL: boolean;
  /** `*`, a list, or none (`[]`). */
  CORS_ORIGINS: '*' | string[];
  /** `*` (no check) or the host names; applied only with the embedded database. */
  ALLOWED_HOSTS: '*' | string[];
};

/** HOST, as a name a Host header can carry: a wildcard address is not one. */
function listenHostName(host: string): string[] {
  if (host === '0.0.0.0' || host === '::' || host === '[::]') return [];
  const name = normalizeHostName(host);
  return name ? [name] : [];
}

/**
 * A start-up failure the user can fix (a setting, a busy port, a missing tool): `npm start`
 * and the CLI print its message alone, one line with what is wrong and what to do, and exit
 * non-zero; the stack (of `cause`, when set) only with LOG_LEVEL=debug.
 */
export class StartupError extends Error {
  override name = 'StartupError';
}

/**
 * The one place `npm start` and `npm run build:db` end on a failure: a StartupError is the
 * user's to fix, so its message alone, its stack only with LOG_LEVEL=debug or trace;
 * anything else is a bug, stack and all. `doing` completes "Failed to …".
 */
export function exitOnStartupFailure(error: unknown, doing: string): never {
  if (error instanceof StartupError) {
    process.stderr.write(`${error.message}\n`);
    if (['debug', 'trace'].includes(process.env.LOG_LEVEL ?? '')) {
      const cause = error.cause instanceof Error ? error.cause : error;
      process.stderr.write(`${cause.stack}\n`);
    }
  } else {
    process.stderr.write(
      `Failed to ${doing}: ${error instanceof Error ? error.stack : String(error)}\n`,
    );
  }
  process.exit(1);
}

export class ConfigError extends StartupError {
  override name = 'ConfigError';
}

/** Parses the environment; empty strings count as unset. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const raw = Object.fromEntries(
    Object.keys(schema.shape).map((key) => [key, env[key] === '' ? undefined : env[key]]),
  );
  const result = schema.safeParse(raw);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const variable = String(issue.path[0]);
    throw new ConfigError(
      `Invalid configuration: ${variable}=${JSON.stringify(env[variable])} ${issue.message}.`,
    );
  }
  if (result.data.REQUEST_TIMEOUT_MS < result.data.HEADERS_TIMEOUT_MS) {
    throw new ConfigError(
      `Invalid configuration: REQUEST_TIMEOUT_MS=${result.data.REQUEST_TIMEOUT_MS} must be at least HEADERS_TIMEOUT_MS (${result.data.HEADERS_TIMEOUT_MS}).`,
    );
  }
  const production = result.data.NODE_ENV === 'production';
  return {
    ...result.data,
    GRAPHQL_INTROSPECTION: result.data.GRAPHQL_INTROSPECTION ?? !production,
    GRAPHIQL: result.data.GRAPHIQL ?? !production,
    CORS_ORIGINS: result.data.CORS_ORIGINS ?? (production ? [] : '*'),
    ALLOWED_HOSTS: result.data.ALLOWED_HOSTS ?? [
      ...new Set([...LOOPBACK_HOSTS, ...listenHostName(result.data.HOST)]),
    ],
  };
}

/**
 * Every variable's value when the environment does not set it: the one place a default is
 * written. The gateway's options (src/http/app.ts, src/http/webSocket.ts) default to these
 * too, so a gateway made in-process behaves as one started with no settings.
 */
export const CONFIG_DEFAULTS: Config = loadConfig({});

/**
 * WORKSPACE_CONCURRENCY when unset: 2 on the embedded store (one heavy query takes most of
 * two cores there), 16 on MongoDB (src/main.ts).
 */
export const DEFAULT_WORKSPACE_CONCURRENCY = { embedded: 2, mongodb: 16 } as const;
