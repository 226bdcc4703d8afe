import {
  context,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { getOperationAST } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { CommandStartedEvent, MongoClient } from 'mongodb';
import type { RequestContext } from '../context.js';
import { inSpan } from '../spans.js';

/**
 * OpenTelemetry traces (docs/OPERATIONS.md, "Tracing"): with OTEL_EXPORTER_OTLP_ENDPOINT set, each
 * request is a trace: its HTTP span (method, route, status, request id, GraphQL operation
 * name), GraphQL's parse, validate and execute (a REST route's operation included), each
 * DataLoader batch (the resolvers' reads, summed up per batch), and each MongoDB command
 * (from the driver's command monitoring). Spans carry names, routes and counts, never an
 * argument's value or stored content (no dataset name, no filter, no text). Without the
 * endpoint, none of this is installed: no span is made, nothing is wrapped, and the SDK
 * (tracingExport.ts) is not even loaded.
 */

/** GraphQL's phases as spans, each the parent of what runs in it (Yoga's instrumentation). */
export function graphqlTracing(tracer: Tracer): Plugin<RequestContext> {
  return {
    instrumentation: {
      parse: (_payload, wrapped) => inSpan(tracer, 'graphql.parse', {}, wrapped),
      validate: (_payload, wrapped) => inSpan(tracer, 'graphql.validate', {}, wrapped),
      execute: (_payload, wrapped) => inSpan(tracer, 'graphql.execute', {}, wrapped),
      subscribe: (_payload, wrapped) => inSpan(tracer, 'graphql.subscribe', {}, wrapped),
    },
    // The operation is known once parsed: its name and type on the execute span.
    onExecute({ args }) {
      nameOperation(getOperationAST(args.document, args.operationName));
    },
    onSubscribe({ args }) {
      nameOperation(getOperationAST(args.document, args.operationName));
    },
  };
}

function nameOperation(operation: ReturnType<typeof getOperationAST>): void {
  const span = trace.getActiveSpan();
  if (!span || !operation) return;
  span.setAttribute('graphql.operation.type', operation.operation);
  if (operation.name) span.setAttribute('graphql.operation.name', operation.name.value);
}

/**
 * Each MongoDB command as a client span, the child of whatever span was active when the
 * driver sent it: its name, collection and outcome; never its filter or documents. Needs
 * the client's command monitoring (`monitorCommands`, turned on with tracing).
 */
export function traceDatabase(client: MongoClient, tracer: Tracer): void {
  const open = new Map<number, Span>();
  client.on('commandStarted', (event: CommandStartedEvent) => {
    const target = event.command[event.commandName];
    open.set(
      event.requestId,
      tracer.startSpan(
        `mongodb.${event.commandName}`,
        {
          kind: SpanKind.CLIENT,
          attributes: {
            'db.system.name': 'mongodb',
            'db.namespace': event.databaseName,
            'db.operation.name': event.commandName,
            ...(typeof target === 'string' ? { 'db.collection.name': target } : {}),
          },
        },
        context.active(),
      ),
    );
  });
  const end = (requestId: number, failure: Error | null) => {
    const span = open.get(requestId);
    if (!span) return;
    open.delete(requestId);
    if (failure) span.setStatus({ code: SpanStatusCode.ERROR, message: failure.name });
    span.end();
  };
  client.on('commandSucceeded', (event) => end(event.requestId, null));
  client.on('commandFailed', (event) => end(event.requestId, event.failure));
}
