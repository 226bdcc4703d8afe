import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { serve } from '@hono/node-server';
import { StartupError } from '../config.js';
import { ERROR_STATUS, type ErrorCode } from '../errors.js';
import { errorBody } from '../rest/errorBodies.js';
import { errorShapeOf } from '../rest/surfaces.js';
import { describeMalformedRequest, requestLineOf } from './malformedRequest.js';

/**
 * How long a client may take, enforced by Node's HTTP server before and around the
 * gateway: a slow or stalled client holds a connection for a bounded time only.
 */
export interface ServerTimeouts {
  /** Until the request's headers have arrived (slowloris). */
  headersTimeoutMs: number;
  /** Until the whole request, body included, has arrived (a trickled body). */
  requestTimeoutMs: number;
  /** How long an idle keep-alive connection stays open between requests. */
  keepAliveTimeoutMs: number;
}

const DEFAULT_SERVER_TIMEOUTS: ServerTimeouts = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
};

/** What Node refuses before the gateway sees the request, by its parser's error code. */
const REFUSED_BY_NODE: Record<string, { code: ErrorCode; message: string }> = {
  HPE_HEADER_OVERFLOW: {
    code: 'HEADERS_TOO_LARGE',
    message: 'Request line and headers too large (at most 16 KiB)',
  },
  ERR_HTTP_REQUEST_TIMEOUT: {
    code: 'REQUEST_TIMEOUT',
    message: 'The request did not arrive in time',
  },
};

const REASONS: Partial<Record<number, string>> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  431: 'Request Header Fields Too Large',
};

/** The request's path, read from the raw bytes Node could not parse into a request. */
function pathOf(rawPacket: unknown): string {
  return requestLineOf(rawPacket).split(' ')[1]?.split('?')[0] ?? '';
}

/**
 * Node answers a request it cannot parse (headers too large: 431; too slow: 408; bytes
 * that are not HTTP: 400) itself, with an empty body. The gateway answers these in the
 * shape of the surface the request was for, like every other error.
 */
function answerClientError(error: Error & { code?: string; rawPacket?: unknown }, socket: Duplex) {
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const refused = REFUSED_BY_NODE[error.code ?? ''] ?? {
    code: 'BAD_USER_INPUT' as const,
    message: describeMalformedRequest(error.rawPacket) ?? 'Malformed HTTP request',
  };
  const status = ERROR_STATUS[refused.code];
  const body = JSON.stringify(
    errorBody(errorShapeOf(pathOf(error.rawPacket)), refused.code, refused.message),
  );
  socket.end(
    `HTTP/1.1 ${status} ${REASONS[status] ?? 'Bad Request'}\r\n` +
      'Content-Type: application/json\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      'Connection: close\r\n\r\n' +
      body,
  );
}

/** Serves `fetch` on a Node HTTP server with the gateway's timeouts and client-error answers. */
export function listen(
  fetch: (request: Request) => Response | Promise<Response>,
  options: { port: number; hostname: string; timeouts?: ServerTimeouts },
  onListening?: (info: AddressInfo) => void,
): Server {
  const timeouts = options.timeouts ?? DEFAULT_SERVER_TIMEOUTS;
  const server = serve(
    {
      fetch,
      port: options.port,
      hostname: options.hostname,
      serverOptions: {
        headersTimeout: timeouts.headersTimeoutMs,
        requestTimeout: timeouts.requestTimeoutMs,
        keepAliveTimeout: timeouts.keepAliveTimeoutMs,
        // How often Node checks the two timeouts above (its default is 30 s, which would
        // let a stalled request live that much longer than configured).
        connectionsCheckingInterval: Math.max(
          100,
          Math.min(1000, Math.floor(timeouts.headersTimeoutMs / 4)),
        ),
      },
    },
    onListening,
  ) as Server;
  server.on('clientError', answerClientError);
  return server;
}

/**
 * Resolves once `server` listens. What a user can get wrong (the port taken, HOST not an
 * address of this machine) rejects as a StartupError saying which setting to change;
 * without this, Node reports it as an unhandled 'error' event and its stack.
 */
export function whenListening(
  server: Server,
  at: { port: number; hostname: string },
): Promise<void> {
  const elsewhere = 'Set HOST to an address of this machine (127.0.0.1, or 0.0.0.0 for all)';
  const problems: Record<string, string> = {
    EADDRINUSE: `Port ${at.port} on ${at.hostname} is already in use (is the gateway already running?): stop what holds it, or set PORT to a free port (PORT=0 picks any).`,
    EACCES: `Not allowed to listen on port ${at.port} on ${at.hostname} (ports below 1024 need privileges): set PORT to 1024 or above.`,
    EADDRNOTAVAIL: `Cannot listen on HOST=${at.hostname}: it is not an address of this machine. ${elsewhere}.`,
    ENOTFOUND: `Cannot listen on HOST=${at.hostname}: no such host name. ${elsewhere}.`,
    EAI_AGAIN: `Cannot listen on HOST=${at.hostname}: the name could not be looked up. ${elsewhere}.`,
  };
  return new Promise((done, fail) => {
    if (server.listening) return done();
    const failed = (error: NodeJS.ErrnoException) => {
      server.off('listening', listening);
      const problem = problems[error.code ?? ''];
      fail(problem ? new StartupError(problem, { cause: error }) : error);
    };
    const listening = () => {
      server.off('error', failed);
      done();
    };
    server.once('error', failed);
    server.once('listening', listening);
  });
}
