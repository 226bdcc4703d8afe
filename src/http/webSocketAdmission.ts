import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { RateLimiterRes } from 'rate-limiter-flexible';
import { readHostHeader } from '../domain/hostNames.js';
import type { createGateway } from './app.js';
import { originMayCall } from './cors.js';

/**
 * A WebSocket's admission at the upgrade (src/http/webSocket.ts): what a connection needs
 * before it exists. A refusal is an HTTP answer on the socket, in GraphQL's error shape.
 */

/** What of the gateway, and of its settings, the upgrade's rules read. */
export interface UpgradeRules {
  gateway: Pick<
    ReturnType<typeof createGateway>,
    'shuttingDown' | 'corsOrigins' | 'addressLimiter'
  >;
  /** Host names allowed (embedded mode); null: any. */
  allowedHosts: ReadonlySet<string> | null;
}

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  403: 'Forbidden',
  404: 'Not Found',
  429: 'Too Many Requests',
  503: 'Service Unavailable',
};

function refuseUpgrade(socket: Duplex, status: number, code: string, message: string): void {
  const body = JSON.stringify({ errors: [{ message, extensions: { code } }] });
  socket.end(
    `HTTP/1.1 ${status} ${REASONS[status]}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/**
 * The upgrade's rules in order: the path, shutdown, the Host rule, the Origin (a browser's
 * WebSocket is not subject to CORS), the per-address rate limit. `admitted` runs once all
 * pass; otherwise the upgrade is refused here.
 */
export async function admitUpgrade(
  request: IncomingMessage,
  socket: Duplex,
  { gateway, allowedHosts }: UpgradeRules,
  admitted: () => void,
): Promise<void> {
  const path = (request.url ?? '').split('?')[0];
  if (path !== '/graphql') {
    refuseUpgrade(socket, 404, 'NOT_FOUND', 'Not found');
    return;
  }
  if (gateway.shuttingDown()) {
    refuseUpgrade(socket, 503, 'SHUTTING_DOWN', 'This gateway process is shutting down');
    return;
  }
  const host = readHostHeader(request.headers.host ?? '')?.name ?? null;
  if (allowedHosts && (!host || !allowedHosts.has(host))) {
    refuseUpgrade(
      socket,
      403,
      'FORBIDDEN',
      `Host "${host ?? ''}" is not allowed; see ALLOWED_HOSTS`,
    );
    return;
  }
  const origin = request.headers.origin;
  if (!originMayCall(gateway.corsOrigins, origin, request.headers.host)) {
    refuseUpgrade(
      socket,
      403,
      'FORBIDDEN',
      `Origin "${origin}" may not open a WebSocket here; see CORS_ORIGINS`,
    );
    return;
  }
  if (gateway.addressLimiter) {
    try {
      await gateway.addressLimiter.consume(request.socket.remoteAddress ?? 'unknown');
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) throw rejection;
      refuseUpgrade(socket, 429, 'RATE_LIMITED', 'Too many requests; retry later');
      return;
    }
  }
  admitted();
}
