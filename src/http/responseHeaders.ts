import type { Context } from 'hono';

/**
 * Sets a header on the finished response in place. `c.header()` after the handler would
 * copy the whole response into a new one with a streamed body (Hono re-wraps a finalized
 * response), which also costs @hono/node-server its fast path for string bodies: about a
 * tenth of the gateway's CPU per request. Our handlers build their responses themselves,
 * so the headers are mutable; a response whose headers are not falls back to the copy.
 */
export function setResponseHeader(c: Context, name: string, value: string): void {
  try {
    c.res.headers.set(name, value);
  } catch {
    c.header(name, value);
  }
}
