import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOOPBACK_HOSTS } from '../../src/domain/hostNames.js';
import { createGateway } from '../../src/http/app.js';
import { listen } from '../../src/http/server.js';
import { openTestGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * The Host header and the request line, as a client can send them over a socket (no HTTP
 * client library normalises them first), against a real listener on loopback. Every answer
 * is the gateway's own: a Host is read as a URL's host is (case, the spellings of an IPv4
 * address, a trailing dot) and then allowed or refused by the Host rule (ALLOWED_HOSTS,
 * embedded mode), an empty or missing one included; what is not a request at all (HTTP/1.1
 * without Host, a Host that is no host, a backslash in the path) is a 400 in the shape of
 * the surface the path belongs to. Never the Node adapter's empty text/plain 400.
 */

let t: TestGateway;
const servers: Server[] = [];
/** A listener whose gateway has the embedded mode's Host rule (the loopback names). */
let guarded: number;
/** A listener whose gateway has no Host rule (MONGODB_URI, or ALLOWED_HOSTS=*). */
let open: number;

function listenOn(fetch: (request: Request) => Response | Promise<Response>) {
  return new Promise<number>((ready) => {
    const server = listen(fetch, { port: 0, hostname: '127.0.0.1' }, () =>
      ready((server.address() as AddressInfo).port),
    );
    servers.push(server);
  });
}

beforeAll(async () => {
  t = await openTestGateway({ demoWorkspaces: [] });
  guarded = await listenOn(
    createGateway({ database: t.database, keyUseFlushMs: 0, allowedHosts: [...LOOPBACK_HOSTS] })
      .fetch,
  );
  open = await listenOn(createGateway({ database: t.database, keyUseFlushMs: 0 }).fetch);
});

afterAll(async () => {
  for (const server of servers) {
    server.closeAllConnections();
    await new Promise((done) => server.close(done));
  }
});

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

/** Sends `head` as typed (lines joined with CRLF, then an empty line) and reads the answer. */
function send(port: number, ...head: string[]): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(`${head.join('\r\n')}\r\n\r\n`));
    let raw = '';
    socket.on('data', (chunk) => {
      raw += chunk;
    });
    socket.on('error', reject);
    socket.on('end', () => {
      const [top = '', ...rest] = raw.split('\r\n\r\n');
      const [statusLine = '', ...lines] = top.split('\r\n');
      const headers = Object.fromEntries(
        lines.map((line) => {
          const colon = line.indexOf(':');
          return [line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim()];
        }),
      );
      const text = rest.join('\r\n\r\n');
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // Not JSON: kept as text, so the expectation shows what came back.
      }
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body });
    });
  });
}

/** A GET of `path` with the given header lines, closing the connection after the answer. */
const get = (port: number, path: string, ...headers: string[]) =>
  send(port, `GET ${path} HTTP/1.1`, ...headers, 'Connection: close');

const graphqlError = (code: string, message: string | RegExp) => ({
  errors: [
    {
      message: typeof message === 'string' ? message : expect.stringMatching(message),
      extensions: { code },
    },
  ],
});

describe('a Host is read as a URL reads it, then decided by the Host rule', () => {
  it.each([
    ['LOCALHOST:{port}'],
    ['LocalHost'],
    ['127.1'],
    ['0x7f000001:{port}'],
    ['127.0.0.1.'],
    ['[0:0:0:0:0:0:0:1]:{port}'],
  ])('Host: %s is a loopback name: allowed, like its plain spelling', async (host) => {
    for (const port of [guarded, open]) {
      const answer = await get(port, '/healthz', `Host: ${host.replace('{port}', String(port))}`);
      expect([host, answer.status, answer.body]).toEqual([host, 200, { status: 'ok' }]);
    }
  });

  it('another name in any spelling is refused by the rule (403 in the surface shape), and the message names it as the rule reads it', async () => {
    const answer = await get(guarded, '/api/memories', `Host: Rebound.Example.:${guarded}`);
    expect(answer.status).toBe(403);
    expect(answer.headers['content-type']).toMatch(/^application\/json/);
    expect(answer.body).toEqual({
      code: 'forbidden',
      error: 'Host "rebound.example" is not allowed; see ALLOWED_HOSTS',
      details: null,
    });
  });

  it('an empty Host names no allowed host: refused by the rule, not taken as the listener address', async () => {
    const answer = await get(guarded, '/graphql', 'Host: ');
    expect(answer.status).toBe(403);
    expect(answer.body).toEqual(
      graphqlError('FORBIDDEN', 'Host "" is not allowed; see ALLOWED_HOSTS'),
    );
  });

  it('HTTP/1.0 without Host (allowed by its protocol) is an empty Host: refused by the rule', async () => {
    const answer = await send(guarded, 'GET /v1/memory/semantic/datasets/user_42/facts HTTP/1.0');
    expect(answer.status).toBe(403);
    expect(answer.body).toEqual({ error: 'Host "" is not allowed; see ALLOWED_HOSTS' });
  });

  it('without a Host rule, an empty or missing Host (HTTP/1.0) passes, as any Host does', async () => {
    expect((await get(open, '/healthz', 'Host: ')).status).toBe(200);
    expect((await send(open, 'GET /healthz HTTP/1.0')).status).toBe(200);
  });
});

describe('what is not a well-formed request is a 400 in the surface shape, from the listener', () => {
  it('HTTP/1.1 without Host (RFC 9112 requires it), on every gateway', async () => {
    for (const port of [guarded, open]) {
      const answer = await send(port, 'GET /api/memories HTTP/1.1', 'Connection: close');
      expect(answer.status).toBe(400);
      expect(answer.headers['content-type']).toBe('application/json');
      expect(answer.headers.connection).toBe('close');
      expect(answer.body).toEqual({
        code: 'bad_request',
        error: 'An HTTP/1.1 request must carry a Host header',
        details: null,
      });
    }
    const mcp = await send(open, 'POST /mcp HTTP/1.1', 'Content-Length: 0', 'Connection: close');
    expect(mcp.status).toBe(400);
    expect(mcp.body).toMatchObject({
      jsonrpc: '2.0',
      error: {
        message: 'BAD_USER_INPUT: An HTTP/1.1 request must carry a Host header',
        data: { code: 'BAD_USER_INPUT' },
      },
    });
  });

  it('two Host headers (RFC 9112: 400)', async () => {
    const answer = await get(open, '/graphql', 'Host: 127.0.0.1', 'Host: rebound.example');
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual(
      graphqlError('BAD_USER_INPUT', 'A request must carry one Host header, not 2'),
    );
  });

  it.each([
    ['a space', 'local host'],
    ['a path', '127.0.0.1/graphql'],
    ['user info', 'user@127.0.0.1'],
    ['a port that is no number', '127.0.0.1:http'],
  ])('a Host with %s is no host name', async (_, host) => {
    for (const port of [guarded, open]) {
      const answer = await get(port, '/v1/memory/semantic/datasets/user_42/facts', `Host: ${host}`);
      expect([host, answer.status, answer.body]).toEqual([
        host,
        400,
        { error: `Host: "${host}" is not a host name or address (with an optional :port)` },
      ]);
    }
  });

  it.each([
    ['/\\evil.example/', graphqlError('BAD_USER_INPUT', /^The URL's path holds a backslash/)],
    [
      '/api/memories\\x',
      {
        code: 'bad_request',
        error: "The URL's path holds a backslash, which must be percent-encoded (%5C)",
        details: null,
      },
    ],
  ])('a backslash in the path (%s): a URL parser would read it as a slash', async (path, body) => {
    const answer = await get(guarded, path, 'Host: 127.0.0.1');
    expect(answer.status).toBe(400);
    expect(answer.headers['content-type']).toBe('application/json');
    expect(answer.body).toEqual(body);
  });

  it('a backslash in the query is only data: the request passes', async () => {
    const answer = await get(guarded, '/healthz?x=a\\b', 'Host: 127.0.0.1');
    expect(answer.status).toBe(200);
  });

  it.each([
    ['OPTIONS', '*'],
    ['GET', 'graphql'],
  ])('a request target that is not a path (%s %s)', async (method, target) => {
    const answer = await send(
      open,
      `${method} ${target} HTTP/1.1`,
      'Host: 127.0.0.1',
      'Connection: close',
    );
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual(
      graphqlError(
        'BAD_USER_INPUT',
        `The request target must be a path starting with / (or an absolute http URL), not "${target}"`,
      ),
    );
  });
});
