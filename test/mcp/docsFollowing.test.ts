import { readFileSync } from 'node:fs';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGateway } from '../../src/http/app.js';
import { clockFrom, openTestGateway } from '../helpers/gateway.js';
import { answerPattern, currentMcpClient } from '../helpers/mcp.js';
import { until } from '../helpers/until.js';

/**
 * docs/MCP.md, "Following a dataset", run with the SDK's v2 client at the current revision:
 * the resource read answers what is written under it, and the listen written there is
 * honoured as written, announces a change, and `what_changed` from the cursor kept tells it.
 */

const doc = readFileSync(new URL('../../docs/MCP.md', import.meta.url), 'utf8');
const section = doc.slice(doc.indexOf('## Following a dataset'), doc.indexOf('## Batches'));
const blocks = [...section.matchAll(/```(\w+)\n([\s\S]*?)```/g)].map((m) => ({
  lang: m[1]!,
  body: m[2]!,
}));

let client: Client;
let close: () => Promise<void>;

beforeAll(async () => {
  const t = await openTestGateway({ demoWorkspaces: ['development'] });
  const key = await t.key('development', ['read', 'write']);
  const gateway = createGateway({
    database: t.database,
    keyUseFlushMs: 0,
    clock: clockFrom('2026-12-01T00:00:00Z'),
  });
  client = await currentMcpClient('http://127.0.0.1:3004', key, (request) =>
    gateway.fetch(request),
  );
  close = async () => {
    await client.close();
    gateway.beginShutdown();
    await t.database.close();
  };
});

afterAll(() => close());

/** What a what_changed call answers: its changes' kinds and the cursor to resume from. */
async function whatChanged(after: string | null) {
  const result = await client.callTool({
    name: 'what_changed',
    arguments: { dataset: 'user_42', ...(after ? { after } : {}) },
  });
  const structured = result.structuredContent as {
    changes: { kind: string }[];
    cursor: string | null;
  };
  return { kinds: structured.changes.map((c) => c.kind), cursor: structured.cursor };
}

describe('docs/MCP.md: following a dataset', () => {
  it('has the examples this test runs: a read, its answer, a listen', () => {
    expect(blocks.map((b) => b.lang)).toEqual(['json', 'text', 'json']);
  });

  it('reading the resource answers what is written', async () => {
    const read = await client.readResource(JSON.parse(blocks[0]!.body));
    const [contents] = read.contents;
    expect(contents && 'text' in contents ? contents.text : null).toMatch(
      answerPattern(blocks[1]!.body),
    );
  });

  it('the listen is honoured as written; a change is announced, and what_changed tells it', async () => {
    const { notifications } = JSON.parse(blocks[2]!.body) as {
      notifications: { resourceSubscriptions: string[] };
    };
    const announced: string[] = [];
    client.setNotificationHandler('notifications/resources/updated', (n) => {
      announced.push(n.params.uri);
    });
    const listening = await client.listen(notifications);
    expect(listening.honoredFilter).toEqual(notifications);
    // Once after the acknowledgement: what changed before the agent listened.
    const before = await whatChanged(null);
    const created = await client.callTool({
      name: 'create_memory',
      arguments: { dataset: 'user_42', input: { text: 'The user walks to work.' } },
    });
    expect(created.isError).toBeFalsy();
    await until(() => announced.length > 0, 'the change announced');
    expect(announced[0]).toBe(notifications.resourceSubscriptions[0]);
    const after = await whatChanged(before.cursor);
    expect(after.kinds).toEqual(['MEMORY_CREATED']);
    await listening.close();
  });
});
