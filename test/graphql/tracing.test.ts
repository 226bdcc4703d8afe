import { trace } from '@opentelemetry/api';
import {
  InMemorySpanExporter,
  NodeTracerProvider,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGateway } from '../../src/http/app.js';
import { traceDatabase } from '../../src/http/tracing.js';
import { openTestGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * OpenTelemetry traces, collected in memory: one REST and one GraphQL request, each one
 * trace whose root is the request's HTTP span (method, route, status, request id, the
 * GraphQL operation), with GraphQL's phases, the loaders' batches and the MongoDB commands
 * under it; no span says an argument's value or stored content. Without a tracer, nothing
 * is traced at all.
 */

const exporter = new InMemorySpanExporter();
const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
let t: TestGateway;
let key: string;

beforeAll(async () => {
  provider.register();
  const tracer = provider.getTracer('test');
  t = await openTestGateway({
    demoWorkspaces: ['acme'],
    clientOptions: { monitorCommands: true },
    gateway: { tracer },
  });
  traceDatabase(t.database.client, tracer);
  key = await t.key('acme', ['read']);
});

afterAll(async () => {
  await provider.shutdown();
  trace.disable();
});

const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId ?? null;

/** The spans of the trace a request made, once it is answered. */
async function traced(run: () => Promise<Response>) {
  exporter.reset();
  const response = await run();
  await response.text();
  // The request's own span ends as its answer is made.
  await expect.poll(() => exporter.getFinishedSpans().some((s) => parentOf(s) === null)).toBe(true);
  const spans = exporter.getFinishedSpans();
  const root = spans.find((s) => parentOf(s) === null)!;
  const ids = new Map(spans.map((s) => [s.spanContext().spanId, s]));
  const ancestors = (span: ReadableSpan): string[] => {
    const parent = ids.get(parentOf(span) ?? '');
    return parent ? [parent.name, ...ancestors(parent)] : [];
  };
  return { response, spans, root, ancestors };
}

function expectNoValues(spans: ReadableSpan[], secrets: string[]) {
  const said = JSON.stringify(spans.map((s) => ({ name: s.name, attributes: s.attributes })));
  for (const secret of secrets) expect(said).not.toContain(secret);
}

describe('traces', () => {
  it('a REST request: its route span, its operation, the key lookup and the reads under it', async () => {
    const { response, spans, root, ancestors } = await traced(() =>
      t.request('/v1/memory/semantic/datasets/user_42/facts?q=toyota', { key }),
    );
    expect(response.status).toBe(200);
    expect(new Set(spans.map((s) => s.spanContext().traceId)).size).toBe(1);
    expect(spans.filter((s) => parentOf(s) === null)).toHaveLength(1);
    expect(root.name).toBe('GET /v1/memory/semantic/datasets/:dataset/facts');
    expect(root.attributes).toMatchObject({
      'http.request.method': 'GET',
      'http.route': '/v1/memory/semantic/datasets/:dataset/facts',
      'http.response.status_code': 200,
      'gateway.request_id': response.headers.get('x-request-id'),
      'graphql.operation.name': 'MemorySodaListFacts',
    });
    const execute = spans.find((s) => s.name === 'graphql.execute')!;
    expect(execute.attributes['graphql.operation.name']).toBe('MemorySodaListFacts');
    expect(ancestors(execute)).toEqual([root.name]);
    // The key is verified under the request's span; the facts are read under the operation.
    const reads = spans.filter((s) => s.name.startsWith('mongodb.'));
    const keyLookup = reads.find((s) => s.attributes['db.collection.name'] === 'apiKeys')!;
    expect(ancestors(keyLookup)).toEqual([root.name]);
    const factReads = reads.filter((s) => s.attributes['db.collection.name'] === 'facts');
    expect(factReads.length).toBeGreaterThanOrEqual(2); // the page and its count
    for (const read of factReads) expect(ancestors(read)).toContain('graphql.execute');
    expectNoValues(spans, ['user_42', 'toyota', key]);
  });

  it("a GraphQL request: parse, validate, execute, the loaders' batches and their reads", async () => {
    const { spans, root, ancestors } = await traced(() =>
      t.request('/graphql', {
        method: 'POST',
        key,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          query:
            'query Nested($d: String!) { dataset(name: $d) { entities(first: 5) { edges { node { name facts { predicate subjectEntity { name } } } } } } }',
          variables: { d: 'user_42' },
        }),
      }),
    );
    expect(root.name).toBe('POST /graphql');
    expect(root.attributes).toMatchObject({ 'graphql.operation.name': 'Nested' });
    const names = spans.map((s) => s.name);
    for (const phase of ['graphql.parse', 'graphql.validate', 'graphql.execute']) {
      expect(names).toContain(phase);
      expect(ancestors(spans.find((s) => s.name === phase)!)).toContain(root.name);
    }
    const execute = spans.find((s) => s.name === 'graphql.execute')!;
    expect(execute.attributes).toMatchObject({
      'graphql.operation.name': 'Nested',
      'graphql.operation.type': 'query',
    });
    const batch = spans.find((s) => s.name === 'dataloader.factsOfEntity')!;
    expect(batch.attributes['dataloader.batch_size']).toBe(5);
    expect(ancestors(batch)).toContain('graphql.execute');
    const batchReads = spans.filter((s) => ancestors(s)[0] === 'dataloader.factsOfEntity');
    expect(batchReads.map((s) => s.name)).toContain('mongodb.find');
    expectNoValues(spans, ['user_42', 'toyota', 'honda', key]);
  });

  it('without a tracer, nothing is traced', async () => {
    const untraced = createGateway({ database: t.database, keyUseFlushMs: 0 });
    exporter.reset();
    const response = await untraced.fetch(
      new Request('http://gateway.test/v1/memory/semantic/datasets/user_42/facts', {
        headers: { authorization: `Bearer ${key}` },
      }),
    );
    expect(response.status).toBe(200);
    // Only the database's own command spans, from this test's client listener.
    expect(exporter.getFinishedSpans().filter((s) => !s.name.startsWith('mongodb.'))).toEqual([]);
  });
});
