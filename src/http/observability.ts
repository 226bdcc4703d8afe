import type { MongoClient } from 'mongodb';
import pino, { type Logger } from 'pino';
import { Counter, collectDefaultMetrics, Histogram, Registry } from 'prom-client';

/**
 * Structured JSON logs (pino) and Prometheus metrics, created once per gateway. Logs never
 * carry the Authorization header or a key: pino redacts them, and the access log is built
 * field by field from what is safe to show (request id, method, route, operation,
 * workspace, status, latency).
 */
export function createLogger(level = 'info', destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: {
        paths: ['req.headers.authorization', 'headers.authorization', 'authorization', 'key'],
        censor: '[redacted]',
      },
    },
    destination,
  );
}

export type Metrics = ReturnType<typeof createMetrics>;

export function createMetrics() {
  const registry = new Registry();
  // Event-loop delay sampled every 100 ms rather than prom-client's 10 ms: the same
  // metric, a tenth of the timer wake-ups on an idle gateway.
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 100 });
  return {
    registry,
    requests: new Counter({
      name: 'gateway_http_requests_total',
      help: 'HTTP requests by route, method, status and transport (src/http/transports.ts)',
      labelNames: ['route', 'method', 'status', 'transport'] as const,
      registers: [registry],
    }),
    latency: new Histogram({
      name: 'gateway_http_request_duration_seconds',
      help: 'HTTP request latency by route and GraphQL operation',
      labelNames: ['route', 'method', 'operation'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    operations: new Counter({
      name: 'gateway_graphql_operations_total',
      help: 'GraphQL operations by name (anonymous when unnamed) and outcome',
      labelNames: ['operation', 'outcome'] as const,
      registers: [registry],
    }),
    errors: new Counter({
      name: 'gateway_errors_total',
      help: 'Errors answered, by code',
      labelNames: ['code'] as const,
      registers: [registry],
    }),
    dbCommands: new Histogram({
      name: 'gateway_db_command_duration_seconds',
      help: 'Database command latency by command',
      labelNames: ['command', 'outcome'] as const,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    }),
    loaderBatches: new Histogram({
      name: 'gateway_dataloader_batch_size',
      help: 'Keys per DataLoader batch, by loader',
      labelNames: ['loader'] as const,
      buckets: [1, 2, 5, 10, 25, 50, 100, 250, 500],
      registers: [registry],
    }),
  };
}

/** Operation names longer than this are labelled `other`. */
const MAX_OPERATION_LABEL_LENGTH = 64;
/** Distinct operation names one gateway labels by name; later ones are `other`. */
export const MAX_OPERATION_LABELS = 200;

export type OperationLabels = ReturnType<typeof operationLabels>;

/**
 * The operation label of the access log and the metrics. Clients choose operation names,
 * so a label is bounded: only requests with a valid key are labelled by name (others are
 * `unauthenticated`), a name must be a short GraphQL name, and past a fixed number of
 * distinct names every new one is `other`: /metrics cannot be grown by naming requests.
 */
export function operationLabels(max = MAX_OPERATION_LABELS) {
  const seen = new Set<string>();
  return {
    of(name: string | null, authenticated: boolean): string {
      if (!authenticated) return 'unauthenticated';
      if (name === null) return 'anonymous';
      if (name.length > MAX_OPERATION_LABEL_LENGTH || !/^[_A-Za-z][_0-9A-Za-z]*$/.test(name))
        return 'other';
      if (seen.has(name)) return name;
      if (seen.size >= max) return 'other';
      seen.add(name);
      return name;
    },
  };
}

/** Feeds the database command histogram from the driver's command monitoring. */
export function observeDatabase(client: MongoClient, metrics: Metrics): void {
  client.on('commandSucceeded', (event) =>
    metrics.dbCommands.observe(
      { command: event.commandName, outcome: 'ok' },
      event.duration / 1000,
    ),
  );
  client.on('commandFailed', (event) =>
    metrics.dbCommands.observe(
      { command: event.commandName, outcome: 'error' },
      event.duration / 1000,
    ),
  );
}
