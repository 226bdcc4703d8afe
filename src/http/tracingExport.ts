import type { Tracer } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node';

/**
 * The OpenTelemetry SDK, loaded by the server only when OTEL_EXPORTER_OTLP_ENDPOINT is set
 * (src/main.ts imports this file then, and only then): what src/http/tracing.ts records is
 * exported over OTLP/HTTP.
 */

/** Starts the SDK exporting over OTLP/HTTP (the endpoint and headers from OTEL_* variables). */
export function startTracing(serviceName: string): {
  tracer: Tracer;
  shutdown: () => Promise<void>;
} {
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': serviceName }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
  });
  // The global context manager (AsyncLocalStorage): a span is the parent of what runs in it.
  provider.register();
  return {
    tracer: provider.getTracer('bitemporal-memory-gateway'),
    shutdown: () => provider.shutdown(),
  };
}
