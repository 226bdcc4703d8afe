import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { print } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/store/database.js';
import { createApiKey } from '../../src/store/workspaces.js';
import {
  ChangeFeedDocument,
  ChangeRecordEpisodeDocument,
  LiveDatasetChangesDocument,
} from '../generated/operations.js';
import { testServerUri } from '../helpers/database.js';
import { codesOf, subscribeSse, subscribeWs } from '../helpers/live.js';
import { spawnGateway } from '../helpers/spawnGateway.js';

/**
 * Two gateway processes on one database: writes through one, subscribers (SSE and
 * WebSocket) on the other, nothing lost and nothing twice, each change within the poll
 * delay; then the subscribers' process shuts down and they resume on the first from their
 * last cursor, missing nothing.
 */

const dbName = `replicas_${randomUUID().replaceAll('-', '')}`;
const children: ChildProcess[] = [];
let writer: string;
let reader: string;

async function startGateway(): Promise<{ base: string; child: ChildProcess }> {
  const gateway = await spawnGateway({
    MONGODB_URI: testServerUri(),
    MONGODB_DB: dbName,
    HOST: '127.0.0.1',
    LIVE_POLL_MS: '200',
    RATE_LIMIT_PER_MINUTE: '0',
    LOG_LEVEL: 'warn',
  });
  children.push(gateway.child);
  return { base: `127.0.0.1:${gateway.port}`, child: gateway.child };
}

async function graphql(base: string, query: string, variables: unknown, key: string) {
  const response = await fetch(`http://${base}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await response.json()) as { data?: unknown; errors?: unknown };
  expect(body.errors).toBeUndefined();
  return body.data as never;
}

const episode = (n: number) => ({
  episode: {
    episodeId: randomUUID(),
    occurredAt: '2026-11-01T00:00:00.000Z',
    source: 'chat',
    content: `user: fact ${n}`,
  },
  facts: [
    {
      subject: 'user',
      predicate: 'noted',
      object: `thing ${n}`,
      confidence: 0.9,
      validAt: '2026-10-01T00:00:00.000Z',
    },
  ],
});

/**
 * A step of the test, bounded: past `ms` it fails naming the step and what each stream had
 * received by then, rather than leaving a hang to the test's own timeout to report.
 */
async function step<T>(
  name: string,
  work: Promise<T>,
  streams: Record<string, { received: unknown[] }>,
  ms = 60_000,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const counts = Object.entries(streams)
        .map(([stream, s]) => `${stream} ${s.received.length}`)
        .join(', ');
      reject(new Error(`${name}: not done within ${ms} ms (received: ${counts})`));
    }, ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

let a: { base: string; child: ChildProcess };
let b: { base: string; child: ChildProcess };

beforeAll(async () => {
  const database = await openDatabase(testServerUri(), dbName);
  writer = (await createApiKey(database.collections, 'acme', ['read', 'write'])).key;
  reader = (await createApiKey(database.collections, 'acme', ['read'])).key;
  await database.close();
  [a, b] = await Promise.all([startGateway(), startGateway()]);
});

afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
});

describe('live updates across gateway processes', () => {
  it('writes through one process reach subscribers on the other, all of them, once, in the feed order', async () => {
    const ds = 'replicated';
    // The streams start after a known cursor, not "from now": a stream B sets up after the
    // first write (B slow under load) would otherwise start past it and wait for it forever.
    await graphql(
      a.base,
      print(ChangeRecordEpisodeDocument),
      { dataset: ds, input: episode(0) },
      writer,
    );
    const feedOf = async () =>
      (
        (await graphql(a.base, print(ChangeFeedDocument), { dataset: ds, first: 100 }, reader)) as {
          dataset: { changes: { edges: { cursor: string; node: { id: string } }[] } };
        }
      ).dataset.changes.edges;
    const start = (await feedOf()).at(-1)!.cursor;
    const sse = subscribeSse(
      fetch,
      `http://${b.base}/graphql`,
      LiveDatasetChangesDocument,
      { dataset: ds, after: start },
      reader,
    );
    const ws = subscribeWs(
      `ws://${b.base}/graphql`,
      LiveDatasetChangesDocument,
      { dataset: ds, after: start },
      reader,
    );
    // Both streams are open (and caught up, so what follows arrives live) once the next
    // write has reached them.
    await graphql(
      a.base,
      print(ChangeRecordEpisodeDocument),
      { dataset: ds, input: episode(100) },
      writer,
    );
    const streams = { sse, ws };
    await step(
      'both streams get the first write',
      Promise.all([sse.results(2), ws.results(2)]),
      streams,
    );
    // Twenty episodes from four concurrent writers: forty changes.
    await Promise.all(
      [0, 1, 2, 3].map(async (w) => {
        for (let i = 1; i <= 5; i++) {
          await graphql(
            a.base,
            print(ChangeRecordEpisodeDocument),
            { dataset: ds, input: episode(w * 10 + i) },
            writer,
          );
        }
      }),
    );
    // The feed: the first write's two changes (before the streams' cursor), then 42.
    const feed = (await feedOf()).slice(2).map((e) => e.node.id);
    expect(feed).toHaveLength(42);
    for (const sub of [sse, ws]) {
      const events = (
        await step('every change reaches both streams', sub.results(42), streams)
      ).map((r) => r.data!.datasetChanges.id);
      expect(events).toEqual(feed);
    }

    // Process B shuts down: its streams end with SHUTTING_DOWN; they resume on A from their last cursor.
    const last = sse.received.at(-1)!.data!.datasetChanges.cursor;
    const exited = new Promise((r) => b.child.once('exit', r));
    b.child.kill('SIGTERM');
    await step('both streams end as B shuts down', Promise.all([sse.ended, ws.ended]), streams);
    expect(codesOf(sse.received.at(-1)!)).toEqual(['SHUTTING_DOWN']);
    expect(codesOf(ws.received.at(-1)!)).toEqual(['SHUTTING_DOWN']);
    await exited;
    await graphql(
      a.base,
      print(ChangeRecordEpisodeDocument),
      { dataset: ds, input: episode(99) },
      writer,
    );
    const resumed = subscribeSse(
      fetch,
      `http://${a.base}/graphql`,
      LiveDatasetChangesDocument,
      { dataset: ds, after: last },
      reader,
    );
    const after = (
      await step('the resumed stream catches up', resumed.results(2), { resumed })
    ).map((r) => r.data!.datasetChanges.kind);
    expect(after).toEqual(['EPISODE_RECORDED', 'FACT_RECORDED']);
    resumed.close();
    ws.close();
  }, 180_000);
});
