import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { ExecutionArgs } from 'graphql';
import { useServer } from 'graphql-ws/use/ws';
import { RateLimiterRes } from 'rate-limiter-flexible';
import { WebSocketServer } from 'ws';
import type { RequestContext } from '../context.js';
import { GatewayError, maskError } from '../errors.js';
import type { createGateway } from './app.js';
import { allowedOrigin } from './cors.js';
import { requestHostName } from './hosts.js';

/**
 * GraphQL over WebSocket (the graphql-ws protocol Apollo Client, urql and Relay speak) on
 * /graphql, beside GraphQL over HTTP and SSE on the same path. What HTTP requests pass
 * applies here too, once per connection: the Host rule, the Origin (a browser's WebSocket
 * is not subject to CORS, so the gateway checks it: CORS_ORIGINS, or the gateway's own
 * pages), the per-address rate limit and shutdown; then, once per subscription, the key
 * (sent in the connection's `connection_init` payload as `{ "authorization": "Bearer …" }`,
 * browsers cannot set headers on a WebSocket), the per-key rate limit and every plugin of
 * the GraphQL endpoint (scopes, query limits, masking), through Yoga's `getEnveloped`.
 */

type Gateway = ReturnType<typeof createGateway>;

export interface WebSocketOptions {
  /** Host names allowed (embedded mode), as the HTTP edge's ALLOWED_HOSTS; absent: any. */
  allowedHosts?: readonly string[];
  /** Largest message accepted, in bytes (the HTTP body limit). */
  maxPayloadBytes?: number;
  /** How often the server pings each connection (ws ping frames), so proxies keep it. */
  keepAliveMs?: number;
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

/** The `Authorization` value a connection_init payload carries (either spelling). */
function authorizationOf(params: Readonly<Record<string, unknown>> | undefined): string | null {
  const value = params?.authorization ?? params?.Authorization;
  return typeof value === 'string' ? value : null;
}

/** What a subscribe hook's refusal (scopes, limits, a missing key) becomes: an error result. */
async function settled<T>(run: () => Promise<T> | T) {
  try {
    return await run();
  } catch (error) {
    return { errors: [maskError(error)] };
  }
}

export function serveGraphqlWebSocket(
  server: Server,
  gateway: Gateway,
  options: WebSocketOptions = {},
): { close: () => Promise<void> } {
  const { edge, yoga } = gateway;
  const allowedHosts = options.allowedHosts ? new Set(options.allowedHosts) : null;
  const sockets = new WebSocketServer({
    noServer: true,
    maxPayload: options.maxPayloadBytes ?? 1024 * 1024,
  });

  const onUpgrade = async (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const path = (request.url ?? '').split('?')[0];
    if (path !== '/graphql') {
      refuseUpgrade(socket, 404, 'NOT_FOUND', 'Not found');
      return;
    }
    if (gateway.shuttingDown()) {
      refuseUpgrade(socket, 503, 'SHUTTING_DOWN', 'This gateway process is shutting down');
      return;
    }
    const hostHeader = request.headers.host ?? '';
    const host = URL.canParse(`http://${hostHeader}/`)
      ? requestHostName(new Request(`http://${hostHeader}/`))
      : null;
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
    const ownOrigin = origin !== undefined && URL.parse(origin)?.host === request.headers.host;
    if (origin !== undefined && !ownOrigin && !allowedOrigin(edge.corsOrigins, origin)) {
      refuseUpgrade(
        socket,
        403,
        'FORBIDDEN',
        `Origin "${origin}" may not open a WebSocket here; see CORS_ORIGINS`,
      );
      return;
    }
    if (edge.addressLimiter) {
      try {
        await edge.addressLimiter.consume(request.socket.remoteAddress ?? 'unknown');
      } catch (rejection) {
        if (!(rejection instanceof RateLimiterRes)) throw rejection;
        refuseUpgrade(socket, 429, 'RATE_LIMITED', 'Too many requests; retry later');
        return;
      }
    }
    sockets.handleUpgrade(request, socket, head, (ws) => sockets.emit('connection', ws, request));
  };
  const upgrade = (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    onUpgrade(request, socket, head).catch(() => socket.destroy());
  };
  server.on('upgrade', upgrade);

  /** The request context of one subscription: as an HTTP request's, with the connection's key. */
  const contextOf = (authorization: string | null) =>
    edge.contextOf(
      new Request('http://websocket/graphql', {
        headers: authorization ? { authorization } : {},
      }),
      randomUUID(),
    );

  type Root = {
    execute: (args: ExecutionArgs) => unknown;
    subscribe: (args: ExecutionArgs) => unknown;
  };
  const disposable = useServer<Record<string, unknown>>(
    {
      connectionInitWaitTimeout: 10_000,
      // A connection without a valid key is closed at once (4403), before it subscribes.
      onConnect: async (ctx) =>
        (await contextOf(authorizationOf(ctx.connectionParams))).auth !== null,
      onSubscribe: async (ctx, _id, payload) => {
        const context: RequestContext = await contextOf(authorizationOf(ctx.connectionParams));
        if (edge.keyLimiter && context.auth) {
          try {
            await edge.keyLimiter.consume(context.auth.keyId);
          } catch (rejection) {
            if (!(rejection instanceof RateLimiterRes)) throw rejection;
            return [new GatewayError('RATE_LIMITED', 'Too many requests; retry later')];
          }
        }
        const { schema, execute, subscribe, contextFactory, parse, validate } =
          yoga.getEnveloped(context);
        let document: ReturnType<typeof parse>;
        try {
          document = parse(payload.query);
        } catch (error) {
          return [maskError(error)];
        }
        const errors = validate(schema, document);
        if (errors.length > 0) return errors.map((error: unknown) => maskError(error));
        const rootValue: Root = { execute, subscribe };
        return {
          schema,
          document,
          operationName: payload.operationName ?? null,
          variableValues: payload.variables ?? null,
          contextValue: await contextFactory(),
          rootValue,
        };
      },
      execute: (args) => settled(() => (args.rootValue as Root).execute(args)) as never,
      subscribe: (args) => settled(() => (args.rootValue as Root).subscribe(args)) as never,
    },
    sockets,
    options.keepAliveMs ?? 12_000,
  );

  return {
    /** Shutdown: every connection is closed as "going away" (1001), so clients reconnect elsewhere. */
    close: async () => {
      server.off('upgrade', upgrade);
      // The streams' SHUTTING_DOWN events go out first (beginShutdown ended them), briefly.
      for (let waited = 0; gateway.live.counts().streams > 0 && waited < 1000; waited += 20) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      for (const client of sockets.clients) client.close(1001, 'Going away');
      await disposable.dispose();
    },
  };
}
