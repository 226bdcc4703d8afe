import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGateway, type GatewayOptions } from '../../src/http/app.js';
import { createLogger } from '../../src/http/observability.js';
import { openTestGateway, type TestGateway } from '../helpers/gateway.js';
import { postMcp } from '../helpers/mcp.js';

/**
 * A JSON-RPC batch on /mcp (docs/MCP.md, "Batches"): on the revisions that have batches
 * (2025-03-26, the revision a request without MCP-Protocol-Version is taken as, and
 * 2024-11-05) each message is its own request through the edge's pipeline, so each takes
 * its own rate-limit point and fairness slot and leaves its own access log line; on the
 * revisions without batches (2025-06-18 and later) a batch is refused before anything runs.
 */

let t: TestGateway;
const gateways: ReturnType<typeof createGateway>[] = [];

beforeAll(async () => {
  t = await openTestGateway();
});

afterAll(() => {
  for (const gateway of gateways) gateway.beginShutdown();
});

/** A gateway on the test database whose access log lines land in `logs`. */
function gatewayWith(options: Partial<GatewayOptions> = {}) {
  const logs: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line.trim()) logs.push(JSON.parse(line));
      done();
    },
  });
  const gateway = createGateway({
    database: t.database,
    keyUseFlushMs: 0,
    logger: createLogger('info', sink),
    ...options,
  });
  gateways.push(gateway);
  return { gateway, logs };
}

type Gateway = ReturnType<typeof createGateway>;

/** A body posted to /mcp as a client without the SDK sends it, with the revision's header when given. */
const post = (gateway: Gateway, key: string, body: unknown, revision?: string) =>
  postMcp(
    (request) => gateway.fetch(request),
    key,
    body,
    revision ? { 'mcp-protocol-version': revision } : {},
  );

const call = (id: number, name: string, args: Record<string, unknown> = {}) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});

const createMemory = (id: number, dataset: string) =>
  call(id, 'create_memory', { dataset, input: { text: `memory ${id} of a batch` } });

interface Answer {
  jsonrpc: '2.0';
  id: string | number | null;
  result?: { isError?: boolean; content: { text: string }[] };
  error?: { code: number; message: string };
}

/** The gateway's code leading an answer's failed tool result or error (null: it ran). */
function codeOf(answer: Answer): string | null {
  const text = answer.result?.isError ? answer.result.content[0]!.text : answer.error?.message;
  return text === undefined ? null : (/^([A-Z_]+): /.exec(text)?.[1] ?? text);
}

/** A batch's answers, in the order of the requests' ids. */
async function answersOf(response: Response): Promise<Answer[]> {
  const body = (await response.json()) as unknown;
  expect(Array.isArray(body), JSON.stringify(body)).toBe(true);
  return (body as Answer[]).sort((a, b) => Number(a.id) - Number(b.id));
}

const memoriesIn = (dataset: string) => t.database.collections.memories.countDocuments({ dataset });

/** The revisions with batches: how each client says it (no header: 2025-03-26). */
const WITH_BATCHES: [string, string | undefined][] = [
  ['no MCP-Protocol-Version (taken as 2025-03-26)', undefined],
  ['2025-03-26', '2025-03-26'],
  ['2024-11-05', '2024-11-05'],
];

describe('on the revisions without batches', () => {
  it.each(['2025-11-25', '2025-06-18'])(
    '%s: a batch is refused (400, -32600) before anything runs',
    async (revision) => {
      const { gateway, logs } = gatewayWith();
      const key = await t.key('acme', ['read', 'write']);
      const dataset = `refused-${revision}`;
      const response = await post(
        gateway,
        key,
        [createMemory(1, dataset), call(2, 'list_datasets')],
        revision,
      );
      expect(response.status).toBe(400);
      expect(await response.json()).toEqual({
        jsonrpc: '2.0',
        id: null,
        error: {
          code: -32600,
          message: `Invalid Request: batches are not part of MCP ${revision}; send one message per request`,
        },
      });
      expect(await memoriesIn(dataset)).toBe(0);
      expect(logs.filter((l) => l.msg === 'request' && l.operation !== null)).toEqual([]);
    },
  );

  it('a batch naming a revision the server does not speak is refused as one message would be', async () => {
    const { gateway } = gatewayWith();
    const key = await t.key('acme', ['read']);
    const response = await post(gateway, key, [call(1, 'list_datasets')], '2099-01-01');
    expect(response.status).toBe(400);
    const body = (await response.json()) as Answer;
    expect(body.error?.message).toMatch(/Unsupported protocol version: 2099-01-01/);
  });

  it('without a key, 401 comes first', async () => {
    const { gateway } = gatewayWith();
    const response = await gateway.fetch(
      new Request('http://gateway.test/mcp', {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-06-18',
        },
        body: JSON.stringify([call(1, 'list_datasets')]),
      }),
    );
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe('Bearer realm="memory-gateway"');
  });
});

describe.each(WITH_BATCHES)('on the revisions with batches: %s', (_name, revision) => {
  it('each message is its own request: one access log line per operation, answers by id', async () => {
    const { gateway, logs } = gatewayWith();
    const key = await t.key('acme', ['read', 'write']);
    const dataset = `logged-${revision ?? 'none'}`;
    // The batch: list_datasets, five create_memory calls, list_datasets; and a
    // notification, which gets no answer.
    const batch = [
      call(1, 'list_datasets'),
      ...[2, 3, 4, 5, 6].map((id) => createMemory(id, dataset)),
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      call(7, 'list_datasets'),
    ];
    const response = await post(gateway, key, batch, revision);
    expect(response.status).toBe(200);
    const answers = await answersOf(response);
    expect(answers.map((a) => a.id)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(answers.map(codeOf)).toEqual([null, null, null, null, null, null, null]);
    expect(await memoriesIn(dataset)).toBe(5);
    const requests = logs.filter((l) => l.msg === 'request');
    // The batch's own line, and one line per message (the notification's runs no operation).
    const [batchLine, ...others] = requests.filter((l) => !String(l.requestId).includes(':'));
    expect(others).toEqual([]);
    expect(batchLine).toMatchObject({ transport: 'mcp', operation: null, status: 200 });
    expect(requests).toHaveLength(1 + batch.length);
    const lines = requests.filter((l) => l.operation !== null);
    expect(lines.map((l) => l.operation).sort()).toEqual([
      'McpCreateMemory',
      'McpCreateMemory',
      'McpCreateMemory',
      'McpCreateMemory',
      'McpCreateMemory',
      'McpListDatasets',
      'McpListDatasets',
    ]);
    for (const line of lines) {
      expect(line).toMatchObject({ transport: 'mcp', route: '/mcp', status: 200 });
      // Each message's request id names the batch it came in.
      expect(String(line.requestId)).toMatch(new RegExp(`^${batchLine?.requestId}:\\d+$`));
    }
    expect(requests.filter((l) => l !== batchLine && l.operation === null)).toMatchObject([
      { requestId: `${batchLine?.requestId}:7`, status: 202 },
    ]);
  });

  it('the per-key rate limit counts each message: past it, RATE_LIMITED per item', async () => {
    const { gateway } = gatewayWith({ rateLimitPerMinute: 3 });
    const key = await t.key('acme', ['read', 'write']);
    const dataset = `rated-${revision ?? 'none'}`;
    const response = await post(
      gateway,
      key,
      [1, 2, 3, 4, 5, 6, 7, 8].map((id) => createMemory(id, dataset)),
      revision,
    );
    expect(response.status).toBe(200);
    expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
    const codes = (await answersOf(response)).map(codeOf);
    expect(codes.filter((c) => c === null)).toHaveLength(3);
    expect(codes.filter((c) => c === 'RATE_LIMITED')).toHaveLength(5);
    expect(await memoriesIn(dataset)).toBe(3);
    // And the next request is refused too: the batch spent the key's points.
    const next = await post(gateway, key, createMemory(9, dataset), revision);
    expect(codeOf((await next.json()) as Answer)).toBe('RATE_LIMITED');
    expect(await memoriesIn(dataset)).toBe(3);
  });

  it("each message takes one of the workspace's fairness slots", async () => {
    // One slot, no queue: the messages of a batch compete for it as concurrent requests do.
    const { gateway } = gatewayWith({ workspaceConcurrency: 1, workspaceQueue: 0 });
    const key = await t.key('acme', ['read']);
    const recall = (id: number) =>
      call(id, 'recall', { dataset: 'user_42', query: 'what car is the user interested in' });
    const response = await post(
      gateway,
      key,
      Array.from({ length: 10 }, (_, i) => recall(i + 1)),
      revision,
    );
    expect(response.status).toBe(200);
    const codes = (await answersOf(response)).map(codeOf);
    expect(codes).toHaveLength(10);
    expect(codes.filter((c) => c === 'RATE_LIMITED').length, codes.join()).toBeGreaterThan(0);
    expect(
      codes.every((c) => c === null || c === 'RATE_LIMITED'),
      codes.join(),
    ).toBe(true);
    // With room to wait, every message waits for its turn and runs.
    const { gateway: queued } = gatewayWith({ workspaceConcurrency: 1, workspaceQueue: 20 });
    const all = await post(
      queued,
      key,
      Array.from({ length: 10 }, (_, i) => recall(i + 1)),
      revision,
    );
    expect((await answersOf(all)).map(codeOf)).toEqual(Array(10).fill(null));
  });

  it('JSON-RPC: only notifications, no answer (202); an empty batch, -32600; a message that is none, its own error', async () => {
    const { gateway } = gatewayWith();
    const key = await t.key('acme', ['read']);
    const notified = await post(
      gateway,
      key,
      [{ jsonrpc: '2.0', method: 'notifications/initialized' }],
      revision,
    );
    expect(notified.status).toBe(202);
    expect(await notified.text()).toBe('');
    const empty = await post(gateway, key, [], revision);
    expect(empty.status).toBe(400);
    expect(((await empty.json()) as Answer).error?.code).toBe(-32600);
    // What is no JSON-RPC object, a batch inside the batch among them, is an Invalid Request.
    const mixed = await post(
      gateway,
      key,
      [call(1, 'list_datasets'), 42, [call(2, 'ping')]],
      revision,
    );
    expect(mixed.status).toBe(200);
    const answers = (await mixed.json()) as Answer[];
    expect(answers).toHaveLength(3);
    expect(answers.find((a) => a.id === 1)?.result).toBeDefined();
    expect(answers.filter((a) => a.id === null).map((a) => a.error?.code)).toEqual([
      -32600, -32600,
    ]);
  });

  it('initialize may not be part of a batch', async () => {
    const { gateway } = gatewayWith();
    const key = await t.key('acme', ['read']);
    const response = await post(
      gateway,
      key,
      [
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: {
            protocolVersion: '2025-03-26',
            capabilities: {},
            clientInfo: { name: 'by-hand', version: '1' },
          },
        },
      ],
      revision,
    );
    expect(response.status).toBe(400);
    expect(((await response.json()) as Answer).error).toMatchObject({
      code: -32600,
      message: expect.stringMatching(/initialize/),
    });
  });
});
