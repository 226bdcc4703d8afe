/*
 * `npm run mcp:stdio` (built: `node dist/cli/mcpStdio.js`): the gateway's MCP server for a
 * client that speaks only stdio (docs/MCP.md). It relays each JSON-RPC message between its
 * stdin/stdout and a gateway's /mcp, unchanged, with the key in Authorization: every call
 * still goes through the gateway's one door; nothing here decides anything. Configured
 * by MEMORY_GATEWAY_URL (default http://127.0.0.1:3004/mcp) and MEMORY_GATEWAY_KEY.
 * stdout carries the protocol only; what goes wrong is written to stderr.
 */

import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import {
  InitializeResultSchema,
  isJSONRPCRequest,
  type JSONRPCMessage,
} from '@modelcontextprotocol/sdk/types.js';
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

/** The message of a refusal's JSON-RPC error body (docs/MCP.md, "Errors"), or null. */
function refusalMessage(body: string): string | null {
  try {
    const message = (JSON.parse(body) as { error?: { message?: unknown } }).error?.message;
    return typeof message === 'string' ? message : null;
  } catch {
    return null;
  }
}

/**
 * fetch, with a message the gateway refuses read as Refused: the SDK would report it as an
 * error quoting the body, like a gateway that did not answer. Only POSTs: the SDK reads a
 * GET's 405 itself (a stateless server offers no stream of its own).
 */
async function fetchRefusing(input: string | URL, init?: RequestInit): Promise<Response> {
  const response = await fetch(input, init);
  if (init?.method !== 'POST' || response.ok) return response;
  const body = await response.text().catch(() => '');
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
/** The ids of `initialize` requests on their way: their answer names the protocol revision. */
const initializing = new Set<string | number>();

local.onmessage = (message: JSONRPCMessage) => {
  if (isJSONRPCRequest(message) && message.method === 'initialize') initializing.add(message.id);
  gateway.send(message).catch((error: unknown) => {
    tell(error);
    // A request the gateway did not answer still gets an answer, so the client does not wait.
    if (isJSONRPCRequest(message)) {
      void local.send({
        jsonrpc: '2.0',
        id: message.id,
        error: { code: -32000, message: `The gateway at ${url} ${whatHappened(error)}` },
      });
    }
  });
};

gateway.onmessage = (message: JSONRPCMessage) => {
  if ('id' in message && 'result' in message && initializing.delete(message.id)) {
    // Later requests name the revision the gateway agreed to, as the SDK's own client does.
    const initialized = InitializeResultSchema.safeParse(message.result);
    if (initialized.success) gateway.setProtocolVersion(initialized.data.protocolVersion);
  }
  void local.send(message);
};

gateway.onerror = tell;
local.onclose = () => {
  void gateway.close().finally(() => process.exit(0));
};

await gateway.start();
await local.start();
