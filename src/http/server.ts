import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { getRequestListener } from '@hono/node-server';
import { StartupError } from '../config.js';
import { ERROR_STATUS, type ErrorCode } from '../errors.js';
import { errorBody } from '../rest/errorBodies.js';
import { errorShapeOf } from '../rest/surfaces.js';
import { describeMalformedRequest, readRequestHead, requestLineOf } from './malformedRequest.js';

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

/** A refusal the listener answers itself: its status and body in the shape of `path`'s surface. */
function listenerRefusal(path: string, code: ErrorCode, message: string) {
  return {
    status: ERROR_STATUS[code],
    body: JSON.stringify(errorBody(errorShapeOf(path), code, message)),
  };
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
  const { status, body } = listenerRefusal(pathOf(error.rawPacket), refused.code, refused.message);
  socket.end(
    `HTTP/1.1 ${status} ${REASONS[status] ?? 'Bad Request'}\r\n` +
      'Content-Type: application/json\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      'Connection: close\r\n\r\n' +
      body,
  );
}

/**
 * The Node adapter's request listener behind a check of each request's head: what the
 * adapter would refuse with an empty 400 (no Host on HTTP/1.1, a Host that is no host, a
 * backslash in the path, a target that is not a path) is answered here in the surface's
 * shape, and a Host spelled otherwise than a URL writes it (`LOCALHOST:3004`, `127.1`) is
 * handed on as a URL writes it, so the gateway's Host rule decides it like its plain
 * spelling. An empty or missing Host is handed on as it is: the rule reads it as no name
 * (src/http/hosts.ts).
 */
function checkingRequestHeads(
  adapter: (incoming: IncomingMessage, outgoing: ServerResponse) => unknown,
) {
  return (incoming: IncomingMessage, outgoing: ServerResponse) => {
    const head = readRequestHead(incoming);
    if ('problem' in head) {
      const target = incoming.url ?? '';
      const path = target.startsWith('/') ? target.split('?', 1)[0]! : '';
      const { status, body } = listenerRefusal(path, 'BAD_USER_INPUT', head.problem);
      outgoing.writeHead(status, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
        connection: 'close',
      });
      outgoing.end(body);
      return;
    }
    if (head.host) incoming.headers.host = head.host;
    return adapter(incoming, outgoing);
  };
}

/** Serves `fetch` on a Node HTTP server with the gateway's timeouts and client-error answers. */
export function listen(
  fetch: (request: Request) => Response | Promise<Response>,
  options: { port: number; hostname: string; timeouts?: ServerTimeouts },
  onListening?: (info: AddressInfo) => void,
): Server {
  const timeouts = options.timeouts ?? DEFAULT_SERVER_TIMEOUTS;
  // The adapter puts this in the URL of a request with an empty Host (or none, HTTP/1.0):
  // the listener's address, bracketed if IPv6 (`::` is no URL host, `[::]` is).
  const ownHost = options.hostname.includes(':') ? `[${options.hostname}]` : options.hostname;
  // What `serve` of @hono/node-server does, with the request heads checked first.
  const server = createServer(
    {
      headersTimeout: timeouts.headersTimeoutMs,
      requestTimeout: timeouts.requestTimeoutMs,
      keepAliveTimeout: timeouts.keepAliveTimeoutMs,
      // How often Node checks the two timeouts above (its default is 30 s, which would
      // let a stalled request live that much longer than configured).
      connectionsCheckingInterval: Math.max(
        100,
        Math.min(1000, Math.floor(timeouts.headersTimeoutMs / 4)),
      ),
      // Node answers HTTP/1.1 without Host with an empty 400; checkingRequestHeads says why.
      requireHostHeader: false,
    },
    checkingRequestHeads(getRequestListener(fetch, { hostname: ownHost })),
  );
  server.on('clientError', answerClientError);
  server.listen(options.port, options.hostname, () =>
    onListening?.(server.address() as AddressInfo),
  );
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
