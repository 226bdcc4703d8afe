/*
 * `npm run mcp:stdio` (built: `node dist/cli/mcpStdio.js`): the gateway's MCP server for a
 * client that speaks only stdio (docs/MCP.md). It relays each JSON-RPC message between its
 * stdin/stdout and a gateway's /mcp, unchanged, with the key in Authorization: every call
 * still goes through the gateway's one door; nothing here decides anything. Configured
 * by MEMORY_GATEWAY_URL (default http://127.0.0.1:3004/mcp) and MEMORY_GATEWAY_KEY.
 * stdout carries the protocol only; what goes wrong is written to stderr.
 *
 * Both revisions pass: a 2025 one's `initialize` and what follows it, and the current
 * one's stateless requests, whose `_meta` names their revision (the SDK's HTTP transport
 * derives MCP-Protocol-Version, Mcp-Method and Mcp-Name from it). A request answered with a
 * stream (`subscriptions/listen`) has each message relayed as it comes, and a
 * `notifications/cancelled` naming a request still on its way ends that request's POST:
 * over HTTP the closed stream is the cancellation, so the gateway frees what it held.
 */

import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { InitializeResultSchema } from '@modelcontextprotocol/core';
import {
  isJSONRPCErrorResponse,
  isJSONRPCNotification,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
  PROTOCOL_VERSION_META_KEY,
  type RequestId,
  type TransportSendOptions,
} from '@modelcontextprotocol/server';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { parseCommandLine } from './help.js';

// Given here, not read from this file's doc comment: the build (dist/) drops comments.
const USAGE = `Usage: node dist/cli/mcpStdio.js   (built by npm run build, or npm start)

Relays MCP's JSON-RPC between stdin/stdout and a gateway's /mcp. It takes no options:
MEMORY_GATEWAY_URL (default http://127.0.0.1:3004/mcp) names the gateway and
MEMORY_GATEWAY_KEY (required) is the API key it sends (docs/MCP.md).`;

// Before anything is written to stdout, which carries the protocol only.
parseCommandLine(import.meta.url, { options: {} }, USAGE);

const url = process.env.MEMORY_GATEWAY_URL ?? 'http://127.0.0.1:3004/mcp';
const key = process.env.MEMORY_GATEWAY_KEY;
if (!key) {
  process.stderr.write('MEMORY_GATEWAY_KEY is not set: give the bridge an API key (docs/MCP.md)\n');
  process.exit(2);
}

/** The gateway answered a message with an HTTP refusal: its status and what its body says. */
class Refused extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** A body parsed as JSON, or undefined when it is not JSON. */
function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The message of a refusal's JSON-RPC error body (docs/MCP.md, "Errors"), or null. */
function refusalMessage(body: string): string | null {
  const message = (parsed(body) as { error?: { message?: unknown } } | undefined)?.error?.message;
  return typeof message === 'string' ? message : null;
}

/** The id of the one request a POST's body carries, or undefined (a notification, a batch). */
function requestIdOf(body: RequestInit['body']): RequestId | undefined {
  const message = typeof body === 'string' ? parsed(body) : undefined;
  if (typeof message !== 'object' || message === null || Array.isArray(message)) return undefined;
  if (!('method' in message) || !('id' in message)) return undefined;
  const { id } = message;
  return typeof id === 'string' || typeof id === 'number' ? id : undefined;
}

/**
 * A refusal's body that is the JSON-RPC error answering the request `id`, as the gateway
 * wrote it, or null. A refusal made before the gateway read the request names no id
 * (`null`): it answers the one request the POST carried all the same, so that id is put in,
 * and nothing else is touched.
 */
function answerIn(body: string, id: RequestId | undefined): string | null {
  const answer = parsed(body);
  if (id === undefined || typeof answer !== 'object' || answer === null) return null;
  const { jsonrpc, error } = answer as { jsonrpc?: unknown; error?: unknown };
  if (jsonrpc !== '2.0' || typeof error !== 'object' || error === null) return null;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (!Number.isInteger(code) || typeof message !== 'string') return null;
  const answered = (answer as { id?: unknown }).id;
  if (answered === id) return body;
  return answered === null || answered === undefined ? JSON.stringify({ ...answer, id }) : null;
}

/**
 * fetch, with a POST the gateway refuses read in one of two ways. A refusal whose body is
 * the JSON-RPC error answering the request (a cap's 429 RATE_LIMITED, a batch's 400, the
 * edge's limits) is that answer, handed on as the gateway wrote it: the SDK's transport
 * would otherwise make an error of its own quoting the body. A refused key, or a refusal
 * that is no such answer (a proxy's error page), is Refused, said here. Only POSTs: the
 * SDK reads a GET's 405 itself (a stateless server offers no stream of its own).
 */
async function fetchRefusing(input: string | URL, init?: RequestInit): Promise<Response> {
  const response = await fetch(input, init);
  if (init?.method !== 'POST' || response.ok) return response;
  const body = await response.text().catch(() => '');
  const answer = response.status === 401 ? null : answerIn(body, requestIdOf(init.body));
  if (answer !== null) {
    return new Response(answer, { status: 200, headers: { 'content-type': 'application/json' } });
  }
  throw new Refused(response.status, refusalMessage(body) ?? `HTTP ${response.status}`);
}

/** What happened to a message, said of the gateway: refused the key, refused it, or no answer. */
function whatHappened(error: unknown): string {
  if (error instanceof Refused) {
    return error.status === 401
      ? `refused the key: ${error.message}`
      : `refused the request (HTTP ${error.status}): ${error.message}`;
  }
  const reason = error instanceof Error ? error.message : String(error);
  // fetch says only "fetch failed"; its cause says why (ECONNREFUSED, a timeout...).
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : null;
  const why = cause ? ` (${'code' in cause ? String(cause.code) : cause.message})` : '';
  return `did not answer: ${reason}${why}`;
}

/** Each failure once on stderr: the SDK reports a failed send both to onerror and to the sender. */
const told = new WeakSet<object>();
function tell(error: unknown): void {
  if (typeof error === 'object' && error !== null) {
    if (told.has(error)) return;
    told.add(error);
  }
  process.stderr.write(`mcp:stdio: ${url}: the gateway ${whatHappened(error)}\n`);
}

const gateway = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { authorization: `Bearer ${key}` } },
  fetch: fetchRefusing,
});
const local = new StdioServerTransport();

/**
 * The requests on their way to the gateway and not yet answered, each with what ends its
 * POST (a stream it is answered with included).
 */
const unanswered = new Map<RequestId, AbortController>();
/** The ids of `initialize` requests on their way: their answer names the protocol revision. */
const initializing = new Set<RequestId>();

/**
 * The request's answer when the gateway gave none, so the client does not wait: the gateway
 * failed it (`why`), or its stream ended without one.
 */
function answerUnanswered(id: RequestId, why: string): void {
  if (!unanswered.delete(id)) return;
  initializing.delete(id);
  void local.send({
    jsonrpc: '2.0',
    id,
    error: { code: -32000, message: `The gateway at ${url} ${why}` },
  });
}

/** The revision a message of the current one names in its `_meta`, or undefined. */
function claimedRevision(message: JSONRPCMessage): string | undefined {
  const params = 'params' in message ? (message.params as { _meta?: unknown } | undefined) : null;
  const meta = params?._meta as Record<string, unknown> | undefined;
  const revision = meta?.[PROTOCOL_VERSION_META_KEY];
  return typeof revision === 'string' ? revision : undefined;
}

local.onmessage = (message: JSONRPCMessage) => {
  // A message of the current revision names it in its `_meta`. The SDK's transport derives
  // a request's MCP-Protocol-Version, Mcp-Method and Mcp-Name from it; a notification's
  // version is the one set here, as the SDK's own client sets it after `server/discover`.
  const revision = claimedRevision(message);
  if (revision !== undefined) gateway.setProtocolVersion(revision);
  let options: TransportSendOptions | undefined;
  if (isJSONRPCRequest(message)) {
    const { id } = message;
    if (message.method === 'initialize') initializing.add(id);
    const ending = new AbortController();
    unanswered.set(id, ending);
    options = {
      requestSignal: ending.signal,
      // A stream that ends (or a GET resuming it is refused) without the request's answer.
      onRequestStreamEnd: () => answerUnanswered(id, 'ended its stream without an answer'),
    };
  } else if (isJSONRPCNotification(message) && message.method === 'notifications/cancelled') {
    // The client will take no answer: the POST ends, which is how HTTP says it (the
    // notification is relayed too, as the SDK's own client sends both).
    const id = (message.params as { requestId?: unknown } | undefined)?.requestId;
    if (typeof id === 'string' || typeof id === 'number') {
      unanswered.get(id)?.abort();
      unanswered.delete(id);
      initializing.delete(id);
    }
  }
  gateway.send(message, options).catch((error: unknown) => {
    // Cancelled by the client, which takes no answer.
    if (options?.requestSignal?.aborted) return;
    tell(error);
    if (isJSONRPCRequest(message)) answerUnanswered(message.id, whatHappened(error));
  });
};

gateway.onmessage = (message: JSONRPCMessage) => {
  if (isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) {
    const initialize = message.id !== undefined && initializing.delete(message.id);
    if (message.id !== undefined) unanswered.delete(message.id);
    if (initialize && isJSONRPCResultResponse(message)) {
      // Later requests name the revision the gateway agreed to, as the SDK's own client does.
      const initialized = InitializeResultSchema.safeParse(message.result);
      if (initialized.success) gateway.setProtocolVersion(initialized.data.protocolVersion);
    }
  }
  void local.send(message);
};

gateway.onerror = tell;
local.onclose = () => {
  void gateway.close().finally(() => process.exit(0));
};

await gateway.start();
await local.start();
