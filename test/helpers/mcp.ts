import {
  Client as CurrentClient,
  StreamableHTTPClientTransport as CurrentTransport,
} from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

/** What a gateway answers HTTP with: its in-process `fetch`, or a listener's through the real one. */
export type Fetcher = (request: Request) => Response | Promise<Response>;

/**
 * The MCP SDK's own client, connected (initialized) to a gateway's /mcp with a key, as an
 * agent's host connects: `origin` is where the gateway is, `send` how requests reach it.
 */
export async function mcpClient(
  origin: string,
  key: string | null,
  send: Fetcher = (request) => fetch(request),
): Promise<Client> {
  const client = new Client({ name: 'test-agent', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', origin), {
    requestInit: { headers: key ? { authorization: `Bearer ${key}` } : {} },
    fetch: async (url, init) => send(new Request(url, init)),
  });
  await client.connect(transport);
  return client;
}

/** MCP's current revision, which a client of the SDK's v2 line speaks when asked. */
export const CURRENT_REVISION = '2026-07-28';

/**
 * The SDK's v2 client, pinned to the current revision (stateless: `server/discover`, no
 * `initialize`), as an agent built on it connects when told to.
 */
export async function currentMcpClient(
  origin: string,
  key: string | null,
  send: Fetcher = (request) => fetch(request),
): Promise<CurrentClient> {
  const client = new CurrentClient(
    { name: 'test-agent', version: '2.0.0' },
    { versionNegotiation: { mode: { pin: CURRENT_REVISION } } },
  );
  const transport = new CurrentTransport(new URL('/mcp', origin), {
    requestInit: { headers: key ? { authorization: `Bearer ${key}` } : {} },
    fetch: async (url, init) => send(new Request(url, init)),
  });
  await client.connect(transport);
  return client;
}

/** A tool call's answer, narrowed to the plain result the gateway's tools give. */
export async function callTool(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

/** The text a tool result carries (its one text content). */
export function textOf(result: CallToolResult): string {
  const [first] = result.content;
  return first?.type === 'text' ? first.text : '';
}

/** The gateway's code leading a failed call's text (`FORBIDDEN: ...`), or null if it did not fail. */
export function codeOf(result: CallToolResult): string | null {
  return result.isError ? (/^([A-Z_]+): /.exec(textOf(result))?.[1] ?? 'NO CODE') : null;
}

/** A JSON-RPC message as it travels: a request's answer, a notification, an error. */
export interface JsonRpcMessage {
  id?: string | number | null;
  method?: string;
  params?: { uri?: string; [k: string]: unknown };
  error?: { code: number; message: string; data?: { code?: string; uri?: string } };
}

let listens = 0;

/** The `_meta` envelope a request of the current revision carries (its revision, client, capabilities). */
export const CURRENT_META = {
  'io.modelcontextprotocol/protocolVersion': CURRENT_REVISION,
  'io.modelcontextprotocol/clientInfo': { name: 'by-hand', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

/** A JSON body posted to /mcp by hand, as a client without the SDK sends it, with these headers. */
export function postMcp(
  send: Fetcher,
  key: string,
  body: unknown,
  headers: Record<string, string> = {},
  signal?: AbortSignal,
): Promise<Response> {
  return Promise.resolve(
    send(
      new Request('http://gateway.test/mcp', {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          authorization: `Bearer ${key}`,
          ...headers,
        },
        body: JSON.stringify(body),
        ...(signal ? { signal } : {}),
      }),
    ),
  );
}

/**
 * A `subscriptions/listen` of the current revision posted by hand (`http://gateway.test`
 * through `send`), as the v2 client posts it: for what the client hides (the HTTP status,
 * headers, the frames of the stream). Its id, and the raw answer.
 */
export async function postListen(
  send: Fetcher,
  key: string,
  uris: string[],
  signal?: AbortSignal,
): Promise<{ id: string; response: Response }> {
  const id = `raw-listen-${++listens}`;
  const params = {
    _meta: {
      ...CURRENT_META,
      'io.modelcontextprotocol/clientInfo': { name: 'raw-agent', version: '1' },
    },
    notifications: { resourceSubscriptions: uris },
  };
  const response = await postMcp(
    send,
    key,
    { jsonrpc: '2.0', id, method: 'subscriptions/listen', params },
    { 'mcp-protocol-version': CURRENT_REVISION, 'mcp-method': 'subscriptions/listen' },
    signal,
  );
  return { id, response };
}

/**
 * The messages of an SSE answer, one at a time as they come: `next` gives the next one (null
 * once the stream has ended), or past `withinMs` fails naming what it waited for.
 */
export function sseMessages(response: Response, withinMs = 30_000) {
  const type = response.headers.get('content-type');
  if (type !== 'text/event-stream') throw new Error(`not an SSE answer: ${type}`);
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  const read = async (): Promise<JsonRpcMessage | null> => {
    for (;;) {
      const end = text.indexOf('\n\n');
      if (end >= 0) {
        const event = text.slice(0, end).split('\n');
        text = text.slice(end + 2);
        const data = event.filter((line) => line.startsWith('data:')).map((l) => l.slice(5));
        if (data.length > 0) return JSON.parse(data.join('\n')) as JsonRpcMessage;
        continue;
      }
      const { value, done } = await reader.read();
      if (done) return null;
      text += decoder.decode(value, { stream: true });
    }
  };
  const late = (what: string) =>
    new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error(`not within ${withinMs} ms: ${what}`)), withinMs).unref(),
    );
  return {
    next: (what: string) => Promise.race([read(), late(what)]),
    /** The client stops reading: the answer's stream is cancelled. */
    cancel: () => reader.cancel().catch(() => {}),
  };
}

/** An answer as a doc writes it, as a pattern: `…` stands for anything (a time, a cursor). */
export const answerPattern = (text: string) =>
  new RegExp(
    `^${text
      .trim()
      .split('…')
      .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('[\\s\\S]*?')}$`,
  );
