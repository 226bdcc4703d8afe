import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type ExecutionResult, print } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createGateway, type GatewayOptions } from '../../src/http/app.js';
import { listen } from '../../src/http/server.js';
import { serveGraphqlWebSocket } from '../../src/http/webSocket.js';
import { createApiKey, revokeApiKey } from '../../src/store/workspaces.js';
import { LiveDatasetChangesDocument } from '../generated/operations.js';
import { openTestGateway, type TestGateway } from '../helpers/gateway.js';
import { codesOf } from '../helpers/live.js';
import { until } from '../helpers/until.js';

/**
 * Connections held open (docs/LIVE_UPDATES.md, "Connections"): a WebSocket from its upgrade
 * and an SSE response while it streams count against their client address and their key
 * (LIVE_CONNECTIONS_PER_ADDRESS, LIVE_CONNECTIONS_PER_KEY); past a cap a WebSocket is closed
 * with 4429 and an SSE request answered 429 with Retry-After. A key that is revoked or
 * expires closes its sockets (4403), not only its streams. Over a real loopback listener.
 */

let t: TestGateway;
/** The gateway's clock: an input the expiry test moves. */
let now = Date.now();

beforeAll(async () => {
  t = await openTestGateway({ demoWorkspaces: [], gateway: { clock: () => new Date(now) } });
});

afterAll(() => {
  t.gateway.live.close();
});

/** A listener of its own on the test database, with a gateway of the given options. */
async function door(options: Partial<GatewayOptions>) {
  const gateway = createGateway({ database: t.database, keyUseFlushMs: 0, ...options });
  const server = await new Promise<Server>((resolve) => {
    const s = listen(gateway.fetch, { port: 0, hostname: '127.0.0.1' }, () => resolve(s));
  });
  const webSocket = serveGraphqlWebSocket(server, gateway);
  const { port } = server.address() as AddressInfo;
  return {
    gateway,
    origin: `http://127.0.0.1:${port}`,
    url: `ws://127.0.0.1:${port}/graphql`,
    close: async () => {
      gateway.beginShutdown();
      await webSocket.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

type Door = Awaited<ReturnType<typeof door>>;

/**
 * A raw graphql-ws connection: `key` undefined sends no connection_init at all (a socket
 * that only holds its place). `acknowledged` is false when the server closed it instead.
 * `messages` is every message the server sent, in order.
 */
function connect(url: string, key?: string | null) {
  const ws = new WebSocket(url, 'graphql-transport-ws');
  const messages: { type: string; id?: string; payload?: unknown }[] = [];
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.once('close', (code, reason) => resolve({ code, reason: String(reason) })),
  );
  const opened = new Promise<void>((resolve) => ws.once('open', () => resolve()));
  const acknowledged = new Promise<boolean>((resolve) => {
    ws.on('message', (message) => {
      messages.push(JSON.parse(String(message)));
      if (messages.at(-1)!.type === 'connection_ack') resolve(true);
    });
    ws.once('close', () => resolve(false));
  });
  ws.on('error', () => {});
  ws.once('open', () => {
    if (key !== undefined) {
      ws.send(
        JSON.stringify({
          type: 'connection_init',
          payload: key ? { authorization: `Bearer ${key}` } : {},
        }),
      );
    }
  });
  /** Follows a dataset's changes on this connection (once acknowledged). */
  const follow = (dataset: string) =>
    ws.send(
      JSON.stringify({
        id: '1',
        type: 'subscribe',
        payload: { query: print(LiveDatasetChangesDocument), variables: { dataset, after: null } },
      }),
    );
  return { ws, opened, acknowledged, closed, messages, follow };
}

/** The close, or null when the socket is still open after `ms`. */
const closedWithin = (connection: ReturnType<typeof connect>, ms: number) =>
  Promise.race([
    connection.closed,
    new Promise<null>((resolve) => setTimeout(() => resolve(null), ms)),
  ]);

/** Waits until the door's gateway counts `n` connections held open. */
const held = (d: Door, n: number) =>
  until(
    () => d.gateway.live.counts().connections === n,
    () => `${n} connections held (counts: ${JSON.stringify(d.gateway.live.counts())})`,
  );

/** A subscription over GraphQL over SSE on the listener, its first bytes read (it is open). */
async function sseStream(d: Door, key: string) {
  const stop = new AbortController();
  const response = await fetch(`${d.origin}/graphql`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'text/event-stream',
      authorization: `Bearer ${key}`,
    },
    body: JSON.stringify({
      query: print(LiveDatasetChangesDocument),
      variables: { dataset: 'held', after: null },
    }),
    signal: stop.signal,
  });
  if (response.ok) await response.body!.getReader().read();
  return { response, close: () => stop.abort() };
}

const key = async (expiresAt?: Date) =>
  (
    await createApiKey(
      t.database.collections,
      'acme',
      ['read', 'admin'],
      new Date(now),
      expiresAt ? { expiresAt } : {},
    )
  ).key;

describe('WebSocket connections are capped', () => {
  it('per key: past LIVE_CONNECTIONS_PER_KEY the connection is closed with 4429; closing one frees its place', async () => {
    const d = await door({ live: { maxConnectionsPerKey: 2 } });
    try {
      const mine = await key();
      const first = connect(d.url, mine);
      const second = connect(d.url, mine);
      expect(await first.acknowledged).toBe(true);
      expect(await second.acknowledged).toBe(true);
      const third = connect(d.url, mine);
      expect(await third.acknowledged).toBe(false);
      const refused = await third.closed;
      expect(refused.code).toBe(4429);
      expect(refused.reason).toMatch(/^RATE_LIMITED: .*LIVE_CONNECTIONS_PER_KEY/);
      // Another key is not affected.
      const other = connect(d.url, await key());
      expect(await other.acknowledged).toBe(true);
      first.ws.close();
      await held(d, 2);
      const again = connect(d.url, mine);
      expect(await again.acknowledged).toBe(true);
      for (const c of [second, other, again]) c.ws.close();
      await held(d, 0);
    } finally {
      await d.close();
    }
  });

  it('per address: sockets that never send connection_init count; the next is closed with 4429', async () => {
    const d = await door({ live: { maxConnectionsPerAddress: 2 } });
    try {
      const silent = connect(d.url);
      const waiting = connect(d.url);
      // Open on the client: the server took their places when it answered the upgrade.
      await Promise.all([silent.opened, waiting.opened]);
      const third = connect(d.url, await key());
      expect(await third.acknowledged).toBe(false);
      const refused = await third.closed;
      expect(refused.code).toBe(4429);
      expect(refused.reason).toMatch(/^RATE_LIMITED: .*LIVE_CONNECTIONS_PER_ADDRESS/);
      silent.ws.close();
      await held(d, 1);
      const again = connect(d.url, await key());
      expect(await again.acknowledged).toBe(true);
      waiting.ws.close();
      again.ws.close();
      await held(d, 0);
    } finally {
      await d.close();
    }
  });
});

describe('SSE responses are held connections too', () => {
  it('per key, shared with WebSockets: the next SSE stream is 429 with Retry-After in GraphQL’s shape', async () => {
    const d = await door({ live: { maxConnectionsPerKey: 1 } });
    try {
      const mine = await key();
      const stream = await sseStream(d, mine);
      expect(stream.response.status).toBe(200);
      const refused = await sseStream(d, mine);
      expect(refused.response.status).toBe(429);
      expect(Number(refused.response.headers.get('retry-after'))).toBeGreaterThan(0);
      const body = (await refused.response.json()) as {
        errors: { message: string; extensions: { code: string } }[];
      };
      expect(body.errors[0]!.extensions.code).toBe('RATE_LIMITED');
      expect(body.errors[0]!.message).toContain('LIVE_CONNECTIONS_PER_KEY');
      // The refused stream was never left open.
      await until(() => d.gateway.live.counts().streams === 1, 'one stream open');
      // A WebSocket of the same key is one connection more.
      const socket = connect(d.url, mine);
      expect(await socket.acknowledged).toBe(false);
      expect((await socket.closed).code).toBe(4429);
      stream.close();
      await held(d, 0);
      const again = await sseStream(d, mine);
      expect(again.response.status).toBe(200);
      again.close();
      await held(d, 0);
    } finally {
      await d.close();
    }
  });

  it('per address: a WebSocket waiting for connection_init leaves no place for an SSE stream', async () => {
    const d = await door({ live: { maxConnectionsPerAddress: 1 } });
    try {
      const silent = connect(d.url);
      await silent.opened;
      const refused = await sseStream(d, await key());
      expect(refused.response.status).toBe(429);
      expect(
        ((await refused.response.json()) as { errors: { message: string }[] }).errors[0]!.message,
      ).toContain('LIVE_CONNECTIONS_PER_ADDRESS');
      silent.ws.close();
      await held(d, 0);
    } finally {
      await d.close();
    }
  });
});

describe('a key that ends closes its sockets', () => {
  it('revoked in another process: the idle socket is closed with 4403 at the next recheck', async () => {
    const d = await door({ live: { keyRecheckMs: 100 } });
    try {
      const doomed = await key();
      const idle = connect(d.url, doomed);
      expect(await idle.acknowledged).toBe(true);
      await revokeApiKey(t.database.collections, doomed, new Date(now));
      const closed = await closedWithin(idle, 5000);
      expect(closed, 'the socket is still open').not.toBeNull();
      expect(closed!.code).toBe(4403);
      expect(closed!.reason).toMatch(/^UNAUTHENTICATED: .*no longer valid/);
      await held(d, 0);
    } finally {
      await d.close();
    }
  });

  it('revoked by revokeApiKey here: the stream ends (UNAUTHENTICATED), then its socket closes (4403)', async () => {
    // Rechecks far apart: what closes the socket is the revocation itself.
    const d = await door({ live: { keyRecheckMs: 600_000 } });
    try {
      const admin = await key();
      const doomed = await key();
      const following = connect(d.url, doomed);
      const idle = connect(d.url, doomed);
      expect(await following.acknowledged).toBe(true);
      expect(await idle.acknowledged).toBe(true);
      following.follow('r');
      await until(() => d.gateway.live.counts().streams === 1, 'the stream open');
      const response = await fetch(`${d.origin}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${admin}` },
        body: JSON.stringify({
          query: 'mutation Revoke($k: ID!) { revokeApiKey(keyId: $k) { revoked } }',
          variables: { k: doomed },
        }),
      });
      expect((await response.json()).data.revokeApiKey.revoked).toBe(true);
      for (const connection of [idle, following]) {
        const closed = await closedWithin(connection, 5000);
        expect(closed, 'the socket is still open').not.toBeNull();
        expect(closed!.code).toBe(4403);
        expect(closed!.reason).toMatch(/^UNAUTHENTICATED: .*no longer valid/);
      }
      // The stream said why it ended before its socket closed.
      const last = following.messages.filter((m) => m.type === 'next').at(-1)!;
      expect(codesOf(last.payload as ExecutionResult)).toEqual(['UNAUTHENTICATED']);
      expect(following.messages.at(-1)!.type).toBe('complete');
      await held(d, 0);
    } finally {
      await d.close();
    }
  });

  it('expired by the gateway’s clock: the socket is closed with 4403 at the next recheck', async () => {
    const d = await door({ clock: () => new Date(now), live: { keyRecheckMs: 100 } });
    try {
      const brief = await key(new Date(now + 3_600_000));
      const idle = connect(d.url, brief);
      expect(await idle.acknowledged).toBe(true);
      expect(await closedWithin(idle, 300)).toBeNull();
      // Two hours later, by the gateway's clock (no timer of an hour ever fires here).
      now += 2 * 3_600_000;
      const closed = await closedWithin(idle, 5000);
      expect(closed, 'the socket is still open').not.toBeNull();
      expect(closed!.code).toBe(4403);
      expect(closed!.reason).toMatch(/^UNAUTHENTICATED: /);
    } finally {
      await d.close();
    }
  });
});
