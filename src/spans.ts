import { type Span, SpanStatusCode, type Tracer } from '@opentelemetry/api';

/**
 * One span around a piece of work, for the layers that trace what they run when a tracer
 * is given (the edge, GraphQL, the REST adapters, the loaders; src/http/tracing.ts says
 * what is traced and how it is exported).
 */

/** Runs `work` in a new active span, ended (with an error status on a throw) when it settles. */
export function inSpan<T>(
  tracer: Tracer,
  name: string,
  attributes: Record<string, string | number | boolean>,
  work: (span: Span) => T,
): T {
  return tracer.startActiveSpan(name, { attributes }, (span) => {
    const fail = (error: unknown) => {
      span.setStatus({
        code: SpanStatusCode.ERROR,
        message: error instanceof Error ? error.name : 'error',
      });
      span.end();
      throw error;
    };
    try {
      const result = work(span);
      if (result instanceof Promise) {
        return result.then((value) => {
          span.end();
          return value;
        }, fail) as T;
      }
      span.end();
      return result;
    } catch (error) {
      return fail(error);
    }
  });
}
