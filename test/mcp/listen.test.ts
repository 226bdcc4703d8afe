import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGateway, type GatewayOptions } from '../../src/http/app.js';
import { revokeApiKey } from '../../src/store/workspaces.js';
import { testServerUri } from '../helpers/database.js';
import { openTestGateway, type TestGateway } from '../helpers/gateway.js';
import { streamsFollowing } from '../helpers/live.js';
import {
  currentMcpClient,
  type Fetcher,
  type JsonRpcMessage,
  postListen,
  sseMessages,
} from '../helpers/mcp.js';
import { spawnGateway } from '../helpers/spawnGateway.js';
import { until } from '../helpers/until.js';

/**
 * Following datasets over MCP 2026-07-28 (src/mcp/listen.ts): a `subscriptions/listen` on
 * memory://dataset/{name}, with the SDK's v2 client and by hand where the client hides the
 * wire: acknowledged, each change announced, then told by what_changed from the cursor the
 * agent kept; on every replica; within its workspace; refused before streaming; each
 * announcement in a fairness slot; ended by the key's revocation; coalesced while unread;
 * its streams freed when the client leaves.
 */

type Gateway = ReturnType<typeof createGateway>;
let t: TestGateway;
const gateways: Gateway[] = [];
const clients: Client[] = [];
const children: ChildProcess[] = [];

beforeAll(async () => {
  t = await openTestGateway({
    demoWorkspaces: [],
    // Other processes' writes are read every 100 ms; a revoked key is seen within 100 ms.
    gateway: { live: { pollMs: 100, keyRecheckMs: 100 } },
  });
});

afterAll(async () => {
  for (const client of clients) await client.close().catch(() => {});
  for (const gateway of [t.gateway, ...gateways]) gateway.beginShutdown();
  for (const child of children) child.kill('SIGKILL');
});

/** Another gateway process's worth of state (its own live streams, limits) on the test database. */
function gatewayWith(options: Partial<GatewayOptions>): Gateway {
  const gateway = createGateway({ database: t.database, keyUseFlushMs: 0, ...options });
  gateways.push(gateway);
  return gateway;
}

const inProcess =
  (gateway: Gateway = t.gateway): Fetcher =>
  (request) =>
    gateway.fetch(request);
const uriOf = (dataset: string) => `memory://dataset/${dataset}`;

/** An agent on the v2 client, and the URIs announced to it, in order. */
async function agent(key: string, send = inProcess(), origin = 'http://gateway.test') {
  const client = await currentMcpClient(origin, key, send);
  clients.push(client);
  const announced: string[] = [];
  client.setNotificationHandler('notifications/resources/updated', (notification) => {
    announced.push(notification.params.uri);
  });
  return { client, announced };
}

const announcedTo = (a: { announced: string[] }, n: number, what: string) =>
  until(() => a.announced.length >= n, `${what} (${n} announcements)`);

async function call(client: Client, name: string, args: Record<string, unknown>) {
  const result = await client.callTool({ name, arguments: args });
  expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
  return result.structuredContent as Record<string, unknown>;
}

/** One change: a memory created. */
const remember = (client: Client, dataset: string, text: string) =>
  call(client, 'create_memory', { dataset, input: { text } });

type Change = { kind: string; memory: { text: string } | null };

/** what_changed from `after` to the end of the feed: the changes told, and the cursor to keep. */
async function whatChanged(client: Client, dataset: string, after: string | null) {
  const changes: Change[] = [];
  let cursor = after;
  for (;;) {
    const page = (await call(client, 'what_changed', {
      dataset,
      ...(cursor ? { after: cursor } : {}),
    })) as { changes: Change[]; cursor: string | null; hasMore: boolean };
    changes.push(...page.changes);
    cursor = page.cursor ?? cursor;
    if (!page.hasMore) return { changes, cursor };
  }
}

const kinds = (changes: Change[]) => changes.map((c) => c.kind);
const texts = (changes: Change[]) => changes.map((c) => c.memory?.text);

const ACK = 'notifications/subscriptions/acknowledged';
const UPDATED = 'notifications/resources/updated';

describe('following a dataset over MCP 2026-07-28', () => {
  it('acknowledged with the honored filter; each write announced with its URI; what_changed tells it from the cursor kept', async () => {
    const ds = 'follow-agent';
    const key = await t.key('acme', ['read', 'write']);
    const [a, other] = [await agent(key), await agent(key)];
    await remember(a.client, ds, 'where it begins');
    const sub = await a.client.listen({ resourceSubscriptions: [uriOf(ds)] });
    expect(sub.honoredFilter).toEqual({ resourceSubscriptions: [uriOf(ds)] });
    // The dataset's watch has read where its feed ends, what "from now" means: the ack does
    // not wait for that read, so a write racing it could count as before the listen.
    await streamsFollowing(t.gateway.live, 1);
    // Once after the ack: what the dataset holds so far, and the cursor to keep.
    let { changes, cursor } = await whatChanged(a.client, ds, null);
    expect(texts(changes)).toEqual(['where it begins']);
    // The agent's own write (one change): announced once, then told.
    await remember(a.client, ds, 'the agent wrote this');
    await announcedTo(a, 1, 'the memory announced');
    ({ changes, cursor } = await whatChanged(a.client, ds, cursor));
    expect(texts(changes)).toEqual(['the agent wrote this']);
    expect(a.announced).toEqual([uriOf(ds)]);
    // Another client's episode (two changes): announced, and both told from the cursor kept.
    const episode = {
      episodeId: randomUUID(),
      occurredAt: '2025-01-01T10:00:00Z',
      source: 'chat',
      content: 'user: I drink tea',
    };
    const fact = { subject: 'user', predicate: 'drinks', object: 'tea', confidence: 0.9 };
    await call(other.client, 'record_episode', { dataset: ds, input: { episode, facts: [fact] } });
    await announcedTo(a, 2, 'the episode announced');
    expect(kinds((await whatChanged(a.client, ds, cursor)).changes)).toEqual([
      'EPISODE_RECORDED',
      'FACT_RECORDED',
    ]);
    expect(new Set(a.announced)).toEqual(new Set([uriOf(ds)]));
    await sub.close();
    await streamsFollowing(t.gateway.live, 0);
  });

  it('every replica announces every change: a write through another gateway process is announced here', {
    timeout: 120_000,
  }, async () => {
    // Another process, not another createGateway in this one: writes of this process wake
    // its watches directly (store/changes.ts localFeedWrites), so only another process's
    // write shows that the listen follows the feed itself.
    const replica = await spawnGateway({
      MONGODB_URI: testServerUri(),
      MONGODB_DB: t.database.db.databaseName,
      HOST: '127.0.0.1',
      RATE_LIMIT_PER_MINUTE: '0',
      LOG_LEVEL: 'warn',
    });
    children.push(replica.child);
    const ds = 'follow-replicated';
    const key = await t.key('acme', ['read', 'write']);
    const here = await agent(key);
    const there = await agent(key, (r) => fetch(r), `http://127.0.0.1:${replica.port}`);
    await remember(there.client, ds, 'written there first');
    const sub = await here.client.listen({ resourceSubscriptions: [uriOf(ds)] });
    await streamsFollowing(t.gateway.live, 1);
    const { cursor } = await whatChanged(here.client, ds, null);
    await remember(there.client, ds, 'written there, announced here');
    await announcedTo(here, 1, "the other process's write announced here");
    expect(here.announced).toEqual([uriOf(ds)]);
    expect(texts((await whatChanged(here.client, ds, cursor)).changes)).toEqual([
      'written there, announced here',
    ]);
    await sub.close();
    await streamsFollowing(t.gateway.live, 0);
  });

  it('workspace isolation: the same URI in another workspace is another dataset; its writes are not announced here', async () => {
    const ds = 'follow-same-name';
    const acme = await agent(await t.key('acme', ['read', 'write']));
    const globex = await agent(await t.key('globex', ['read', 'write']));
    for (const a of [acme, globex]) await remember(a.client, ds, 'begins');
    const subs = await Promise.all(
      [acme, globex].map((a) => a.client.listen({ resourceSubscriptions: [uriOf(ds)] })),
    );
    await streamsFollowing(t.gateway.live, 2);
    const { cursor } = await whatChanged(acme.client, ds, null);
    // Each write is announced to its own workspace's listener; the one announced after the
    // other workspace's write is the proof that write was not (the stream is in order).
    await remember(globex.client, ds, 'globex 1');
    await announcedTo(globex, 1, 'globex told of its write');
    await remember(acme.client, ds, 'acme 1');
    await announcedTo(acme, 1, 'acme told of its write');
    await remember(globex.client, ds, 'globex 2');
    await announcedTo(globex, 2, 'globex told of its second write');
    expect(acme.announced).toEqual([uriOf(ds)]);
    expect(globex.announced).toEqual([uriOf(ds), uriOf(ds)]);
    expect(texts((await whatChanged(acme.client, ds, cursor)).changes)).toEqual(['acme 1']);
    for (const sub of subs) await sub.close();
    await streamsFollowing(t.gateway.live, 0);
  });

  it('refused before streaming: not a dataset’s URI, a dataset the workspace lacks, a key without read, past LIVE_STREAMS_PER_KEY', async () => {
    const key = await t.key('acme', ['read', 'write']);
    const writer = (await agent(key)).client;
    for (const ds of ['follow-near', 'follow-capped']) await remember(writer, ds, 'exists');
    const refusal = async (datasets: string[], as = key, send = inProcess()) => {
      const uris = datasets.map((d) => (d.includes(':') ? d : uriOf(d)));
      const { id, response } = await postListen(send, as, uris);
      expect(response.headers.get('content-type')).toContain('application/json');
      const body = (await response.json()) as JsonRpcMessage;
      expect(body.id).toBe(id);
      return { status: response.status, retryAfter: response.headers.get('retry-after'), ...body };
    };
    const notDataset = await refusal(['file:///etc/passwd']);
    expect(notDataset).toMatchObject({ status: 200, error: { code: -32602 } });
    expect(notDataset.error!.message).toContain("is not a dataset's URI");
    expect(notDataset.error!.data?.uri).toBeUndefined();
    const many = Array.from({ length: 101 }, (_, i) => `many-${i}`);
    expect((await refusal(many)).error!.message).toContain('at most 100');
    // Resource not found: -32602 with the URI in data (2026-07-28), the nearest names said.
    const near = await refusal(['follow-nears']);
    expect(near).toMatchObject({ status: 200, error: { code: -32602 } });
    expect(near.error!.data?.uri).toBe(uriOf('follow-nears'));
    expect(near.error!.message).toContain('did you mean "follow-near"?');
    const far = await refusal(['zz-nothing-like-it']);
    expect(far.error).toMatchObject({ code: -32602, data: { uri: uriOf('zz-nothing-like-it') } });
    expect(far.error!.message).not.toContain('did you mean');
    // Another workspace's dataset is one this workspace lacks.
    const theirs = await refusal(['follow-near'], await t.key('globex', ['read']));
    expect(theirs.error).toMatchObject({ code: -32602, data: { uri: uriOf('follow-near') } });
    const writeOnly = await refusal(['follow-near'], await t.key('acme', ['write']));
    expect(writeOnly).toMatchObject({ status: 200, error: { code: -32000 } });
    expect(writeOnly.error!.data?.code).toBe('FORBIDDEN');
    expect(writeOnly.error!.message).toMatch(/^FORBIDDEN: /);
    expect(t.gateway.live.counts().streams).toBe(0);
    // Past the key's cap: 429 with Retry-After; the streams this listen opened are closed again.
    const capped = gatewayWith({ live: { maxStreamsPerKey: 2 } });
    const a = await agent(key, inProcess(capped));
    const sub = await a.client.listen({ resourceSubscriptions: [uriOf('follow-near')] });
    await streamsFollowing(capped.live, 1);
    const past = await refusal(['follow-near', 'follow-capped'], key, inProcess(capped));
    expect(past).toMatchObject({ status: 429, error: { code: -32000 } });
    expect(past.error!.data?.code).toBe('RATE_LIMITED');
    expect(past.error!.message).toContain('LIVE_STREAMS_PER_KEY');
    expect(Number(past.retryAfter)).toBeGreaterThan(0);
    // The caps are decided before any dataset is looked up: 100 unknown names, refused at once.
    const unknown = Array.from({ length: 100 }, (_, i) => `zz-unknown-${i}`);
    expect(await refusal(unknown, key, inProcess(capped))).toMatchObject({
      status: 429,
      error: { data: { code: 'RATE_LIMITED' } },
    });
    expect(capped.live.counts().streams).toBe(1);
    await sub.close();
    await streamsFollowing(capped.live, 0);
  });

  it('each announcement takes one of the workspace’s fairness slots: none is delivered while they are all taken', async () => {
    const ds = 'follow-fair';
    const key = await t.key('acme', ['read', 'write']);
    const fair = gatewayWith({ workspaceConcurrency: 1, workspaceQueue: 0 });
    const held = await agent(key, inProcess(fair));
    // The same listen where slots are free: the moment its announcement arrives is the
    // moment the held-back one would have, were it not waiting for the slot.
    const control = await agent(key);
    await remember(control.client, ds, 'begins');
    const subs = [
      await held.client.listen({ resourceSubscriptions: [uriOf(ds)] }),
      await control.client.listen({ resourceSubscriptions: [uriOf(ds)] }),
    ];
    await streamsFollowing(fair.live, 1);
    await streamsFollowing(t.gateway.live, 1);
    // The open listen holds no slot: a request runs.
    await whatChanged(held.client, ds, null);
    const slot = await holdSlot(fair, key);
    await remember(control.client, ds, 'written while the slot is taken');
    await announcedTo(control, 1, 'announced where slots are free');
    expect(held.announced, 'announced while the slot was taken').toEqual([]);
    await slot.release();
    await announcedTo(held, 1, 'announced once the slot is free');
    expect(held.announced).toEqual([uriOf(ds)]);
    for (const sub of subs) await sub.close();
    await streamsFollowing(fair.live, 0);
    await streamsFollowing(t.gateway.live, 0);
  });

  it('revoking the key ends the listen with UNAUTHENTICATED for its id, and frees its streams', async () => {
    const ds = 'follow-revoked';
    const key = await t.key('acme', ['read', 'write']);
    await remember((await agent(key)).client, ds, 'begins');
    const { id, response } = await postListen(inProcess(), key, [uriOf(ds)]);
    const frames = sseMessages(response);
    expect((await frames.next('the ack'))?.method).toBe(ACK);
    await streamsFollowing(t.gateway.live, 1);
    await revokeApiKey(t.database.collections, key);
    const last = await frames.next('the end of the listen');
    expect(last).toMatchObject({ id, error: { code: -32000, data: { code: 'UNAUTHENTICATED' } } });
    expect(last!.error!.message).toMatch(/^UNAUTHENTICATED: .*no longer valid/);
    expect(await frames.next('the stream closed')).toBeNull();
    await streamsFollowing(t.gateway.live, 0);
    expect(t.gateway.live.counts().keys).toBe(0);
  });

  it('the acknowledgement waits until the feed position is fixed: a change right after it is announced', async () => {
    const ds = 'follow-from-ack';
    const key = await t.key('acme', ['read', 'write']);
    const writer = (await agent(key)).client;
    await remember(writer, ds, 'begins');
    const { response } = await postListen(inProcess(), key, [uriOf(ds)]);
    // The answer is in hand: the dataset's watch has already read where the feed ends (its
    // read is I/O, which no number of microtasks completes), so nothing committed from now
    // on can count as "before the listen" and be told to no one.
    let fixed = false;
    void t.gateway.live.watches.started().then(() => {
      fixed = true;
    });
    for (let i = 0; i < 20 && !fixed; i++) await Promise.resolve();
    expect(fixed, "the feed's position read before the answer").toBe(true);
    const frames = sseMessages(response);
    expect((await frames.next('the ack'))?.method).toBe(ACK);
    await remember(writer, ds, 'right after the ack');
    expect(await frames.next('the announcement')).toMatchObject({
      method: UPDATED,
      params: { uri: uriOf(ds) },
    });
    await frames.cancel();
    await streamsFollowing(t.gateway.live, 0);
  });

  it('changes while the announcement is unread: announced after, and what_changed tells every one', async () => {
    const ds = 'follow-unread';
    const key = await t.key('acme', ['read', 'write']);
    const writer = (await agent(key)).client;
    await remember(writer, ds, 'begins');
    const { response } = await postListen(inProcess(), key, [uriOf(ds)]);
    const frames = sseMessages(response);
    expect((await frames.next('the ack'))?.method).toBe(ACK);
    await streamsFollowing(t.gateway.live, 1);
    let { cursor } = await whatChanged(writer, ds, null);
    // Nothing is read from the stream while six changes land.
    const first = ['one', 'two', 'three', 'four', 'five', 'six'];
    for (const text of first) await remember(writer, ds, text);
    const next = await frames.next('an announcement of the unread changes');
    expect(next).toMatchObject({ method: UPDATED, params: { uri: uriOf(ds) } });
    let told = await whatChanged(writer, ds, cursor);
    expect(texts(told.changes)).toEqual(first);
    cursor = told.cursor;
    // Changes after the agent caught up are announced again: on each announcement it asks.
    await remember(writer, ds, 'seven');
    await remember(writer, ds, 'eight');
    const later: Change[] = [];
    while (later.length < 2) {
      expect(await frames.next('an announcement of the later changes')).toMatchObject({
        method: UPDATED,
        params: { uri: uriOf(ds) },
      });
      told = await whatChanged(writer, ds, cursor);
      later.push(...told.changes);
      cursor = told.cursor;
    }
    expect(texts(later)).toEqual(['seven', 'eight']);
    await frames.cancel();
    await streamsFollowing(t.gateway.live, 0);
  });

  it("a client leaving (its listen closed, its connection gone, its request aborted) frees the key's live stream", async () => {
    const ds = 'follow-leaving';
    const key = await t.key('acme', ['read', 'write']);
    const one = gatewayWith({ live: { maxStreamsPerKey: 1 } });
    const a = await agent(key, inProcess(one));
    await remember(a.client, ds, 'begins');
    const sub = await a.client.listen({ resourceSubscriptions: [uriOf(ds)] });
    await streamsFollowing(one.live, 1);
    // The key's one place is taken...
    const refused = await postListen(inProcess(one), key, [uriOf(ds)]);
    expect(refused.response.status).toBe(429);
    await refused.response.body?.cancel();
    // ...and freed when the client closes its listen,
    await sub.close();
    expect(await sub.closed).toBe('local');
    await streamsFollowing(one.live, 0);
    expect(one.live.counts().keys).toBe(0);
    // when it stops reading the answer (what its connection closing does),
    const stopped = sseMessages((await postListen(inProcess(one), key, [uriOf(ds)])).response);
    expect((await stopped.next('the ack once the place is free'))?.method).toBe(ACK);
    await streamsFollowing(one.live, 1);
    await stopped.cancel();
    await streamsFollowing(one.live, 0);
    // and when its request is aborted.
    const leaving = new AbortController();
    const raw = await postListen(inProcess(one), key, [uriOf(ds)], leaving.signal);
    const aborted = sseMessages(raw.response);
    expect((await aborted.next('the ack once the place is free again'))?.method).toBe(ACK);
    await streamsFollowing(one.live, 1);
    leaving.abort();
    await streamsFollowing(one.live, 0);
    expect(one.live.counts().keys).toBe(0);
    await aborted.cancel();
    const again = await a.client.listen({ resourceSubscriptions: [uriOf(ds)] });
    expect(again.honoredFilter).toEqual({ resourceSubscriptions: [uriOf(ds)] });
    await again.close();
    await streamsFollowing(one.live, 0);
  });
});

/**
 * Holds the workspace's one slot on `gateway`: a GraphQL request whose body has not finished
 * arriving (its length announced, so the edge passes it on; a media type Yoga reads inside
 * the slot). Held once a probe is refused; a probe that took the slot first refuses the held
 * request instead, which is then sent again.
 */
async function holdSlot(gateway: Gateway, key: string) {
  const query = '{ viewer { workspace } }';
  const bytes = new TextEncoder().encode(query);
  const graphql = async (body: BodyInit, headers: Record<string, string>) =>
    gateway.fetch(
      new Request('http://gateway.test/graphql', {
        method: 'POST',
        body,
        headers: { authorization: `Bearer ${key}`, ...headers },
        duplex: 'half',
      } as RequestInit),
    );
  for (;;) {
    let finish!: () => void;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes.slice(0, 5));
        finish = () => {
          controller.enqueue(bytes.slice(5));
          controller.close();
        };
      },
    });
    let answered: number | null = null;
    const headers = { 'content-type': 'application/graphql', 'content-length': `${bytes.length}` };
    const held = graphql(body, headers).then((r) => (answered = r.status));
    let refused = false;
    await until(async () => {
      const probe = await graphql(JSON.stringify({ query }), {
        'content-type': 'application/json',
      });
      await probe.arrayBuffer();
      refused = probe.status === 429;
      return refused || answered !== null;
    }, 'the held request in the slot (a probe refused)');
    if (refused) {
      return {
        release: async () => {
          finish();
          expect(await held).toBe(200);
        },
      };
    }
    finish();
  }
}
