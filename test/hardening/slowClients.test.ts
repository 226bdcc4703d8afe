import type { Server } from 'node:http';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listen } from '../../src/http/server.js';
import { openTestGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * Clients that are slow, stalled or oversized, against a real listener on loopback: Node's
 * own limits (timeouts, header size) answer before the gateway, in each surface's shape.
 */
let t: TestGateway;
let server: Server;
let port: number;

beforeAll(async () => {
  t = await openTestGateway({ demoWorkspaces: [] });
  await new Promise<void>((ready) => {
    server = listen(
      t.gateway.fetch,
      {
        port: 0,
        hostname: '127.0.0.1',
        timeouts: { headersTimeoutMs: 1000, requestTimeoutMs: 1500, keepAliveTimeoutMs: 1000 },
      },
      () => ready(),
    );
  });
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((done) => server.close(done));
});

/** Sends `head`, then `body` one byte per `everyMs`; resolves with what came back and how much was sent. */
function trickle(head: string, body: string, everyMs: number) {
  return new Promise<{ answer: string; sent: number }>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    let sent = 0;
    let timer: NodeJS.Timeout | undefined;
    socket.on('connect', () => {
      socket.write(head);
      timer = setInterval(() => {
        if (sent >= body.length || socket.destroyed) return clearInterval(timer);
        socket.write(body[sent]!);
        sent++;
      }, everyMs);
    });
    socket.on('data', (chunk) => {
      answer += chunk.toString();
    });
    socket.on('error', (error: NodeJS.ErrnoException) => {
      // The server may reset the connection while bytes are still being written.
      if (error.code !== 'ECONNRESET' && error.code !== 'EPIPE') reject(error);
    });
    socket.on('close', () => {
      clearInterval(timer);
      resolve({ answer, sent });
    });
  });
}

describe('slow and stalled clients are cut off by the server timeouts', () => {
  it('a body trickled one byte at a time is cut off long before it is complete', async () => {
    const body = JSON.stringify({ query: `{ viewer { workspace } } #${'x'.repeat(2000)}` });
    const head =
      'POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
      `Content-Length: ${body.length}\r\n\r\n`;
    // At one byte per 100 ms the body would take over three minutes.
    const { answer, sent } = await trickle(head, body, 100);
    expect(sent).toBeLessThan(body.length / 10);
    expect(answer).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    expect(answer).toMatch(/\r\nConnection: close\r\n/i);
    expect(answer).toContain('"code":"REQUEST_TIMEOUT"');
  }, 30_000);

  it('headers that never finish are answered 408 in the surface shape and the socket closed', async () => {
    const { answer } = await trickle(
      'GET /v1/memory/semantic/datasets/user_42/facts HTTP/1.1\r\nHost: 127.0.0.1\r\n',
      'X-Slow: '.padEnd(5000, 'z'),
      100,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    expect(answer).toMatch(/\r\nConnection: close\r\n/i);
    // Node's timeout does not say which path the request was for: the answer takes the
    // gateway's generic (GraphQL) error shape.
    expect(JSON.parse(answer.split('\r\n\r\n')[1]!)).toEqual({
      errors: [
        {
          message: 'The request did not arrive in time',
          extensions: { code: 'REQUEST_TIMEOUT' },
        },
      ],
    });
  }, 30_000);

  it('many stalled connections are all closed by the server', async () => {
    const stalled = await Promise.all(
      Array.from({ length: 50 }, () => trickle('POST /graphql HTTP/1.1\r\n', '', 1000)),
    );
    // Each was closed by the server (the client never closes): the promises resolved.
    expect(stalled).toHaveLength(50);
  }, 30_000);
});

/** A raw request whose headers are larger than Node accepts (16 KiB). */
function oversized(path: string) {
  return new Promise<{ status: number; body: string; type: string; connection: string }>(
    (resolve, reject) => {
      const req = httpRequest(
        { host: '127.0.0.1', port, path, headers: { 'x-padding': 'p'.repeat(20_000) } },
        (res) => {
          let body = '';
          res.on('data', (chunk) => {
            body += chunk;
          });
          res.on('end', () =>
            resolve({
              status: res.statusCode!,
              body,
              type: res.headers['content-type'] ?? '',
              connection: res.headers.connection ?? '',
            }),
          );
        },
      );
      req.on('error', reject);
      req.end();
    },
  );
}

describe('headers too large: 431 in each surface shape, not an empty body', () => {
  it.each([
    [
      '/v1/memory/semantic/datasets/user_42/facts',
      { error: 'Request line and headers too large (at most 16 KiB)' },
    ],
    [
      '/api/memories',
      {
        code: 'bad_request',
        error: 'Request line and headers too large (at most 16 KiB)',
        details: null,
      },
    ],
    [
      '/graphql',
      {
        errors: [
          {
            message: 'Request line and headers too large (at most 16 KiB)',
            extensions: { code: 'HEADERS_TOO_LARGE' },
          },
        ],
      },
    ],
  ])('%s', async (path, expected) => {
    const answer = await oversized(path);
    expect(answer.status).toBe(431);
    // The server closes the connection after it: the answer says so.
    expect(answer.connection).toBe('close');
    expect(answer.type).toBe('application/json');
    expect(JSON.parse(answer.body)).toEqual(expected);
  });
});

/** A raw request line sent as typed, answered by the listener: status line and body. */
function rawRequestLine(target: string) {
  return new Promise<{ status: string; body: string }>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () =>
      socket.write(`GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`),
    );
    let answer = '';
    socket.on('data', (chunk) => {
      answer += chunk;
    });
    socket.on('end', () => {
      const [head, body] = answer.split('\r\n\r\n');
      resolve({ status: head!.split('\r\n')[0]!, body: body ?? '' });
    });
    socket.on('error', reject);
  });
}

describe('a URL Node cannot parse says which parameter holds what, in the surface shape', () => {
  it('a placeholder with a space in a query parameter names the parameter', async () => {
    const { status, body } = await rawRequestLine(
      '/v1/memory/semantic/datasets/user_42/facts?limit=5&episodeId=<episode id>',
    );
    expect(status).toBe('HTTP/1.1 400 Bad Request');
    expect(JSON.parse(body)).toEqual({
      error:
        'episodeId: holds a space, which a URL must carry percent-encoded (%20); replace a placeholder such as <id> with a value',
    });
  });

  it('a space in the path says so; a tab is a control character', async () => {
    const path = await rawRequestLine('/api/memories extra');
    expect(JSON.parse(path.body)).toMatchObject({
      code: 'bad_request',
      error: "The URL's path holds a space, which must be percent-encoded (%20)",
    });
    const tab = await rawRequestLine('/graphql?query=a\tb');
    expect(JSON.parse(tab.body).errors[0]).toMatchObject({
      message: expect.stringMatching(/^query: holds a control character, .*\(%09\)/),
      extensions: { code: 'BAD_USER_INPUT' },
    });
  });
});
