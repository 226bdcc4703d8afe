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
