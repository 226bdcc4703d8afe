import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { GraphQLFormattedError } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { listen } from '../../src/http/server.js';
import { serveGraphqlWebSocket } from '../../src/http/webSocket.js';
import { recordEpisode } from '../../src/store/recordEpisode.js';
import { revokeApiKey } from '../../src/store/workspaces.js';
import { LiveDatasetChangesDocument } from '../generated/operations.js';
import { episodeInput, factInput, testTenant } from '../helpers/episodeInput.js';
import { openTestGateway, type TestGateway } from '../helpers/gateway.js';
import { codesOf, streamsFollowing, subscribeWs } from '../helpers/live.js';
import { until } from '../helpers/until.js';

/**
 * GraphQL over WebSocket (graphql-ws) on /graphql, with graphql-ws's own client over a real
 * loopback listener: the same subscription as over SSE, the key in connection_init, the
 * Host and Origin rules at the upgrade, and shutdown closing every socket as "going away".
 */

let t: TestGateway;
let server: Server;
let webSocket: ReturnType<typeof serveGraphqlWebSocket>;
let url: string;
let reader: string;

beforeAll(async () => {
  t = await openTestGateway({
    demoWorkspaces: [],
    gateway: { live: { keyRecheckMs: 100 }, corsOrigins: ['http://app.example'] },
  });
  reader = await t.key('acme', ['read']);
  server = await new Promise<Server>((resolve) => {
    const s = listen(t.gateway.fetch, { port: 0, hostname: '127.0.0.1' }, () => resolve(s));
  });
  // The default keep-alive (12 s, longer than this file runs): a connection whose pong is
  // late by more than the keep-alive is terminated, and on a loaded machine this process
  // (both the server and its clients) can be late by a fraction of a second.
  webSocket = serveGraphqlWebSocket(server, t.gateway, {
    allowedHosts: ['127.0.0.1', 'localhost'],
  });
  url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
});

afterAll(async () => {
  t.gateway.beginShutdown();
  await webSocket.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** A listener of its own over the same gateway, with its own WebSocket options. */
async function ownListener(options: Parameters<typeof serveGraphqlWebSocket>[2] = {}) {
  const own = await new Promise<Server>((resolve) => {
    const s = listen(t.gateway.fetch, { port: 0, hostname: '127.0.0.1' }, () => resolve(s));
  });
  const ws = serveGraphqlWebSocket(own, t.gateway, options);
  return {
    url: `ws://127.0.0.1:${(own.address() as AddressInfo).port}/graphql`,
    close: async () => {
      await ws.close();
      own.closeAllConnections();
      await new Promise((resolve) => own.close(resolve));
    },
  };
}

const record = (dataset: string, object = 'a Honda Civic') =>
  recordEpisode(
    t.database.collections,
    testTenant('acme', dataset),
    episodeInput([factInput('user', 'drives', object)]),
    new Date(),
  );

/**
 * Waits until the gateway has `n` streams open and following their feeds from where they
 * ended (so a change written next reaches a stream without a cursor).
 */
const streamsOpen = (n: number) => streamsFollowing(t.gateway.live, n);

describe('Subscription.datasetChanges over graphql-ws', () => {
  it('replays after a cursor, then goes live', async () => {
    const ds = 'ws-live';
    await record(ds);
    await record(ds, 'a Toyota');
    const sub = subscribeWs(url, LiveDatasetChangesDocument, { dataset: ds, after: null }, reader);
    await streamsOpen(1);
    await record(ds, 'a bike');
    const live = (await sub.results(2)).map((r) => r.data!.datasetChanges);
    expect(live.map((e) => e.kind)).toEqual(['EPISODE_RECORDED', 'FACT_RECORDED']);
    sub.close();
    await streamsOpen(0);
    // From the first change's cursor: everything after it, the live ones included.
    const first = subscribeWs(
      url,
      LiveDatasetChangesDocument,
      { dataset: ds, after: live[0]!.cursor },
      reader,
    );
    const replay = (await first.results(1)).map((r) => r.data!.datasetChanges);
    expect(replay[0]!.id).toBe(live[1]!.id);
    first.close();
    await streamsOpen(0);
  });

  it('an idle connection is pinged (the heartbeat that keeps proxies from closing it)', async () => {
    // A short keep-alive, on a listener of its own: the ping comes soon.
    const own = await ownListener({ allowedHosts: ['127.0.0.1'], keepAliveMs: 200 });
    try {
      const idle = new WebSocket(own.url, 'graphql-transport-ws');
      const pinged = new Promise<void>((resolve) => idle.once('ping', () => resolve()));
      await new Promise<void>((resolve) => idle.once('open', () => resolve()));
      idle.send(
        JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${reader}` } }),
      );
      await pinged;
      idle.close();
    } finally {
      await own.close();
    }
  });

  it('a connection without a valid key is closed (4403) before it can subscribe', async () => {
    const sub = subscribeWs(url, LiveDatasetChangesDocument, { dataset: 'x', after: null }, null);
    // The close says why, in the gateway's words (graphql-ws's own would be "Forbidden").
    const missing = await sub.closed;
    expect(missing.code).toBe(4403);
    expect(missing.reason).toMatch(/^UNAUTHENTICATED: .*key/);
    const bad = subscribeWs(
      url,
      LiveDatasetChangesDocument,
      { dataset: 'x', after: null },
      'mk_nope',
    );
    const invalid = await bad.closed;
    expect(invalid.code).toBe(4403);
    expect(invalid.reason).toMatch(/^UNAUTHENTICATED: .*key/);
    expect(invalid.reason).not.toBe(missing.reason);
  });

  it('scopes and limits apply per subscription, in the protocol’s error message', async () => {
    const writer = await t.key('acme', ['write']);
    const sub = subscribeWs(url, LiveDatasetChangesDocument, { dataset: 'x', after: null }, writer);
    // Refused before it ran: graphql-ws's `error` message, with the gateway's code only.
    const { error } = await sub.ended;
    expect(sub.received).toEqual([]);
    expect((error as GraphQLFormattedError[]).map((e) => e.extensions?.code)).toEqual([
      'FORBIDDEN',
    ]);
    expect(JSON.stringify(error)).not.toContain('"http"');
    sub.close();
  });

  it('an Origin neither allowed (CORS_ORIGINS) nor the gateway’s own is refused at the upgrade', async () => {
    const foreign = subscribeWs(
      url,
      LiveDatasetChangesDocument,
      { dataset: 'x', after: null },
      reader,
      { origin: 'http://evil.example' },
    );
    expect((await foreign.closed).code).not.toBe(1000);
    expect(t.gateway.live.counts().streams).toBe(0);
    const allowed = subscribeWs(
      url,
      LiveDatasetChangesDocument,
      { dataset: 'ws-origin', after: null },
      reader,
      { origin: 'http://app.example' },
    );
    await streamsOpen(1);
    allowed.close();
    await streamsOpen(0);
  });

  it('a Host outside ALLOWED_HOSTS is refused (403) at the upgrade', async () => {
    const { request } = await import('node:http');
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(url.replace('ws:', 'http:'), {
        headers: {
          connection: 'Upgrade',
          upgrade: 'websocket',
          host: 'rebound.example',
          'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
          'sec-websocket-version': '13',
        },
      });
      req.on('response', (res) => resolve(res.statusCode ?? 0));
      req.on('upgrade', () => resolve(101));
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(403);
  });

  it('a revoked key’s stream ends with UNAUTHENTICATED', async () => {
    const key = await t.key('acme', ['read']);
    const sub = subscribeWs(url, LiveDatasetChangesDocument, { dataset: 'ws-r', after: null }, key);
    await streamsOpen(1);
    await revokeApiKey(t.database.collections, key);
    await sub.ended;
    expect(codesOf(sub.received.at(-1)!)).toEqual(['UNAUTHENTICATED']);
    sub.close();
    await streamsOpen(0);
  });

  it('shutdown: the stream gets SHUTTING_DOWN, then the socket closes as going away (1001)', async () => {
    const closing = await openTestGateway({ demoWorkspaces: [] });
    const key = await closing.key('acme', ['read']);
    const own = await new Promise<Server>((resolve) => {
      const s = listen(closing.gateway.fetch, { port: 0, hostname: '127.0.0.1' }, () => resolve(s));
    });
    const ws = serveGraphqlWebSocket(own, closing.gateway);
    const ownUrl = `ws://127.0.0.1:${(own.address() as AddressInfo).port}/graphql`;
    const sub = subscribeWs(ownUrl, LiveDatasetChangesDocument, { dataset: 'd', after: null }, key);
    // And a connection that has no subscription (acknowledged, idle).
    const idle = new WebSocket(ownUrl, 'graphql-transport-ws');
    const idleClosed = new Promise<number>((resolve) => idle.on('close', (code) => resolve(code)));
    await new Promise<void>((resolve) => {
      idle.on('open', () =>
        idle.send(
          JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${key}` } }),
        ),
      );
      idle.on('message', (message) => {
        if (JSON.parse(String(message)).type === 'connection_ack') resolve();
      });
    });
    await until(() => closing.gateway.live.counts().streams === 1, 'the stream open');
    closing.gateway.beginShutdown();
    await ws.close();
    await sub.ended;
    expect(codesOf(sub.received.at(-1)!)).toEqual(['SHUTTING_DOWN']);
    expect(await idleClosed).toBe(1001);
    own.closeAllConnections();
    await new Promise((resolve) => own.close(resolve));
  });
});
