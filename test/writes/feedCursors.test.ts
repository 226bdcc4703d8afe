import { beforeAll, describe, expect, it } from 'vitest';
import { recordEpisode } from '../../src/store/recordEpisode.js';
import { ChangeFeedDocument } from '../generated/operations.js';
import { episodeInput, factInput, testTenant } from '../helpers/episodeInput.js';
import { openTestGateway, type TestGateway } from '../helpers/gateway.js';
import { callTool, codeOf, mcpClient, textOf } from '../helpers/mcp.js';

/**
 * A change feed's cursor is checked (docs/LIVE_UPDATES.md, "Cursors"): one that this
 * dataset's feed did not issue (another dataset's, another workspace's, altered, made up,
 * cut short) is BAD_USER_INPUT naming `after`, on `Dataset.changes`, on the
 * `datasetChanges` subscription and on MCP's `what_changed`; never a made-up change (a
 * `DATASET_ERASED` for a dataset never erased) and never a silent page. A cursor the feed
 * issued resumes as before.
 */

let t: TestGateway;
let reader: string;

/** Two datasets of one workspace created at the same instant (so their feeds share an epoch), and one of another workspace with the same name. */
const SAME_INSTANT = new Date('2026-11-02T00:00:00.000Z');
const A = 'cursor-a';
const B = 'cursor-b';

const decode = (cursor: string) =>
  JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown[];
const encode = (parts: unknown[]) => Buffer.from(JSON.stringify(parts)).toString('base64url');

let cursorOfA: string;
let cursorsOfB: string[];
let otherWorkspaceCursor: string;

async function changesOf(dataset: string, after: string | null, key = reader) {
  return t.graphql(ChangeFeedDocument, { dataset, after, first: 50 }, key);
}

beforeAll(async () => {
  t = await openTestGateway({ demoWorkspaces: [] });
  reader = await t.key('acme', ['read']);
  for (const dataset of [A, B]) {
    await recordEpisode(
      t.database.collections,
      testTenant('acme', dataset),
      episodeInput([factInput('user', 'drives', `a car of ${dataset}`)]),
      SAME_INSTANT,
    );
  }
  await recordEpisode(
    t.database.collections,
    testTenant('globex', B),
    episodeInput([factInput('user', 'drives', 'a bike'), factInput('user', 'likes', 'tea')]),
    new Date(),
  );
  const a = (await changesOf(A, null)).body.data!.dataset!.changes.edges;
  const b = (await changesOf(B, null)).body.data!.dataset!.changes.edges;
  const other = (await changesOf(B, null, await t.key('globex', ['read']))).body.data!.dataset!
    .changes.edges;
  cursorOfA = a[0]!.cursor;
  cursorsOfB = b.map((e) => e.cursor);
  otherWorkspaceCursor = other[0]!.cursor;
  expect(cursorsOfB.length).toBeGreaterThan(1);
});

/** Cursors this feed (dataset B of acme) did not issue, each well-formed or nearly so. */
function foreignCursors(): [string, string][] {
  const [kind, epoch, , ...rest] = decode(cursorsOfB[0]!);
  return [
    ['a cursor of another dataset, created at the same instant', cursorOfA],
    ["a cursor of another workspace's dataset of the same name", otherWorkspaceCursor],
    ['a number past the end of the feed', encode([kind, epoch, 9999, ...rest])],
    [
      'another epoch (a feed that was never erased)',
      encode([kind, Number(epoch) - 60_000, 1, ...rest]),
    ],
    ['a hand-made position', encode(['change', SAME_INSTANT.getTime(), 1])],
    ['a cursor cut short', cursorsOfB[0]!.slice(0, -4)],
  ];
}

describe('Dataset.changes(after:)', () => {
  it.each([0, 1, 2, 3, 4, 5])(
    'refuses a cursor it did not issue (case %i): BAD_USER_INPUT naming after',
    async (i) => {
      const [name, cursor] = foreignCursors()[i]!;
      const { body } = await changesOf(B, cursor);
      expect(body.errors?.[0]?.extensions?.code, `${name}: ${JSON.stringify(body)}`).toBe(
        'BAD_USER_INPUT',
      );
      expect(body.errors?.[0]?.message, name).toMatch(/^after: /);
      expect(JSON.stringify(body), name).not.toContain('DATASET_ERASED');
    },
  );

  it('resumes from a cursor it issued: exactly the changes after it', async () => {
    const all = (await changesOf(B, null)).body.data!.dataset!.changes.edges;
    const rest = (await changesOf(B, cursorsOfB[0]!)).body.data!.dataset!.changes.edges;
    expect(rest.map((e) => e.node.id)).toEqual(all.slice(1).map((e) => e.node.id));
    const atEnd = await changesOf(B, cursorsOfB.at(-1)!);
    expect(atEnd.body.errors).toBeUndefined();
    expect(atEnd.body.data!.dataset!.changes.edges).toEqual([]);
  });
});

/** The first thing a subscription answers over SSE: its refusal, or its first event. */
async function firstAnswer(after: string): Promise<{ status: number; first: unknown }> {
  const stop = new AbortController();
  const timer = setTimeout(() => stop.abort(), 3000);
  try {
    const response = await t.request('/graphql', {
      method: 'POST',
      key: reader,
      signal: stop.signal,
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({
        query:
          'subscription($d: String!, $after: String) { datasetChanges(dataset: $d, after: $after) { kind cursor erased { facts } } }',
        variables: { d: B, after },
      }),
    });
    const reader_ = response.body!.getReader();
    let text = '';
    for (;;) {
      const match = /data: (.+)\n/.exec(text);
      if (match) {
        await reader_.cancel();
        return { status: response.status, first: JSON.parse(match[1]!) };
      }
      const chunk = await reader_.read().catch(() => ({ done: true, value: undefined }));
      if (chunk.done) return { status: response.status, first: `no event (${text})` };
      text += new TextDecoder().decode(chunk.value);
    }
  } finally {
    clearTimeout(timer);
    stop.abort();
  }
}

describe('the datasetChanges subscription (after:)', () => {
  it.each([0, 1, 2, 3, 4, 5])(
    'refuses a cursor it did not issue before it opens (case %i)',
    async (i) => {
      const [name, cursor] = foreignCursors()[i]!;
      const { first } = await firstAnswer(cursor);
      const errors = (first as { errors?: { message: string; extensions?: { code?: string } }[] })
        .errors;
      expect(errors?.[0]?.extensions?.code, `${name}: ${JSON.stringify(first)}`).toBe(
        'BAD_USER_INPUT',
      );
      expect(errors?.[0]?.message, name).toMatch(/^after: /);
      expect(t.gateway.live.counts().streams).toBe(0);
    },
  );

  it('resumes from a cursor it issued: the next change first', async () => {
    const { first } = await firstAnswer(cursorsOfB[0]!);
    const all = (await changesOf(B, null)).body.data!.dataset!.changes.edges;
    expect(first).toMatchObject({
      data: { datasetChanges: { kind: all[1]!.node.kind, cursor: cursorsOfB[1] } },
    });
  });
});

describe("MCP's what_changed (after:)", () => {
  it('refuses a cursor it did not issue: BAD_USER_INPUT naming after; one it issued resumes', async () => {
    const client = await mcpClient('http://gateway.test', reader, (request) =>
      t.gateway.fetch(request),
    );
    try {
      for (const [name, cursor] of foreignCursors()) {
        const result = await callTool(client, 'what_changed', { dataset: B, after: cursor });
        expect(codeOf(result), `${name}: ${textOf(result)}`).toBe('BAD_USER_INPUT');
        expect(textOf(result), name).toMatch(/^BAD_USER_INPUT: after: /);
      }
      const resumed = await callTool(client, 'what_changed', {
        dataset: B,
        after: cursorsOfB[0]!,
      });
      expect(codeOf(resumed), textOf(resumed)).toBeNull();
      const { changes } = resumed.structuredContent as { changes: { cursor: string }[] };
      expect(changes.map((c) => c.cursor)).toEqual(cursorsOfB.slice(1));
    } finally {
      await client.close();
    }
  });
});
