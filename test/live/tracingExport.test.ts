import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDemoDataset } from '../../src/demo/seed.js';
import { openDatabase } from '../../src/store/database.js';
import { createApiKey } from '../../src/store/workspaces.js';
import { testServerUri } from '../helpers/database.js';
import { spawnGateway } from '../helpers/spawnGateway.js';

/**
 * README's tracing example, run: a gateway started as `npm start` with
 * OTEL_EXPORTER_OTLP_ENDPOINT pointing at a collector of this test's own on loopback sends
 * it the trace of a REST request over OTLP/HTTP (JSON), at the latest when it shuts down.
 */

interface OtlpSpan {
  name: string;
  traceId: string;
  attributes: { key: string; value: Record<string, unknown> }[];
}

let collector: Server;
let endpoint = '';
const received: OtlpSpan[] = [];
const paths: string[] = [];
let gateway: ChildProcess | null = null;

beforeAll(async () => {
  collector = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => {
      body += chunk;
    });
    req.on('end', () => {
      paths.push(req.url ?? '');
      const parsed = JSON.parse(body) as {
        resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[];
      };
      for (const r of parsed.resourceSpans) for (const s of r.scopeSpans) received.push(...s.spans);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
});

afterAll(async () => {
  gateway?.kill('SIGKILL');
  await new Promise((resolve) => collector.close(resolve));
});

describe('OTEL_EXPORTER_OTLP_ENDPOINT', () => {
  it('sends each request as a trace to the collector', async () => {
    const dbName = `tracing_${randomUUID().replaceAll('-', '')}`;
    const database = await openDatabase(testServerUri(), dbName);
    await loadDemoDataset(database.collections, 'acme', new Date());
    const { key } = await createApiKey(database.collections, 'acme', ['read']);
    await database.close();
    const spawned = await spawnGateway({
      MONGODB_URI: testServerUri(),
      MONGODB_DB: dbName,
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
      OTEL_SERVICE_NAME: 'gateway-under-test',
    });
    gateway = spawned.child;
    const response = await fetch(
      `http://127.0.0.1:${spawned.port}/v1/memory/semantic/datasets/user_42/facts`,
      { headers: { authorization: `Bearer ${key}` } },
    );
    expect(response.status).toBe(200);
    const requestId = response.headers.get('x-request-id');
    const exited = new Promise((resolve) => spawned.child.once('exit', resolve));
    spawned.child.kill('SIGTERM');
    await exited;
    expect(paths.every((p) => p === '/v1/traces')).toBe(true);
    const root = received.find((s) => s.name === 'GET /v1/memory/semantic/datasets/:dataset/facts');
    expect(root, spawned.output()).toBeDefined();
    expect(root!.attributes).toContainEqual({
      key: 'gateway.request_id',
      value: { stringValue: requestId },
    });
    const trace = received.filter((s) => s.traceId === root!.traceId).map((s) => s.name);
    expect(trace).toEqual(expect.arrayContaining(['graphql.execute', 'mongodb.find']));
  }, 120_000);
});
