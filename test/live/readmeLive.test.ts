import { type ChildProcess, spawn } from 'node:child_process';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listen } from '../../src/http/server.js';
import { serveGraphqlWebSocket } from '../../src/http/webSocket.js';
import { recordEpisode } from '../../src/store/recordEpisode.js';
import { docSection, readDoc } from '../helpers/docs.js';
import { episodeInput, factInput, testTenant } from '../helpers/episodeInput.js';
import { openTestGateway, type TestGateway } from '../helpers/gateway.js';
import { streamsFollowing } from '../helpers/live.js';
import { until } from '../helpers/until.js';

/**
 * The live examples (docs/LIVE_UPDATES.md, "Subscriptions"; the README's tour shows the same
 * curl), run as written against a real listener: the curl
 * command (its URL, headers and body, sent with fetch) and the graphql-ws program (run by
 * Node from the project, so it imports what a user installs), each receiving a change
 * recorded while it listens.
 */

const ROOT = new URL('../..', import.meta.url).pathname;
const section = docSection('LIVE_UPDATES.md', '## Subscriptions');
const curl = /```sh\n(curl -N[\s\S]*?)```/.exec(section)?.[1];
const program = /```js\n([\s\S]*?)```/.exec(section)?.[1];

let t: TestGateway;
let server: Server;
let webSocket: ReturnType<typeof serveGraphqlWebSocket>;
let base: string;
let key: string;
let child: ChildProcess | null = null;

beforeAll(async () => {
  t = await openTestGateway({ demoWorkspaces: ['development'] });
  key = await t.key('development', ['read']);
  server = await new Promise<Server>((resolve) => {
    const s = listen(t.gateway.fetch, { port: 0, hostname: '127.0.0.1' }, () => resolve(s));
  });
  webSocket = serveGraphqlWebSocket(server, t.gateway);
  base = `127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  child?.kill('SIGKILL');
  t.gateway.beginShutdown();
  await webSocket.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** Records a change once the example's stream follows the feed (it subscribes from now). */
async function recordWhenStreaming(object: string): Promise<void> {
  await streamsFollowing(t.gateway.live, 1);
  await recordEpisode(
    t.database.collections,
    testTenant('development', 'user_42'),
    episodeInput([factInput('user', 'owns', object)]),
    new Date(),
  );
}

describe('docs/LIVE_UPDATES.md: subscriptions', () => {
  it("the README's tour streams with the same curl", () => {
    const tour = /```sh\n(curl -N[\s\S]*?)```/.exec(readDoc('README.md'))?.[1];
    expect(curl).toBeDefined();
    expect(tour).toBe(curl);
  });

  it('the curl example streams a change as an SSE event', async () => {
    expect(curl).toBeDefined();
    const command = curl!.replaceAll('\\\n', ' ');
    const url = /curl -N (\S+)/.exec(command)![1]!.replace('127.0.0.1:3004', base);
    const headers = Object.fromEntries(
      [...command.matchAll(/-H "([^:]+): ([^"]+)"/g)].map((m) => [
        m[1]!,
        m[2]!.replace('$KEY', key),
      ]),
    );
    const body = /-d '([^']+)'/.exec(command)![1]!;
    const controller = new AbortController();
    const response = await fetch(url, { method: 'POST', headers, body, signal: controller.signal });
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const recorded = recordWhenStreaming('a tandem');
    const reader = response.body!.getReader();
    let text = '';
    while (!text.includes('FACT_RECORDED')) {
      const { value } = await reader.read();
      text += new TextDecoder().decode(value);
    }
    await recorded;
    expect(text).toContain('event: next');
    expect(text).toContain('"object":"a tandem"');
    controller.abort();
    await streamsFollowing(t.gateway.live, 0);
  });

  it('the graphql-ws program prints each change as it happens', async () => {
    expect(program).toBeDefined();
    const code = program!.replace('127.0.0.1:3004', base);
    child = spawn(process.execPath, ['--input-type=module', '-e', code], {
      cwd: ROOT,
      env: { ...process.env, KEY: key },
    });
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    await recordWhenStreaming('a kayak');
    await until(
      () => output.includes('FACT_RECORDED'),
      () => `FACT_RECORDED printed:\n${output}`,
    );
    expect(output).toContain('EPISODE_RECORDED');
    expect(output).toContain('FACT_RECORDED a kayak');
    child.kill('SIGKILL');
  });
});
