import { parse } from 'graphql';
import type { CommandStartedEvent } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRequestContext } from '../../src/context.js';
import { createGraphqlYoga } from '../../src/http/yoga.js';
import { eraseDataset, eraseEpisode } from '../../src/store/erasure.js';
import { recordEpisode } from '../../src/store/recordEpisode.js';
import { revokeApiKey } from '../../src/store/workspaces.js';
import {
  ChangeFeedDocument,
  LiveDatasetChangesDocument,
  type LiveDatasetChangesSubscription,
} from '../generated/operations.js';
import { episodeInput, factInput, testTenant } from '../helpers/episodeInput.js';
import { openTestGateway, type TestGateway } from '../helpers/gateway.js';
import { codesOf, type LiveSubscription, streamsFollowing, subscribeSse } from '../helpers/live.js';
import { until } from '../helpers/until.js';

/**
 * Subscription.datasetChanges over GraphQL over SSE (docs/LIVE_UPDATES.md), with
 * graphql-sse's client through the gateway's fetch: replay then live with no gap and no
 * repeat, one watch per dataset whatever the subscribers, each event resolved afresh,
 * erasure, silence for what the key may not see, and the limits that end or refuse streams.
 */

let t: TestGateway;
let reader: string;
const commands: CommandStartedEvent[] = [];
/**
 * Each request's (and each event's) database time: generous, so that no answer here meets
 * it on a loaded machine, except where a test waits past it on purpose.
 */
const DB_TIMEOUT_MS = 2000;

beforeAll(async () => {
  t = await openTestGateway({
    demoWorkspaces: [],
    clientOptions: { monitorCommands: true },
    gateway: {
      // Only this process's writes wake a watch here; no poll interferes with the counts.
      live: { pollMs: 60_000, maxStreamsPerKey: 50, keyRecheckMs: 100 },
      dbTimeoutMs: DB_TIMEOUT_MS,
    },
  });
  t.database.client.on('commandStarted', (event) => commands.push(event));
  reader = await t.key('acme', ['read']);
});

afterAll(() => {
  t.gateway.live.close();
});

type Event = LiveDatasetChangesSubscription['datasetChanges'];
const eventsOf = (results: { data?: LiveDatasetChangesSubscription | null }[]) =>
  results.map((r) => r.data!.datasetChanges);
const kinds = (events: Event[]) => events.map((e) => e.kind);

function live(dataset: string, after: string | null = null, key = reader) {
  return subscribeSse(
    (request) => t.gateway.fetch(request),
    'http://gateway.test/graphql',
    LiveDatasetChangesDocument,
    { dataset, after },
    key,
  );
}

/**
 * Waits until the gateway has `n` streams open and following their feeds, each watch
 * having read where its feed ends: what a stream without a cursor takes for "now", so
 * a change written after this is delivered live (test/helpers/live.ts).
 */
const streamsOpen = (n: number) => streamsFollowing(t.gateway.live, n);

const record = (dataset: string, facts = [factInput('user', 'drives', 'a Honda Civic')]) =>
  recordEpisode(
    t.database.collections,
    testTenant('acme', dataset),
    episodeInput(facts),
    new Date(),
  );

describe('Subscription.datasetChanges over SSE', () => {
  it('from now: only what is written after it began, then live, in the feed order', async () => {
    const ds = 'live-now';
    await record(ds);
    const sub = live(ds);
    await streamsOpen(1);
    const second = await record(ds, [
      factInput('user', 'likes', 'jazz'),
      factInput('user', 'has', 'a cat'),
    ]);
    const events = eventsOf(await sub.results(3));
    expect(kinds(events)).toEqual(['EPISODE_RECORDED', 'FACT_RECORDED', 'FACT_RECORDED']);
    expect(events[0]!.episode!.episodeId).toBe(second.episode.episodeId);
    expect(events.map((e) => e.fact?.factId ?? null).slice(1)).toEqual(
      second.facts.map((f) => f.factId),
    );
    sub.close();
    await streamsOpen(0);
  });

  it('with a cursor: every change after it first, then live; no gap, no repeat, same ids as the pull feed', async () => {
    const ds = 'live-replay';
    for (let i = 0; i < 3; i++) await record(ds, [factInput('user', 'visited', `city ${i}`)]);
    const pulled = (
      await t.graphql(ChangeFeedDocument, { dataset: ds, first: 50 }, reader)
    ).body.data!.dataset!.changes.edges.map((e) => e.node);
    expect(pulled).toHaveLength(6);
    const sub = live(ds, pulled[1]!.cursor);
    // Writes race the replay: each lands before, during or after it, and arrives once.
    const writes = [record(ds), record(ds)];
    await Promise.all(writes);
    const events = eventsOf(await sub.results(4 + 4));
    expect(events.slice(0, 4).map((e) => e.id)).toEqual(pulled.slice(2).map((c) => c.id));
    expect(new Set(events.map((e) => e.id)).size).toBe(8);
    const after = (
      await t.graphql(
        ChangeFeedDocument,
        { dataset: ds, after: pulled[1]!.cursor, first: 50 },
        reader,
      )
    ).body.data!.dataset!.changes.edges.map((e) => e.node.id);
    expect(events.map((e) => e.id)).toEqual(after);
    // Resuming from an event's cursor continues right after it.
    sub.close();
    const resumed = live(ds, events[5]!.cursor);
    expect(eventsOf(await resumed.results(2)).map((e) => e.id)).toEqual(after.slice(6));
    resumed.close();
    await streamsOpen(0);
  });

  it('each event is resolved as a request of its own: the fact as it is at that event, past DB_TIMEOUT_MS', async () => {
    const ds = 'live-fresh';
    const first = await record(ds);
    const sub = live(ds);
    await streamsOpen(1);
    await record(ds, [factInput('user', 'likes', 'tea')]);
    const early = eventsOf(await sub.results(2));
    expect(early[1]!.fact!.state).toBe('LIVE');
    // Longer than the request's database time (DB_TIMEOUT_MS here): the next event still reads.
    await new Promise((r) => setTimeout(r, DB_TIMEOUT_MS + 100));
    const old = first.facts[0]!.factId;
    await record(ds, [factInput('user', 'drives', 'a Toyota', { supersedes: [old] })]);
    const later = eventsOf(await sub.results(5)).slice(2);
    expect(kinds(later)).toEqual(['EPISODE_RECORDED', 'FACT_RECORDED', 'FACT_SUPERSEDED']);
    expect(later[2]!.fact).toMatchObject({ factId: old, state: 'SUPERSEDED' });
    expect(sub.received.every((r) => r.errors === undefined)).toBe(true);
    sub.close();
    await streamsOpen(0);
  });

  it('one watch per dataset: twenty subscribers cost the database what one does, the loads of each event included', async () => {
    const ds = 'live-shared';
    await record(ds);
    const measure = async (subscribers: number) => {
      const subs: LiveSubscription<LiveDatasetChangesSubscription>[] = [];
      for (let i = 0; i < subscribers; i++) subs.push(live(ds));
      await streamsOpen(subscribers);
      const from = commands.length;
      for (let i = 0; i < 3; i++) {
        await record(ds);
        await Promise.all(subs.map((s) => s.results(2 * (i + 1))));
      }
      // Every command from the first write to the last delivery: the writes', the watch's
      // reads and each event's fact and episode, whatever the subscribers (the key
      // rechecks run on their own clock, once per key).
      const used = commands
        .slice(from)
        .map((c) => String((c.command as { comment?: string }).comment))
        .filter((comment) => comment !== 'store:authenticateApiKey')
        .sort();
      expect(subs.every((s) => s.received.every((r) => r.data?.datasetChanges.episode))).toBe(true);
      for (const s of subs) s.close();
      await streamsOpen(0);
      commands.length = 0;
      return used;
    };
    const one = await measure(1);
    const twenty = await measure(20);
    expect(one).toContain('store:changesAfter');
    expect(one).toContain('store:factsByIds');
    expect(twenty).toEqual(one);
    expect(t.gateway.live.watches.counts()).toEqual({ datasets: 0, followers: 0 });
  });

  it('a dataset that does not exist, or is another workspace’s, is a silent stream', async () => {
    const otherKey = await t.key('globex', ['read', 'write']);
    await recordEpisode(
      t.database.collections,
      testTenant('globex', 'live-secret'),
      episodeInput([factInput('ceo', 'plans', 'a merger')]),
      new Date(),
    );
    await record('live-own');
    const foreign = live('live-secret');
    const missing = live('live-never');
    const own = live('live-own');
    await streamsOpen(3);
    await recordEpisode(
      t.database.collections,
      testTenant('globex', 'live-secret'),
      episodeInput([factInput('ceo', 'plans', 'a sale')]),
      new Date(),
    );
    await record('live-own');
    await own.results(2);
    await new Promise((r) => setTimeout(r, 100));
    expect(foreign.received).toEqual([]);
    expect(missing.received).toEqual([]);
    // The other workspace's own subscriber does see it.
    const theirs = live('live-secret', null, otherKey);
    await streamsOpen(4);
    for (const s of [foreign, missing, own, theirs]) s.close();
    await streamsOpen(0);
  });

  it('erasure: an erased episode’s changes are gone from the replay, the erasure itself is a change', async () => {
    const ds = 'live-erase';
    const kept = await record(ds);
    const gone = await record(ds, [factInput('user', 'said', 'a secret')]);
    const sub = live(ds);
    await streamsOpen(1);
    await eraseEpisode(
      t.database.collections,
      testTenant('acme', ds),
      gone.episode.episodeId,
      { keyId: 'test' },
      new Date(),
    );
    const [erased] = eventsOf(await sub.results(1));
    expect(erased).toMatchObject({
      kind: 'EPISODE_ERASED',
      fact: null,
      episode: null,
      erased: { facts: 1, episodes: 1 },
    });
    const replay = live(
      ds,
      (await t.graphql(ChangeFeedDocument, { dataset: ds, first: 1 }, reader)).body.data!.dataset!
        .changes.edges[0]!.cursor,
    );
    const replayed = eventsOf(await replay.results(2));
    expect(kinds(replayed)).toEqual(['FACT_RECORDED', 'EPISODE_ERASED']);
    expect(replayed[0]!.fact!.factId).toBe(kept.facts[0]!.factId);
    await eraseDataset(
      t.database.collections,
      testTenant('acme', ds),
      { keyId: 'test' },
      new Date(),
    );
    const [wholesale] = eventsOf(await sub.results(2)).slice(1);
    expect(wholesale).toMatchObject({ kind: 'DATASET_ERASED', erased: { facts: 1, episodes: 1 } });
    // Written again: the new feed follows, from its start.
    await record(ds);
    expect(kinds(eventsOf(await sub.results(4)).slice(2))).toEqual([
      'EPISODE_RECORDED',
      'FACT_RECORDED',
    ]);
    sub.close();
    replay.close();
    await streamsOpen(0);
  });
});

describe('what ends or refuses a stream', () => {
  it('refused before it opens, with the status and the error in its body: no key, no read scope, a malformed cursor, over the cost limits', async () => {
    const writer = await t.key('acme', ['write']);
    const refusal = async (query: string, key: string | null, variables = {}) => {
      const response = await t.request('/graphql', {
        method: 'POST',
        key,
        headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
        body: JSON.stringify({ query, variables }),
      });
      const text = await response.text();
      // The key's 401 is the edge's, in GraphQL's JSON shape; the rest are SSE events.
      const [, data = text] = /data: (.*)\n/.exec(text) ?? [];
      return { status: response.status, codes: codesOf(JSON.parse(data)), text };
    };
    const subscription = 'subscription { datasetChanges(dataset: "live-any") { id } }';
    expect(await refusal(subscription, null)).toMatchObject({
      status: 401,
      codes: ['UNAUTHENTICATED'],
    });
    expect(await refusal(subscription, writer)).toMatchObject({
      status: 403,
      codes: ['FORBIDDEN'],
    });
    const cursor = await refusal(
      'subscription { datasetChanges(dataset: "x", after: "zz") { id } }',
      reader,
    );
    expect(cursor.codes).toEqual(['BAD_USER_INPUT']);
    // Variables that could not be stored as sent (a lone surrogate) or of the wrong type.
    const followed = 'subscription($d: String!) { datasetChanges(dataset: $d) { id } }';
    expect((await refusal(followed, reader, { d: '\ud800' })).codes).toEqual(['BAD_USER_INPUT']);
    expect((await refusal(followed, reader, { d: 5 })).codes).toEqual(['BAD_USER_INPUT']);
    const costly = await refusal(
      'subscription { datasetChanges(dataset: "x") { fact { subjectEntity { facts(first: 1000) { subjectEntity { facts(first: 1000) { factId } } } } } } }',
      reader,
    );
    // A limit on the document is a request error GraphQL over HTTP answers with 200 here, as on a query.
    expect(costly).toMatchObject({ status: 200, codes: ['QUERY_TOO_COMPLEX'] });
    expect(costly.text).toContain('"measure":"cost"');
    // The client library reports the refusal as the HTTP error it is.
    const viaClient = live('live-any', null, writer);
    expect(String((await viaClient.ended).error)).toContain('403');
    expect(t.gateway.live.counts().streams).toBe(0);
  });

  it('per key: past LIVE_STREAMS_PER_KEY a subscription is RATE_LIMITED, and one closing frees its place', async () => {
    const limited = await openTestGateway({
      demoWorkspaces: [],
      gateway: { live: { maxStreamsPerKey: 2, maxStreams: 3 } },
    });
    const key = await limited.key('acme', ['read']);
    const other = await limited.key('acme', ['read']);
    const open = (k: string) =>
      subscribeSse(
        (r) => limited.gateway.fetch(r),
        'http://gateway.test/graphql',
        LiveDatasetChangesDocument,
        { dataset: 'd', after: null },
        k,
      );
    const a = open(key);
    const b = open(key);
    const limitedOpen = (n: number) =>
      until(() => limited.gateway.live.counts().streams === n, `${n} streams open`);
    await limitedOpen(2);
    const c = open(key);
    await c.ended;
    expect(codesOf(c.received[0]!)).toEqual(['RATE_LIMITED']);
    expect(c.received[0]!.errors![0]!.message).toContain('LIVE_STREAMS_PER_KEY');
    const d = open(other);
    await limitedOpen(3);
    const e = open(other);
    await e.ended;
    expect(e.received[0]!.errors![0]!.message).toContain('LIVE_STREAMS');
    a.close();
    await limitedOpen(2);
    const f = open(key);
    await limitedOpen(3);
    expect(f.received).toEqual([]);
    for (const s of [b, d, f]) s.close();
    limited.gateway.live.close();
  });

  it('a revoked key’s streams end (UNAUTHENTICATED) within the key recheck', async () => {
    const key = await t.key('acme', ['read']);
    const sub = live('live-revoked', null, key);
    await streamsOpen(1);
    await revokeApiKey(t.database.collections, key);
    const { error } = await sub.ended;
    expect(error).toBeNull();
    expect(codesOf(sub.received.at(-1)!)).toEqual(['UNAUTHENTICATED']);
    await streamsOpen(0);
  });

  it('a consumer that falls behind LIVE_BUFFER changes is ended with STREAM_OVERFLOW, saying to resume', async () => {
    const small = await openTestGateway({
      demoWorkspaces: [],
      gateway: { live: { bufferLimit: 3 } },
    });
    const key = await small.key('acme', ['read']);
    const response = await small.request('/graphql', {
      method: 'POST',
      key,
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({
        query: 'subscription { datasetChanges(dataset: "slow") { id kind } }',
      }),
    });
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    // The first chunk (the heartbeat) is read, so the stream has begun; once it follows the
    // feed, nothing more is read while ten changes are written.
    const body = response.body!.getReader();
    await body.read();
    await streamsFollowing(small.gateway.live, 1);
    await recordEpisode(
      small.database.collections,
      testTenant('acme', 'slow'),
      episodeInput(Array.from({ length: 9 }, (_, i) => factInput('user', 'owns', `book ${i}`))),
      new Date(),
    );
    let text = '';
    for (;;) {
      const { value, done } = await body.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    expect(text).toContain('STREAM_OVERFLOW');
    expect(text).toContain('after: the last cursor');
    expect(text).toContain('event: complete');
    expect((text.match(/"kind"/g) ?? []).length).toBeLessThanOrEqual(3);
    small.gateway.live.close();
  });

  it('the stream holds no workspace slot: requests of the workspace run while it is open', async () => {
    const one = await openTestGateway({
      demoWorkspaces: [],
      gateway: { workspaceConcurrency: 1, workspaceQueue: 0 },
    });
    const key = await one.key('acme', ['read']);
    const subs = [1, 2, 3].map(() =>
      subscribeSse(
        (r) => one.gateway.fetch(r),
        'http://gateway.test/graphql',
        LiveDatasetChangesDocument,
        { dataset: 'd', after: null },
        key,
      ),
    );
    await until(() => one.gateway.live.counts().streams === 3, '3 streams open');
    const answer = await one.graphql(ChangeFeedDocument, { dataset: 'd', first: 1 }, key);
    expect(answer.status).toBe(200);
    expect(answer.body.errors).toBeUndefined();
    for (const s of subs) s.close();
    one.gateway.live.close();
  });

  it('shutdown ends every stream with SHUTTING_DOWN, then complete; a new one is refused', async () => {
    const closing = await openTestGateway({ demoWorkspaces: [] });
    const key = await closing.key('acme', ['read']);
    const open = () =>
      subscribeSse(
        (r) => closing.gateway.fetch(r),
        'http://gateway.test/graphql',
        LiveDatasetChangesDocument,
        { dataset: 'd', after: null },
        key,
      );
    const subs = [open(), open()];
    await until(() => closing.gateway.live.counts().streams === 2, '2 streams open');
    closing.gateway.beginShutdown();
    for (const s of subs) {
      expect((await s.ended).error).toBeNull();
      expect(codesOf(s.received.at(-1)!)).toEqual(['SHUTTING_DOWN']);
    }
    const late = open();
    await late.ended;
    expect(codesOf(late.received[0]!)).toEqual(['SHUTTING_DOWN']);
    expect(closing.gateway.live.counts().streams).toBe(0);
  });

  it('SSE: text/event-stream with a heartbeat comment before any change', async () => {
    const response = await t.request('/graphql', {
      method: 'POST',
      key: reader,
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query: 'subscription { datasetChanges(dataset: "beat") { id } }' }),
    });
    expect(response.status).toBe(200);
    const reader_ = response.body!.getReader();
    const { value } = await reader_.read();
    expect(new TextDecoder().decode(value)).toBe(':\n\n');
    await reader_.cancel();
    await streamsOpen(0);
  });
});

describe('a change pushed to many streams', () => {
  it('is executed once per distinct operation: every stream of the same operation gets the same result', async () => {
    const ds = 'live-executed-once';
    await record(ds);
    const document = parse(
      'subscription($d: String!) { datasetChanges(dataset: $d) { kind fact { factId state } } }',
    );
    // The endpoint's plugins over the gateway's live streams, composed here to see the
    // results themselves (the gateway exposes its executor only through its one door).
    const yoga = createGraphqlYoga();
    const open = async (variables: Record<string, unknown>) => {
      const ctx = await createRequestContext(
        new Request('http://gateway.test/graphql', {
          headers: { authorization: `Bearer ${reader}` },
        }),
        t.database.collections,
        { now: new Date(), live: t.gateway.live },
      );
      const { subscribe, schema, contextFactory } = yoga.getEnveloped(ctx);
      const stream = (await subscribe({
        schema,
        document,
        variableValues: variables,
        contextValue: await contextFactory(),
      })) as AsyncIterableIterator<unknown>;
      return stream;
    };
    const a = await open({ d: ds });
    const b = await open({ d: ds });
    const c = await open({ d: ds, unused: true });
    const next = [a.next(), b.next(), c.next()];
    await streamsOpen(3);
    await record(ds);
    const [ra, rb, rc] = await Promise.all(next);
    expect((ra!.value as { data: unknown }).data).toMatchObject({
      datasetChanges: { kind: 'EPISODE_RECORDED' },
    });
    // The same operation: the very same result; other variables: executed apart.
    expect(rb!.value).toBe(ra!.value);
    expect(rc!.value).not.toBe(ra!.value);
    expect(rc!.value).toEqual(ra!.value);
    for (const s of [a, b, c]) await s.return?.();
    await streamsOpen(0);
  });

  it('is serialized once over SSE: each event is one chunk, the same bytes for every stream', async () => {
    const ds = 'live-serialized-once';
    const open = async () => {
      const response = await t.gateway.fetch(
        new Request('http://gateway.test/graphql', {
          method: 'POST',
          headers: {
            authorization: `Bearer ${reader}`,
            'content-type': 'application/json',
            accept: 'text/event-stream',
          },
          body: JSON.stringify({
            query: 'subscription($d: String!) { datasetChanges(dataset: $d) { kind } }',
            variables: { d: ds },
          }),
        }),
      );
      expect(response.headers.get('content-type')).toBe('text/event-stream');
      const chunks = response.body!.getReader();
      expect(new TextDecoder().decode((await chunks.read()).value)).toBe(':\n\n');
      return chunks;
    };
    await record(ds);
    const streams = [await open(), await open()];
    const next = streams.map((s) => s.read());
    await streamsOpen(2);
    await record(ds);
    const [a, b] = await Promise.all(next);
    expect(new TextDecoder().decode(a!.value)).toBe(
      'event: next\ndata: {"data":{"datasetChanges":{"kind":"EPISODE_RECORDED"}}}\n\n',
    );
    // The very bytes the first stream was given (the same memory): serialized once for both.
    expect(b!.value!.buffer).toBe(a!.value!.buffer);
    expect(b!.value!.byteOffset).toBe(a!.value!.byteOffset);
    for (const s of streams) await s.cancel();
    await streamsOpen(0);
  });
});
