import { request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { trace } from '@opentelemetry/api';
import {
  InMemorySpanExporter,
  NodeTracerProvider,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-node';
import type { GraphQLFormattedError } from 'graphql';
import { createClient } from 'graphql-ws';
import type { CommandStartedEvent } from 'mongodb';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { DOCUMENT_HASHES } from '../../explorer/src/generated/documentHashes.js';
import { TRANSPORTS, type Transport } from '../../src/context.js';
import { createGateway, type GatewayOptions } from '../../src/http/app.js';
import { createLogger, createMetrics } from '../../src/http/observability.js';
import { listen } from '../../src/http/server.js';
import { SSE_HEARTBEAT_MS } from '../../src/http/sharedEvents.js';
import { serveGraphqlWebSocket } from '../../src/http/webSocket.js';
import { recordEpisode } from '../../src/store/recordEpisode.js';
import { createApiKey, revokeApiKey } from '../../src/store/workspaces.js';
import {
  LiveDatasetChangesDocument,
  type LiveDatasetChangesSubscription,
} from '../generated/operations.js';
import { episodeInput, factInput, testTenant } from '../helpers/episodeInput.js';
import { openTestGateway, type TestGateway } from '../helpers/gateway.js';
import {
  codesOf,
  type LiveSubscription,
  streamsFollowing,
  subscribeSse,
  subscribeWs,
} from '../helpers/live.js';
import { CURRENT_REVISION } from '../helpers/mcp.js';
import { until } from '../helpers/until.js';

/**
 * One door: every rule of the admission pipeline against every transport that carries
 * operations (src/http/transports.ts), over a real loopback listener. Each cell runs the
 * same operation and must come out the same: refused with the same code (nothing run,
 * nothing written) or allowed. Whatever the cell, an error never carries Yoga's internal
 * `extensions.http` or a stack, and every operation leaves its access log line, its metric
 * and its span, labelled with its transport. A transport added to TRANSPORTS without a
 * client here fails the first test. One more column, `mcp-batch`, sends the operation as a
 * JSON-RPC batch on MCP (docs/MCP.md, "Batches"): its message must meet every rule as a
 * request of its own, with its own log line, metric and span. And `mcp-current` sends the
 * tool call as MCP 2026-07-28 does (its revision named in its `_meta` and its headers),
 * which the SDK's stateless handler serves beside the 2025 revisions: every answer to it,
 * the edge's refusals too, is that revision's (a result says `resultType: 'complete'`).
 */

const DATASET = 'user_42';
const WORKSPACE = 'acme';

/** One operation as each transport sends it. */
interface Operation {
  /** GraphQL's request: text or a registered document's hash, and variables. */
  graphql: { query?: string; variables?: Record<string, unknown>; hash?: string };
  /** The REST route that runs the same operation (REST sends no GraphQL text of its own). */
  rest: { method: 'GET' | 'DELETE'; path: string };
  /** The MCP tool call that runs the same operation (MCP, too, runs registered operations only). */
  mcp: { tool: string; args: Record<string, unknown> };
  /** Whether it writes (GraphQL over GET refuses a mutation whatever the key). */
  writes?: boolean;
}

/** What came back: the gateway's code (null: allowed), and what else each rule asserts. */
interface Outcome {
  code: string | null;
  status: number | null;
  wwwAuthenticate: string | null;
  errors: unknown[];
  /** Refused when the connection was opened (graphql-ws's `connection_init`), before any operation. */
  atConnection?: boolean;
  /** An MCP batch answered message by message (not refused whole): how many messages it held. */
  messages?: number;
}

const READ: Operation = {
  graphql: {
    query: 'query MatrixRead($d: String!) { dataset(name: $d) { facts(first: 3) { totalCount } } }',
    variables: { d: DATASET },
  },
  rest: { method: 'GET', path: `/v1/memory/semantic/datasets/${DATASET}/facts?limit=3` },
  mcp: { tool: 'list_facts', args: { dataset: DATASET, limit: 3 } },
};

const COSTLY: Operation = {
  graphql: {
    query: `query MatrixCostly { dataset(name: "${DATASET}") { entities(first: 100) { edges { node {
      facts(first: 100) { subjectEntity { facts(first: 100) { factId } } } } } } } }`,
  },
  // REST and MCP run only their own registered operations: there is no client text to measure.
  rest: READ.rest,
  mcp: READ.mcp,
};

const REGISTERED: Operation = {
  graphql: { hash: DOCUMENT_HASHES.ExplorerViewer! },
  rest: READ.rest,
  mcp: READ.mcp,
};

const WRITTEN = 'matrix-writes';

/**
 * The matrix's columns: every transport, MCP's batch (each message a request of its own) and
 * MCP's current revision (2026-07-28, served on the same transport by the SDK's handler).
 */
type Column = Transport | 'mcp-batch' | 'mcp-current';
const MCP_COLUMNS = ['mcp-batch', 'mcp-current'] as const;
const COLUMNS: readonly Column[] = [...TRANSPORTS, ...MCP_COLUMNS];

/** The transport a column's requests are logged, counted and traced under. */
const labelOf = (column: Column): Transport =>
  column === 'mcp-batch' || column === 'mcp-current' ? 'mcp' : column;

/** The transports that send no GraphQL of their own: each runs its registered operations. */
const RUNS_OWN = new Set<Column>(['rest', 'mcp', ...MCP_COLUMNS]);

const deleting = (factId: string): Operation => ({
  graphql: {
    query:
      'mutation MatrixDelete($d: String!, $id: ID!) { deleteFact(dataset: $d, id: $id) { deleted } }',
    variables: { d: WRITTEN, id: factId },
  },
  rest: { method: 'DELETE', path: `/v1/memory/semantic/datasets/${WRITTEN}/facts/${factId}` },
  mcp: { tool: 'delete_fact', args: { dataset: WRITTEN, factId } },
  writes: true,
});

const exporter = new InMemorySpanExporter();
const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
let t: TestGateway;
/** Commands sent for the data itself (not the key lookups): "nothing ran" is none of them. */
const dataCommands: CommandStartedEvent[] = [];
const DATA_COLLECTIONS = new Set(['facts', 'entities', 'episodes', 'memories', 'changes']);

/** A gateway on a loopback listener with its WebSocket transport, its log lines and metrics. */
interface Door {
  origin: string;
  wsUrl: string;
  logs: Record<string, unknown>[];
  metrics: ReturnType<typeof createMetrics>;
  gateway: ReturnType<typeof createGateway>;
  close(): Promise<void>;
}

const doors: Door[] = [];

async function openDoor(options: Partial<GatewayOptions> = {}): Promise<Door> {
  const logs: Record<string, unknown>[] = [];
  const metrics = createMetrics();
  const gateway = createGateway({
    database: t.database,
    keyUseFlushMs: 0,
    logger: createLogger('info', { write: (line: string) => logs.push(JSON.parse(line)) }),
    metrics,
    tracer: provider.getTracer('matrix'),
    ...options,
  });
  const server = await new Promise<Server>((resolve) => {
    const s = listen(gateway.fetch, { port: 0, hostname: '127.0.0.1' }, () => resolve(s));
  });
  const webSocket = serveGraphqlWebSocket(server, gateway, {});
  const { port } = server.address() as AddressInfo;
  const door: Door = {
    origin: `http://127.0.0.1:${port}`,
    wsUrl: `ws://127.0.0.1:${port}/graphql`,
    logs,
    metrics,
    gateway,
    close: async () => {
      gateway.beginShutdown();
      await webSocket.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  doors.push(door);
  return door;
}

const codeOfStatus: Record<number, string> = {
  401: 'UNAUTHENTICATED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  429: 'RATE_LIMITED',
};

/** A GraphQL answer over HTTP (JSON) as an outcome. */
async function graphqlOutcome(response: Response): Promise<Outcome> {
  const body = (await response.json()) as { data?: unknown; errors?: GraphQLFormattedError[] };
  return {
    code: (body.errors?.[0]?.extensions?.code as string | undefined) ?? null,
    status: response.status,
    wwwAuthenticate: response.headers.get('www-authenticate'),
    errors: body.errors ?? [],
  };
}

const bearer = (key: string | null): Record<string, string> =>
  key ? { authorization: `Bearer ${key}` } : {};

/** The body GraphQL over HTTP POST (and SSE) sends for an operation. */
const postBody = (op: Operation) =>
  JSON.stringify({
    ...(op.graphql.query ? { query: op.graphql.query } : {}),
    variables: op.graphql.variables ?? {},
    ...(op.graphql.hash
      ? { extensions: { persistedQuery: { version: 1, sha256Hash: op.graphql.hash } } }
      : {}),
  });

/** The JSON-RPC message that calls an operation's MCP tool. */
const toolCall = (op: Operation) => ({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: { name: op.mcp.tool, arguments: op.mcp.args },
});

type JsonRpcAnswer = {
  result?: { isError?: boolean; content: { text: string }[]; resultType?: string };
  error?: { message: string; data?: { code?: string } };
};

/** An MCP answer (to a message, or the HTTP request's refusal) as an outcome. */
function mcpOutcome(response: Response, body: JsonRpcAnswer): Outcome {
  const failed = body.result?.isError ? body.result.content[0]!.text : null;
  return {
    code: body.error
      ? (body.error.data?.code ?? `JSON-RPC ${body.error.message}`)
      : failed
        ? (/^([A-Z_]+): /.exec(failed)?.[1] ?? failed)
        : null,
    status: response.status,
    wwwAuthenticate: response.headers.get('www-authenticate'),
    errors: body.error ? [body.error] : failed ? [{ message: failed }] : [],
  };
}

/** A POST to /mcp as a stateless client sends it, without MCP-Protocol-Version (2025-03-26). */
const postMcp = (door: Door, key: string | null, body: unknown) =>
  fetch(`${door.origin}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...bearer(key),
    },
    body: JSON.stringify(body),
  });

/** Each column's client: sends one operation the way that transport's clients do. */
const CLIENTS: Record<Column, (door: Door, op: Operation, key: string | null) => Promise<Outcome>> =
  {
    'graphql-post': async (door, op, key) =>
      graphqlOutcome(
        await fetch(`${door.origin}/graphql`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/graphql-response+json',
            ...bearer(key),
          },
          body: postBody(op),
        }),
      ),
    'graphql-get': async (door, op, key) => {
      const params = new URLSearchParams();
      if (op.graphql.query) params.set('query', op.graphql.query);
      params.set('variables', JSON.stringify(op.graphql.variables ?? {}));
      if (op.graphql.hash) {
        params.set(
          'extensions',
          JSON.stringify({ persistedQuery: { version: 1, sha256Hash: op.graphql.hash } }),
        );
      }
      return graphqlOutcome(
        await fetch(`${door.origin}/graphql?${params}`, {
          headers: { accept: 'application/graphql-response+json', ...bearer(key) },
        }),
      );
    },
    'graphql-sse': async (door, op, key) => {
      const response = await fetch(`${door.origin}/graphql`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'text/event-stream',
          ...bearer(key),
        },
        body: postBody(op),
      });
      if (!response.headers.get('content-type')?.startsWith('text/event-stream')) {
        return graphqlOutcome(response);
      }
      const text = await response.text();
      const data = /event: next\ndata: (.*)\n/.exec(text)?.[1];
      const body = data
        ? (JSON.parse(data) as { errors?: GraphQLFormattedError[] })
        : { errors: [] };
      return {
        code: (body.errors?.[0]?.extensions?.code as string | undefined) ?? null,
        status: response.status,
        wwwAuthenticate: response.headers.get('www-authenticate'),
        errors: body.errors ?? [],
      };
    },
    'graphql-ws': async (door, op, key) => {
      let closedWith: { code: number; reason: string } | null = null;
      let upgradeStatus: number | null = null;
      // A refused upgrade is an HTTP answer the WebSocket API hides; ws says it in its error.
      class Upgrading extends WebSocket {
        constructor(address: string, protocols?: string | string[]) {
          super(address, protocols);
          this.on('error', (error: Error) => {
            const status = /Unexpected server response: (\d+)/.exec(error.message)?.[1];
            if (status) upgradeStatus = Number(status);
          });
        }
      }
      const client = createClient({
        url: door.wsUrl,
        webSocketImpl: Upgrading,
        connectionParams: bearer(key),
        retryAttempts: 0,
        lazy: true,
        on: {
          closed: (event) => {
            const { code, reason } = event as { code: number; reason: string };
            closedWith = { code, reason: String(reason) };
          },
        },
      });
      try {
        const answer = await new Promise<Outcome>((resolve) => {
          client.subscribe(
            {
              query: op.graphql.query ?? '',
              variables: op.graphql.variables ?? {},
              ...(op.graphql.hash
                ? { extensions: { persistedQuery: { version: 1, sha256Hash: op.graphql.hash } } }
                : {}),
            },
            {
              next: (result) =>
                resolve({
                  code: (result.errors?.[0]?.extensions?.code as string | undefined) ?? null,
                  status: null,
                  wwwAuthenticate: null,
                  errors: [...(result.errors ?? [])],
                }),
              error: (error) => {
                if (Array.isArray(error)) {
                  const errors = error as GraphQLFormattedError[];
                  resolve({
                    code: (errors[0]?.extensions?.code as string | undefined) ?? null,
                    status: null,
                    wwwAuthenticate: null,
                    errors,
                  });
                  return;
                }
                // Refused at the upgrade (its HTTP status), or closed at connection_init
                // (4403: the gateway's code leads the close reason).
                const closed = closedWith as { code: number; reason: string } | null;
                const refusedUpgrade = upgradeStatus as number | null;
                resolve({
                  code: refusedUpgrade
                    ? (codeOfStatus[refusedUpgrade] ?? `HTTP ${refusedUpgrade}`)
                    : closed?.code === 4403
                      ? (closed.reason.split(':')[0] ?? null)
                      : `closed ${closed?.code}`,
                  status: refusedUpgrade ?? closed?.code ?? null,
                  wwwAuthenticate: null,
                  errors: [],
                  atConnection: true,
                });
              },
              complete: () => {},
            },
          );
        });
        return answer;
      } finally {
        await client.dispose();
      }
    },
    rest: async (door, op, key) => {
      const response = await fetch(`${door.origin}${op.rest.path}`, {
        method: op.rest.method,
        headers: bearer(key),
      });
      const body = (await response.json()) as { error?: string };
      return {
        code: response.ok ? null : (codeOfStatus[response.status] ?? `HTTP ${response.status}`),
        status: response.status,
        wwwAuthenticate: response.headers.get('www-authenticate'),
        errors: body.error ? [body] : [],
      };
    },
    mcp: async (door, op, key) => {
      // One tools/call, as a stateless client sends it (the SDK's client would first send
      // `initialize`, a second request that the one-a-minute limits below would count).
      const response = await postMcp(door, key, toolCall(op));
      return mcpOutcome(response, (await response.json()) as JsonRpcAnswer);
    },
    'mcp-batch': async (door, op, key) => {
      // The same tools/call in a batch (2025-03-26: a request without MCP-Protocol-Version).
      // Refused whole (no key, the per-address limit), the answer is one JSON-RPC error.
      const response = await postMcp(door, key, [toolCall(op)]);
      const body = (await response.json()) as JsonRpcAnswer | JsonRpcAnswer[];
      if (!Array.isArray(body)) {
        // JSON-RPC answers a batch with an array, even of one answer; one object only refuses it.
        expect(response.status, `a batch answered with ${JSON.stringify(body)}`).toBeGreaterThan(
          299,
        );
        return mcpOutcome(response, body);
      }
      expect(body, 'one answer per request of the batch').toHaveLength(1);
      return { ...mcpOutcome(response, body[0]!), messages: 1 };
    },
    'mcp-current': async (door, op, key) => {
      // One tools/call of MCP 2026-07-28, as the SDK's v2 client sends it: no `initialize`,
      // the revision claimed in the request's own `_meta`, the method and tool in headers.
      const call = toolCall(op);
      const response = await fetch(`${door.origin}/mcp`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': CURRENT_REVISION,
          'mcp-method': 'tools/call',
          'mcp-name': op.mcp.tool,
          ...bearer(key),
        },
        body: JSON.stringify({
          ...call,
          params: {
            ...call.params,
            _meta: {
              'io.modelcontextprotocol/protocolVersion': CURRENT_REVISION,
              'io.modelcontextprotocol/clientInfo': { name: 'matrix', version: '1' },
              'io.modelcontextprotocol/clientCapabilities': {},
            },
          },
        }),
      });
      const body = (await response.json()) as JsonRpcAnswer;
      // A result of this revision, the edge's refusals included, says it is whole.
      if (body.result) {
        expect(body.result.resultType, `answered ${JSON.stringify(body)}`).toBe('complete');
      }
      return mcpOutcome(response, body);
    },
  };

/**
 * How each transport refuses a missing or invalid key: HTTP's 401, which must say
 * `WWW-Authenticate`; graphql-ws closes the socket at `connection_init` with 4403 (its
 * upgrade needs no key), and a close carries no headers.
 */
const REFUSED_KEY_STATUS: Record<Column, number> = {
  'graphql-post': 401,
  'graphql-get': 401,
  'graphql-sse': 401,
  'graphql-ws': 4403,
  rest: 401,
  mcp: 401,
  'mcp-batch': 401,
  'mcp-current': 401,
};

const key = (scopes: ('read' | 'write' | 'admin')[], expiresAt?: Date) =>
  createApiKey(t.database.collections, WORKSPACE, scopes, new Date(), {
    name: 'matrix',
    ...(expiresAt ? { expiresAt } : {}),
  }).then((k) => k.key);

/** Facts recorded for the write cells, each tried by one cell at most. */
const writable: string[] = [];

/** A live fact for a write cell to try to delete. */
function liveFact(): string {
  const factId = writable.shift();
  if (!factId) throw new Error('no fact left for the write cells: record more in beforeAll');
  return factId;
}

/**
 * Runs one cell: the operation through the transport, then the checks every cell shares
 * (masked errors; the access log line, metric and span of an operation that reached the
 * pipeline; nothing of a refused operation ran).
 */
async function cell(
  door: Door,
  column: Column,
  op: Operation,
  keyValue: string | null,
): Promise<Outcome> {
  const transport = labelOf(column);
  const logsBefore = door.logs.length;
  const countedBefore = await requestsCounted(door, transport);
  exporter.reset();
  dataCommands.length = 0;
  const outcome = await CLIENTS[column](door, op, keyValue);
  const where = `${column}: ${JSON.stringify(outcome)}`;
  for (const error of outcome.errors as GraphQLFormattedError[]) {
    expect(error.extensions ?? {}, where).not.toHaveProperty('http');
    expect(JSON.stringify(error), where).not.toMatch(/stack|exception|at .*\.ts:\d+/);
  }
  if (outcome.code !== null && outcome.code !== 'NOT_FOUND') {
    expect(
      dataCommands.map((c) => `${c.commandName} ${c.command.comment ?? ''}`),
      `${where}: nothing runs`,
    ).toEqual([]);
  }
  if (!outcome.atConnection) {
    // The operation's log line (the upgrade of a WebSocket is not an operation).
    await until(
      () => door.logs.slice(logsBefore).some((l) => l.msg === 'request'),
      `${where}: its access log line`,
    );
    const lines = door.logs.slice(logsBefore).filter((l) => l.msg === 'request');
    expect(
      lines.map((l) => l.transport),
      where,
    ).toContain(transport);
    // This cell's requests, counted under its transport with the status each was answered:
    // the counter is the door's since it opened, so only what this cell added says anything.
    const countedAfter = await requestsCounted(door, transport);
    const added = Object.fromEntries(
      Object.entries(countedAfter)
        .map(([status, n]) => [status, n - (countedBefore[status] ?? 0)] as const)
        .filter(([, n]) => n !== 0),
    );
    const logged: Record<string, number> = {};
    for (const line of lines.filter((l) => l.transport === transport)) {
      logged[String(line.status)] = (logged[String(line.status)] ?? 0) + 1;
    }
    expect(added, `${where}: gateway_http_requests_total{transport="${transport}"}`).toEqual(
      logged,
    );
    // An HTTP answer's own status is among them (graphql-ws's is its socket's, not HTTP's).
    if (outcome.status !== null && outcome.status < 1000 && outcome.messages === undefined) {
      expect(added[String(outcome.status)], `${where}: counted as ${outcome.status}`).toBe(1);
    }
    await until(() => exporter.getFinishedSpans().length > 0, `${where}: its span`);
    expect(
      exporter.getFinishedSpans().map((s) => s.attributes['gateway.transport']),
      where,
    ).toContain(transport);
    if (outcome.messages !== undefined) await eachMessageObserved(where, lines, outcome.messages);
  }
  return outcome;
}

/**
 * An MCP batch answered message by message: the batch's own line, and each message's own
 * request (`<batch's id>:<n>`) with its log line and its span inside the batch's.
 */
async function eachMessageObserved(
  where: string,
  lines: Record<string, unknown>[],
  messages: number,
): Promise<void> {
  const batch = lines.find((l) => !String(l.requestId).includes(':'));
  expect(batch, `${where}: the batch's own line`).toBeDefined();
  const ids = Array.from({ length: messages }, (_, i) => `${batch!.requestId}:${i + 1}`);
  expect(
    lines.filter((l) => l !== batch).map((l) => l.requestId),
    `${where}: each message's own log line`,
  ).toEqual(ids);
  const spanOf = (requestId: unknown) =>
    exporter.getFinishedSpans().find((s) => s.attributes['gateway.request_id'] === requestId);
  await until(() => ids.every((id) => spanOf(id)), `${where}: each message's span`);
  const batchSpan = spanOf(batch!.requestId);
  for (const id of ids) {
    expect(spanOf(id)!.parentSpanContext?.spanId, `${where}: ${id}'s span`).toBe(
      batchSpan?.spanContext().spanId,
    );
  }
}

/** gateway_http_requests_total for one transport, by status: what the door has counted so far. */
async function requestsCounted(door: Door, transport: Transport): Promise<Record<string, number>> {
  const counted: Record<string, number> = {};
  for (const { labels, value } of (await door.metrics.requests.get()).values) {
    if (labels.transport !== transport) continue;
    counted[String(labels.status)] = (counted[String(labels.status)] ?? 0) + value;
  }
  return counted;
}

let door: Door;
let reader: string;

beforeAll(async () => {
  provider.register();
  t = await openTestGateway({
    demoWorkspaces: [WORKSPACE],
    clientOptions: { monitorCommands: true },
  });
  t.database.client.on('commandStarted', (event: CommandStartedEvent) => {
    const collection = event.command[event.commandName];
    if (typeof collection === 'string' && DATA_COLLECTIONS.has(collection)) {
      dataCommands.push(event);
    }
  });
  door = await openDoor();
  reader = await key(['read']);
  const facts = Array.from({ length: 2 * COLUMNS.length }, (_, i) =>
    factInput('user', `likes thing ${i}`, `thing ${i}`),
  );
  const recorded = await recordEpisode(
    t.database.collections,
    testTenant(WORKSPACE, WRITTEN),
    episodeInput(facts),
    new Date(),
  );
  writable.push(...recorded.facts.map((f) => f.factId));
});

afterAll(async () => {
  for (const d of doors) await d.close();
  await provider.shutdown();
  trace.disable();
});

describe('the transport matrix', () => {
  it("has a client for every transport the gateway names, MCP's batch and MCP's current revision, and none else", () => {
    expect(Object.keys(CLIENTS).sort()).toEqual([...TRANSPORTS, ...MCP_COLUMNS].sort());
  });

  it.each(COLUMNS)('%s: an allowed read runs', async (transport) => {
    const outcome = await cell(door, transport, READ, reader);
    expect(outcome.code, JSON.stringify(outcome)).toBeNull();
  });

  it.each(COLUMNS)(
    '%s: no key is UNAUTHENTICATED, with WWW-Authenticate: Bearer',
    async (transport) => {
      const outcome = await cell(door, transport, READ, null);
      expect(outcome.code, JSON.stringify(outcome)).toBe('UNAUTHENTICATED');
      expect(outcome.status, JSON.stringify(outcome)).toBe(REFUSED_KEY_STATUS[transport]);
      if (REFUSED_KEY_STATUS[transport] === 401) {
        // No key was sent: nothing to call invalid.
        expect(outcome.wwwAuthenticate, JSON.stringify(outcome)).toBe(
          'Bearer realm="memory-gateway"',
        );
      } else {
        expect(outcome.atConnection, JSON.stringify(outcome)).toBe(true);
      }
    },
  );

  it.each(COLUMNS)(
    '%s: an unknown, a revoked and an expired key are UNAUTHENTICATED, invalid_token',
    async (transport) => {
      const revoked = await key(['read']);
      await revokeApiKey(t.database.collections, revoked);
      // A key that expired an hour ago, by the clock of a gateway two hours ahead.
      const expiring = await key(['read'], new Date(Date.now() + 3_600_000));
      const later = await openDoor({ clock: () => new Date(Date.now() + 2 * 3_600_000) });
      const outcomes = [
        await cell(door, transport, READ, 'mk_unknown_key'),
        await cell(door, transport, READ, revoked),
        await cell(later, transport, READ, expiring),
      ];
      for (const outcome of outcomes) {
        expect(outcome.code, JSON.stringify(outcome)).toBe('UNAUTHENTICATED');
        expect(outcome.status, JSON.stringify(outcome)).toBe(REFUSED_KEY_STATUS[transport]);
        if (REFUSED_KEY_STATUS[transport] === 401) {
          expect(outcome.wwwAuthenticate, JSON.stringify(outcome)).toMatch(
            /^Bearer realm="memory-gateway", error="invalid_token"(, |$)/,
          );
        } else {
          expect(outcome.atConnection, JSON.stringify(outcome)).toBe(true);
        }
      }
      // The same key, on a gateway whose clock has not reached its expiry, works.
      expect((await cell(door, transport, READ, expiring)).code).toBeNull();
    },
  );

  it.each(COLUMNS)(
    '%s: a key without the scope is FORBIDDEN before anything runs',
    async (transport) => {
      const writer = await key(['write']);
      expect((await cell(door, transport, READ, writer)).code).toBe('FORBIDDEN');
    },
  );

  it.each(COLUMNS)('%s: a read key cannot write, and nothing is written', async (transport) => {
    const factId = liveFact();
    const outcome = await cell(door, transport, deleting(factId), reader);
    // GraphQL over GET runs no mutation, whatever the key (GraphQL over HTTP).
    expect(outcome.code, JSON.stringify(outcome)).toBe(
      transport === 'graphql-get' ? 'BAD_REQUEST' : 'FORBIDDEN',
    );
    const fact = await t.database.collections.facts.findOne({ factId, dataset: WRITTEN });
    expect(fact?.invalidAt).toBeNull();
  });

  it.each(COLUMNS)('%s: a write key writes (GraphQL over GET: never)', async (transport) => {
    const writer = await key(['read', 'write']);
    const factId = liveFact();
    const outcome = await cell(door, transport, deleting(factId), writer);
    const fact = await t.database.collections.facts.findOne({ factId, dataset: WRITTEN });
    if (transport === 'graphql-get') {
      expect(outcome.code).toBe('BAD_REQUEST');
      expect(fact?.invalidAt).toBeNull();
    } else {
      expect(outcome.code, JSON.stringify(outcome)).toBeNull();
      expect(fact?.invalidAt).not.toBeNull();
    }
  });

  it.each(COLUMNS)('%s: an operation over the cost limit is refused whole', async (transport) => {
    const outcome = await cell(door, transport, COSTLY, reader);
    // REST and MCP have no client text to measure: their own operations run.
    expect(outcome.code).toBe(RUNS_OWN.has(transport) ? null : 'QUERY_TOO_COMPLEX');
  });

  describe('TRUSTED_DOCUMENTS=only', () => {
    let only: Door;
    beforeAll(async () => {
      only = await openDoor({ trustedDocuments: 'only' });
    });

    it.each(COLUMNS)(
      '%s: text is PERSISTED_QUERY_ONLY; a registered hash runs',
      async (transport) => {
        const text = await cell(only, transport, READ, reader);
        // REST and MCP send no text: their registered operations run.
        expect(text.code, JSON.stringify(text)).toBe(
          RUNS_OWN.has(transport) ? null : 'PERSISTED_QUERY_ONLY',
        );
        const registered = await cell(only, transport, REGISTERED, reader);
        expect(registered.code, JSON.stringify(registered)).toBeNull();
      },
    );
  });

  describe('rate limits', () => {
    it.each(COLUMNS)('%s: past the per-key limit, RATE_LIMITED', async (transport) => {
      const limited = await openDoor({ rateLimitPerMinute: 1 });
      const own = await key(['read']);
      expect((await cell(limited, transport, READ, own)).code).toBeNull();
      expect((await cell(limited, transport, READ, own)).code).toBe('RATE_LIMITED');
    });

    it.each(COLUMNS)('%s: past the per-address limit, RATE_LIMITED', async (transport) => {
      // A WebSocket's upgrade counts too (it is refused there, before any key lookup).
      const limited = await openDoor({ rateLimitPerAddressPerMinute: 1 });
      await cell(limited, transport, READ, reader);
      expect((await cell(limited, transport, READ, reader)).code).toBe('RATE_LIMITED');
    });
  });

  describe("the workspace's fairness slot", () => {
    let fair: Door;
    beforeAll(async () => {
      fair = await openDoor({ workspaceConcurrency: 1, workspaceQueue: 0 });
    });

    it.each(COLUMNS)(
      '%s: with the slot taken, RATE_LIMITED; once free, it runs',
      async (transport) => {
        const held = holdSlot(fair, reader);
        await held.taken;
        expect((await cell(fair, transport, READ, reader)).code).toBe('RATE_LIMITED');
        await held.release();
        expect((await cell(fair, transport, READ, reader)).code).toBeNull();
      },
    );
  });
});

describe('several operations in one request', () => {
  // GraphQL batching is off (Yoga's `batching` is left unset: src/http/yoga.ts), so an array
  // of operations is one request refused, never several run under one request's count.
  it.each([
    ['graphql-post', 'application/graphql-response+json'],
    ['graphql-sse', 'text/event-stream'],
  ])(
    '%s: a batch is refused in GraphQL’s shape before anything runs',
    async (_transport, accept) => {
      dataCommands.length = 0;
      const operation = JSON.parse(postBody(READ)) as unknown;
      const response = await fetch(`${door.origin}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept, ...bearer(reader) },
        body: JSON.stringify([operation, operation]),
      });
      expect(response.status).toBe(400);
      // Over SSE, the errors come as the stream's one `next` event, as every request error does.
      const text = await response.text();
      const body =
        accept === 'text/event-stream' ? /event: next\ndata: (.*)\n/.exec(text)?.[1] : text;
      expect(JSON.parse(body ?? 'null'), text).toEqual({
        errors: [{ message: 'Batching is not supported.', extensions: { code: 'BAD_REQUEST' } }],
      });
      expect(dataCommands).toEqual([]);
    },
  );
});

describe('the executor, reachable only through the pipeline', () => {
  const ALLOWED = [
    // The GraphQL endpoint: Yoga, mounted on /graphql behind the pipeline (src/http/app.ts).
    'src/http/app.ts: createGraphqlYoga',
    'src/http/yoga.ts: createGraphqlYoga',
    // Yoga's plugin that executes each event of a subscription the endpoint admitted.
    'src/http/sharedEvents.ts: execute',
    // The REST adapters' named operations, run by routes mounted behind the pipeline.
    'src/rest/runOperation.ts: compileQuery',
    'src/rest/runOperation.ts: runOperation',
    'src/rest/memorySoda.ts: runOperation',
    'src/rest/supaCloud.ts: runOperation',
    // The MCP tools' named operations, run by /mcp behind the pipeline.
    'src/mcp/tools.ts: runOperation',
  ];

  it('is imported or defined nowhere else in src/', async () => {
    const { readdirSync, readFileSync } = await import('node:fs');
    const found: string[] = [];
    for (const entry of readdirSync('src', { recursive: true, withFileTypes: true })) {
      if (!entry.isFile() || !/\.[cm]?[jt]sx?$/.test(entry.name)) continue;
      const file = `${entry.parentPath}/${entry.name}`;
      found.push(...executorReferences(file, readFileSync(file, 'utf8')));
    }
    // The walk sees what it claims to: every allowed place is found, and nothing else.
    expect(found.sort()).toEqual([...ALLOWED].sort());
  });

  /** Each way a file can bring in an executor; the walk must see every one. */
  const ESCAPES: [string, string, string][] = [
    ['a named import', `import { execute } from 'graphql';`, 'execute'],
    ['a named import, renamed', `import { execute as run } from 'graphql'; run(args);`, 'execute'],
    ['a named import after a default', `import g, { subscribe } from 'graphql';`, 'subscribe'],
    ['a default import, used', `import graphql from 'graphql'; graphql.execute(args);`, 'execute'],
    [
      'a default import by the name',
      `import runOperation from './runOperation.js';`,
      'runOperation',
    ],
    ['a namespace import', `import * as graphql from 'graphql'; graphql.execute(args);`, 'execute'],
    [
      'a namespace, indexed',
      `import * as g from 'graphql'; g['executeSync'](args);`,
      'executeSync',
    ],
    [
      'a namespace, destructured',
      `import * as g from 'graphql'; const { execute: run } = g;`,
      'execute',
    ],
    [
      'a namespace, aliased',
      `import * as g from 'graphql'; const h = g; h.graphql(args);`,
      'graphql',
    ],
    ['a dynamic import, destructured', `const { execute } = await import('graphql');`, 'execute'],
    ['a dynamic import, read', `(await import('graphql')).execute(args);`, 'execute'],
    ['a dynamic import, bound', `const g = await import('graphql'); g.execute(args);`, 'execute'],
    ['a dynamic import, then', `import('graphql').then((g) => g.execute(args));`, 'execute'],
    [
      'a dynamic import, then destructured',
      `import('graphql-jit').then(({ compileQuery }) => 0);`,
      'compileQuery',
    ],
    ['a re-export', `export { execute } from 'graphql';`, 'execute'],
    ['a re-export, renamed', `export { graphqlSync as run } from 'graphql';`, 'graphqlSync'],
    ['a re-export of everything', `export * from 'graphql';`, "* from 'graphql'"],
    ['a re-export as a namespace', `export * as g from 'graphql';`, "* from 'graphql'"],
    ['require', `const g = require('graphql'); g.execute(args);`, 'execute'],
    ['require, destructured', `const { execute } = require('graphql');`, 'execute'],
    ['require, read', `require('graphql').subscribe(args);`, 'subscribe'],
    ['import = require', `import g = require('graphql'); g.execute(args);`, 'execute'],
    ['a definition', `export async function runOperation() {}`, 'runOperation'],
    ['a definition by const', `const execute = (args) => run(args);`, 'execute'],
    ["Yoga's envelope", `const { execute } = yoga.getEnveloped(context);`, 'getEnveloped'],
  ];

  it.each(ESCAPES)('the walk sees %s', (_form, text, name) => {
    expect(executorReferences('src/escape.ts', text)).toContain(`src/escape.ts: ${name}`);
  });

  it('the walk sees no executor in what only shares a name', () => {
    const text = [
      `import type { execute } from 'graphql';`,
      `import { type subscribe, getOperationAST } from 'graphql';`,
      `const hooks = { execute: (_p, wrapped) => wrapped, subscribe: () => 0 };`,
      `const page = links.graphql;`,
      `const { subscribe } = options;`,
    ].join('\n');
    expect(executorReferences('src/names.ts', text)).toEqual([]);
  });
});

/**
 * Every name in src/ that can run a GraphQL operation: graphql-js's and graphql-jit's
 * executors, Yoga's envelope, the gateway's Yoga instance and the REST adapters' runner.
 * Each is allowed only where the admission pipeline has already decided the request.
 */
const EXECUTORS = new Set([
  'execute',
  'executeSync',
  'subscribe',
  'graphql',
  'graphqlSync',
  'compileQuery',
  'getEnveloped',
  'createGraphqlYoga',
  'runOperation',
]);
/** Names reached on an instance rather than a module (Yoga's), flagged on any object. */
const INSTANCE_EXECUTORS = new Set(['getEnveloped']);

/**
 * Where one file can reach an executor, as `file: name`. Parsed rather than matched, so no
 * import form hides one: named imports (renamed too), default and namespace imports read
 * as `g.execute`, `g['execute']` or destructured, `import g = require()`, `require()`,
 * dynamic `import()` (awaited, bound or through `.then`), re-exports (`export * from` is
 * flagged whatever the module: it passes on all of it), and definitions. Type-only imports
 * run nothing and are left out.
 */
function executorReferences(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const found = new Set<string>();
  const flag = (name: string) => {
    if (EXECUTORS.has(name)) found.add(`${file}: ${name}`);
  };
  /** Local names bound to a whole module (namespace, default, require, import()). */
  const modules = new Set<string>();
  const unwrapped = (node: ts.Expression): ts.Expression =>
    ts.isParenthesizedExpression(node) ||
    ts.isAwaitExpression(node) ||
    ts.isNonNullExpression(node) ||
    ts.isAsExpression(node) ||
    ts.isSatisfiesExpression(node)
      ? unwrapped(node.expression)
      : node;
  const isLoad = (node: ts.Expression): boolean => {
    const inner = unwrapped(node);
    return (
      ts.isCallExpression(inner) &&
      (inner.expression.kind === ts.SyntaxKind.ImportKeyword ||
        (ts.isIdentifier(inner.expression) && inner.expression.text === 'require'))
    );
  };
  const isModule = (node: ts.Expression): boolean => {
    const inner = unwrapped(node);
    return isLoad(inner) || (ts.isIdentifier(inner) && modules.has(inner.text));
  };
  /** In `import('m').then((g) => …)`, the callback's parameter: the module. */
  const loadedParameter = (node: ts.Node): ts.BindingName | undefined => {
    if (
      !ts.isCallExpression(node) ||
      !ts.isPropertyAccessExpression(node.expression) ||
      node.expression.name.text !== 'then' ||
      !isLoad(node.expression.expression)
    ) {
      return undefined;
    }
    const callback = node.arguments[0];
    return callback && (ts.isArrowFunction(callback) || ts.isFunctionExpression(callback))
      ? callback.parameters[0]?.name
      : undefined;
  };
  const flagPattern = (pattern: ts.ObjectBindingPattern) => {
    for (const element of pattern.elements) {
      const name = element.propertyName ?? element.name;
      if (ts.isIdentifier(name) || ts.isStringLiteral(name)) flag(name.text);
    }
  };
  const walk = (visit: (node: ts.Node) => void) => {
    const each = (node: ts.Node) => {
      visit(node);
      ts.forEachChild(node, each);
    };
    each(source);
  };

  // First the names bound to modules, again until none is added (`const h = g` after `g`).
  for (let before = -1; before !== modules.size; ) {
    before = modules.size;
    walk((node) => {
      if (ts.isImportDeclaration(node) && !node.importClause?.isTypeOnly) {
        const clause = node.importClause;
        if (clause?.name) modules.add(clause.name.text);
        if (clause?.namedBindings && ts.isNamespaceImport(clause.namedBindings)) {
          modules.add(clause.namedBindings.name.text);
        }
      } else if (
        ts.isImportEqualsDeclaration(node) &&
        ts.isExternalModuleReference(node.moduleReference)
      ) {
        modules.add(node.name.text);
      } else if (
        ts.isVariableDeclaration(node) &&
        ts.isIdentifier(node.name) &&
        node.initializer &&
        isModule(node.initializer)
      ) {
        modules.add(node.name.text);
      } else {
        const parameter = loadedParameter(node);
        if (parameter && ts.isIdentifier(parameter)) modules.add(parameter.text);
      }
    });
  }

  walk((node) => {
    if (ts.isImportDeclaration(node) && !node.importClause?.isTypeOnly) {
      const clause = node.importClause;
      if (clause?.name) flag(clause.name.text);
      if (clause?.namedBindings && ts.isNamedImports(clause.namedBindings)) {
        for (const element of clause.namedBindings.elements) {
          if (!element.isTypeOnly) flag((element.propertyName ?? element.name).text);
        }
      }
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && !node.isTypeOnly) {
      const from = (node.moduleSpecifier as ts.StringLiteral).text;
      if (!node.exportClause || ts.isNamespaceExport(node.exportClause)) {
        found.add(`${file}: * from '${from}'`);
      } else {
        for (const element of node.exportClause.elements) {
          if (!element.isTypeOnly) flag((element.propertyName ?? element.name).text);
        }
      }
    } else if (ts.isPropertyAccessExpression(node)) {
      if (isModule(node.expression) || INSTANCE_EXECUTORS.has(node.name.text)) {
        flag(node.name.text);
      }
    } else if (ts.isElementAccessExpression(node)) {
      if (isModule(node.expression) && ts.isStringLiteralLike(node.argumentExpression)) {
        flag(node.argumentExpression.text);
      }
    } else if (ts.isVariableDeclaration(node)) {
      if (ts.isIdentifier(node.name)) flag(node.name.text);
      else if (ts.isObjectBindingPattern(node.name) && node.initializer) {
        if (isModule(node.initializer)) flagPattern(node.name);
      }
    } else if (ts.isFunctionDeclaration(node) && node.name) {
      flag(node.name.text);
    } else {
      const parameter = loadedParameter(node);
      if (parameter && ts.isObjectBindingPattern(parameter)) flagPattern(parameter);
    }
  });
  return [...found];
}

describe('live streams, on the transports that carry them', () => {
  /** How each transport opens a stream of the dataset's changes (null: it carries none). */
  const STREAMS: Record<Transport, ((d: Door, dataset: string, k: string) => Stream) | null> = {
    'graphql-post': null,
    'graphql-get': null,
    'graphql-sse': (d, dataset, k) =>
      subscribeSse(
        fetch,
        `${d.origin}/graphql`,
        LiveDatasetChangesDocument,
        { dataset, after: null },
        k,
      ),
    'graphql-ws': (d, dataset, k) =>
      subscribeWs(d.wsUrl, LiveDatasetChangesDocument, { dataset, after: null }, k),
    rest: null,
    mcp: null,
  };
  type Stream = LiveSubscription<LiveDatasetChangesSubscription>;
  const carriers = TRANSPORTS.filter((transport) => STREAMS[transport] !== null);

  it('names every transport, and at least the two that carry subscriptions', () => {
    expect(Object.keys(STREAMS).sort()).toEqual([...TRANSPORTS].sort());
    expect(carriers).toEqual(['graphql-sse', 'graphql-ws']);
  });

  const record = (dataset: string, object: string) =>
    recordEpisode(
      t.database.collections,
      testTenant(WORKSPACE, dataset),
      episodeInput([factInput('user', 'drives', object)]),
      new Date(),
    );
  /**
   * Waits until the door has `n` streams open, following their feeds from where they ended
   * (so a change written next reaches them: they subscribe from now).
   */
  const streamsOpen = (d: Door, n: number, withinMs?: number) =>
    streamsFollowing(d.gateway.live, n, withinMs === undefined ? {} : { withinMs });
  const kinds = (stream: Stream) =>
    stream.received.map((r) => r.data?.datasetChanges.kind ?? codesOf(r).join());

  it.each(carriers)(
    '%s: revokeApiKey ends the key’s streams before it answers: no change is delivered after',
    async (transport) => {
      // Rechecks far apart: what ends the stream is the revocation itself.
      const d = await openDoor({ live: { keyRecheckMs: 600_000 } });
      const admin = await key(['read', 'admin']);
      const doomed = await key(['read']);
      const dataset = `revoked-${transport}`;
      const stream = STREAMS[transport]!(d, dataset, doomed);
      await streamsOpen(d, 1);
      await record(dataset, 'a Honda');
      await stream.results(2);
      const response = await fetch(`${d.origin}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...bearer(admin) },
        body: JSON.stringify({
          query: 'mutation Revoke($k: ID!) { revokeApiKey(keyId: $k) { revoked } }',
          variables: { k: doomed },
        }),
      });
      expect((await response.json()).data.revokeApiKey.revoked).toBe(true);
      await record(dataset, 'a Toyota');
      await stream.ended;
      expect(kinds(stream)).toEqual(['EPISODE_RECORDED', 'FACT_RECORDED', 'UNAUTHENTICATED']);
      stream.close();
      await streamsOpen(d, 0);
    },
  );

  it.each(carriers)('%s: a key’s streams end at its expiry', async (transport) => {
    // The key expires in an hour; the door's clock stands a second before that. So the
    // stream opens however long opening takes on a loaded machine, and by the gateway's
    // clock its key expires a second after it opened.
    const expiresAt = new Date(Date.now() + 3_600_000);
    const d = await openDoor({
      clock: () => new Date(expiresAt.getTime() - 1000),
      live: { keyRecheckMs: 600_000 },
    });
    const brief = await key(['read'], expiresAt);
    const stream = STREAMS[transport]!(d, `expiring-${transport}`, brief);
    await stream.ended;
    // Ended by the server once open: its one event is the end (a stream refused before it
    // opened receives no event).
    expect(kinds(stream)).toEqual(['UNAUTHENTICATED']);
    stream.close();
    await streamsOpen(d, 0);
  });

  it.each(carriers)(
    "%s: each event takes one of the workspace's fairness slots (the stream holds none)",
    async (transport) => {
      const d = await openDoor({ workspaceConcurrency: 1, workspaceQueue: 0 });
      // The same stream on a gateway whose slots are free: the moment its events arrive is
      // the moment the held-back ones would have, were they not waiting for the slot.
      const free = await openDoor();
      const dataset = `fair-${transport}`;
      const stream = STREAMS[transport]!(d, dataset, reader);
      await streamsOpen(d, 1);
      const control = STREAMS[transport]!(free, dataset, reader);
      await streamsOpen(free, 1);
      // The open stream holds no slot: a request runs.
      expect((await cell(d, 'graphql-post', READ, reader)).code).toBeNull();
      const held = holdSlot(d, reader);
      await held.taken;
      await record(dataset, 'a bike');
      // Waits for the slot: by the time the free gateway has delivered the change, nothing
      // of it is delivered here while the slot is taken...
      await control.results(2);
      expect(kinds(control)).toEqual(['EPISODE_RECORDED', 'FACT_RECORDED']);
      expect(stream.received, 'delivered while the slot was taken').toEqual([]);
      await held.release();
      // ...and everything once it is free.
      await stream.results(2);
      expect(kinds(stream)).toEqual(['EPISODE_RECORDED', 'FACT_RECORDED']);
      stream.close();
      control.close();
      // A client that leaves is seen at once, or, on a loaded machine where its socket's
      // close went unseen, at the next heartbeat's write (docs/LIVE_UPDATES.md).
      await Promise.all([
        streamsOpen(d, 0, 2 * SSE_HEARTBEAT_MS),
        streamsOpen(free, 0, 2 * SSE_HEARTBEAT_MS),
      ]);
    },
    3 * SSE_HEARTBEAT_MS,
  );
});

/**
 * Holds the workspace's one slot: a GraphQL request whose body has not finished arriving
 * (its length announced, so the edge's checks pass it; a media type the edge leaves to
 * Yoga, which reads the body inside the slot).
 */
function holdSlot(door: Door, keyValue: string) {
  const text = '{ viewer { workspace } }';
  const request = httpRequest(`${door.origin}/graphql`, {
    method: 'POST',
    headers: {
      'content-type': 'application/graphql',
      'content-length': String(Buffer.byteLength(text)),
      ...bearer(keyValue),
    },
  });
  const answered = new Promise<number>((resolve, reject) => {
    request.on('response', (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    request.on('error', reject);
  });
  request.write(text.slice(0, 5));
  request.flushHeaders();
  // The slot is taken once the request is inside it: another one is then refused.
  const taken = until(async () => {
    const probe = await fetch(`${door.origin}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...bearer(keyValue) },
      body: JSON.stringify({ query: text }),
    });
    await probe.arrayBuffer();
    return probe.status === 429;
  }, 'the held request in the slot (a probe refused)');
  return {
    taken,
    release: async () => {
      request.end(text.slice(5));
      expect(await answered).toBe(200);
    },
  };
}
