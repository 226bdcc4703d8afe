import { createHash } from 'node:crypto';
import { parse, validate } from 'graphql';
import { beforeAll, describe, expect, it } from 'vitest';
import { DOCUMENT_HASHES } from '../../explorer/src/generated/documentHashes.js';
import * as explorerOperations from '../../explorer/src/generated/operations.js';
import type { TrustedDocumentMode } from '../../src/config.js';
import { TRUSTED_DOCUMENTS } from '../../src/generated/trustedDocuments.js';
import { createGateway } from '../../src/http/app.js';
import { schema } from '../../src/schema/index.js';
import { readDoc } from '../helpers/docs.js';
import { openTestGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * Trusted documents: the explorer's and the REST adapters' operations registered at build
 * time, sent by hash in Apollo's form (extensions.persistedQuery) or GraphQL over HTTP's
 * (documentId); TRUSTED_DOCUMENTS off, also (the default) and only; an unknown hash is the
 * protocol's "not found", so clients fall back to the text.
 */

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

let t: TestGateway;
let reader: string;
let admin: string;
const gateways = {} as Record<TrustedDocumentMode, ReturnType<typeof createGateway>>;

beforeAll(async () => {
  t = await openTestGateway({ demoWorkspaces: ['acme'] });
  reader = await t.key('acme', ['read']);
  admin = await t.key('acme', ['read', 'admin']);
  for (const mode of ['off', 'also', 'only'] as const) {
    gateways[mode] = createGateway({
      database: t.database,
      trustedDocuments: mode,
      keyUseFlushMs: 0,
    });
  }
});

const viewer = explorerOperations.ExplorerViewerDocument.toString();
const viewerHash = DOCUMENT_HASHES.ExplorerViewer!;

async function post(mode: TrustedDocumentMode, key: string, body: Record<string, unknown>) {
  const response = await gateways[mode].fetch(
    new Request('http://gateway.test/graphql', {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        accept: 'application/json',
      },
      body: JSON.stringify(body),
    }),
  );
  return { status: response.status, body: await response.json() };
}

const apollo = (hash: string) => ({
  extensions: { persistedQuery: { version: 1, sha256Hash: hash } },
});

describe('the registered documents', () => {
  it('hold every explorer and REST operation, each under the SHA-256 of its text, each valid on the schema', () => {
    const texts = Object.values(TRUSTED_DOCUMENTS);
    const explorerCount = Object.keys(explorerOperations).filter((n) =>
      n.endsWith('Document'),
    ).length;
    expect(Object.keys(DOCUMENT_HASHES)).toHaveLength(explorerCount);
    // The explorer's and at least the REST adapters' six.
    expect(Object.keys(TRUSTED_DOCUMENTS).length).toBeGreaterThanOrEqual(explorerCount + 6);
    for (const [hash, text] of Object.entries(TRUSTED_DOCUMENTS)) {
      expect(sha256(text)).toBe(hash);
      expect(validate(schema, parse(text))).toEqual([]);
    }
    for (const [name, value] of Object.entries(explorerOperations)) {
      if (name.endsWith('Document')) expect(texts).toContain(String(value));
    }
    expect(texts.some((text) => text.includes('query MemorySodaListFacts'))).toBe(true);
    expect(texts.some((text) => text.includes('query SupaCloudListMemories'))).toBe(true);
    expect(TRUSTED_DOCUMENTS[viewerHash]).toBe(viewer);
  });
});

describe('TRUSTED_DOCUMENTS=also (the default)', () => {
  it('runs a registered document by its hash, in both forms, and text too', async () => {
    for (const body of [
      apollo(viewerHash),
      { documentId: `sha256:${viewerHash}` },
      { documentId: viewerHash },
      { query: viewer },
    ]) {
      const { status, body: answer } = await post('also', reader, body);
      expect(status, JSON.stringify(body)).toBe(200);
      expect(answer.errors).toBeUndefined();
      expect(answer.data.viewer.workspace).toBe('acme');
    }
    // The default of createGateway is `also`.
    const { body } = await t
      .request('/graphql', {
        method: 'POST',
        key: reader,
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ ...apollo(viewerHash), variables: {} }),
      })
      .then(async (r) => ({ body: await r.json() }));
    expect(body.data.viewer.workspace).toBe('acme');
  });

  it("an unknown hash is the protocol's PersistedQueryNotFound, so a client falls back to the text", async () => {
    for (const mode of ['off', 'also', 'only'] as const) {
      const { body } = await post(mode, reader, apollo('0'.repeat(64)));
      expect(body.errors).toEqual([
        { message: 'PersistedQueryNotFound', extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } },
      ]);
      expect(body.data).toBeUndefined();
    }
    // Neither a query nor a hash: a clear refusal.
    const { status, body } = await post('also', reader, { variables: {} });
    expect(status).toBe(400);
    expect(body.errors[0].extensions.code).toBe('BAD_REQUEST');
  });
});

describe('TRUSTED_DOCUMENTS=off', () => {
  it('registers nothing: a registered hash is not found, text runs', async () => {
    expect((await post('off', reader, apollo(viewerHash))).body.errors[0].message).toBe(
      'PersistedQueryNotFound',
    );
    expect((await post('off', reader, { query: viewer })).body.data.viewer.workspace).toBe('acme');
  });
});

describe('TRUSTED_DOCUMENTS=only', () => {
  it('runs registered hashes; refuses text from a key without admin, before anything runs', async () => {
    expect((await post('only', reader, apollo(viewerHash))).body.data.viewer.workspace).toBe(
      'acme',
    );
    const refused = await post('only', reader, { query: '{ viewer { workspace } }' });
    expect(refused.status).toBe(400);
    expect(refused.body.data).toBeUndefined();
    expect(refused.body.errors).toHaveLength(1);
    expect(refused.body.errors[0].extensions.code).toBe('PERSISTED_QUERY_ONLY');
    expect(refused.body.errors[0].message).toMatch(
      /registered operations only.*admin scope may send text/,
    );
    // A registered document's text is text too: only its hash is trusted.
    expect((await post('only', reader, { query: viewer })).status).toBe(400);
    // A mutation in text writes nothing.
    const writer = await t.key('acme', ['write']);
    const before = await t.database.collections.memories.countDocuments({});
    const write = await post('only', writer, {
      query:
        'mutation { createMemory(dataset: "user_42", input: { text: "x", memoryKind: "fact", scope: "user", sourceType: "chat" }) { memoryId } }',
    });
    expect(write.body.errors[0].extensions.code).toBe('PERSISTED_QUERY_ONLY');
    expect(await t.database.collections.memories.countDocuments({})).toBe(before);
  });

  it('a key with the admin scope may still send text (GraphiQL, scripts)', async () => {
    const { status, body } = await post('only', admin, {
      query: '{ viewer { workspace scopes } }',
    });
    expect(status).toBe(200);
    expect(body.data.viewer.workspace).toBe('acme');
  });
});

describe("docs/OPERATIONS.md's trusted documents example", () => {
  it('runs as written: the viewer question by its hash', async () => {
    const readme = readDoc('OPERATIONS.md');
    const at = readme.indexOf('**Trusted documents**');
    const body = JSON.parse(/```json\n([\s\S]*?)```/.exec(readme.slice(at))![1]!);
    for (const mode of ['also', 'only'] as const) {
      const { status, body: answer } = await post(mode, reader, body);
      expect(status).toBe(200);
      expect(answer.data.viewer.workspace).toBe('acme');
    }
  });
});
