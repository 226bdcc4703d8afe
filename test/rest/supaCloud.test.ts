import { readFileSync } from 'node:fs';
import { type FieldNode, type OperationDefinitionNode, parse } from 'graphql';
import { beforeAll, describe, expect, it } from 'vitest';
import { supaCloudMemoryEntries } from '../../src/domain/supaCloudMemory.js';
import { workspaceIdFor } from '../../src/store/workspaces.js';
import { DEMO } from '../helpers/demo.js';
import { openTestGateway, type TestGateway } from '../helpers/gateway.js';

const FIELDS = [
  'archived_at',
  'created_at',
  'id',
  'importance',
  'last_used_at',
  'memory_kind',
  'pinned',
  'project_id',
  'salience',
  'scope',
  'source_id',
  'source_type',
  'superseded_by',
  'text',
  'updated_at',
  'user_id',
  'valid_from',
  'valid_until',
  'version',
  'workspace_id',
];

let t: TestGateway;
let key: string;

beforeAll(async () => {
  t = await openTestGateway({ demoWorkspaces: ['development', 'other'] });
  key = await t.key('development', ['read']);
});

async function get(path: string, k: string | null = key) {
  const response = await t.request(path, { key: k });
  return { status: response.status, body: await response.json() };
}

describe('GET /api/memories', () => {
  it("the live view: the key's workspace's memories, every listed field, newest first", async () => {
    const { status, body } = await get('/api/memories');
    expect(status).toBe(200);
    expect(body.map((m: { text: string }) => m.text)).toEqual([
      'The user is interested in a Toyota Corolla Hybrid.',
      'The user prefers short, direct answers.',
    ]);
    for (const memory of body) expect(Object.keys(memory)).toEqual(FIELDS);
    expect(body[0]).toEqual({
      archived_at: null,
      created_at: '2026-08-16T09:14:10.000Z',
      id: DEMO.memories.toyota,
      importance: 0.9,
      last_used_at: null,
      memory_kind: 'preference',
      pinned: true,
      project_id: null,
      salience: 0.8,
      scope: 'user',
      source_id: null,
      source_type: 'conversation',
      superseded_by: null,
      text: 'The user is interested in a Toyota Corolla Hybrid.',
      updated_at: '2026-08-16T09:14:10.000Z',
      user_id: DEMO.entities.user,
      valid_from: '2026-08-16T09:14:10.000Z',
      valid_until: null,
      version: 1,
      workspace_id: workspaceIdFor('development'),
    });
  });

  it('include_archived adds archived ones; false is the default', async () => {
    const { body } = await get('/api/memories?include_archived=true');
    expect(body).toHaveLength(3);
    expect(body.find((m: { archived_at: string | null }) => m.archived_at !== null).text).toBe(
      'The user lives in Berlin.',
    );
    expect((await get('/api/memories?include_archived=false')).body).toHaveLength(2);
  });

  it("as_of reconstructs validity membership at that instant, with today's metadata", async () => {
    const { body } = await get('/api/memories?as_of=2026-06-01T00:00:00Z');
    expect(body.map((m: { text: string }) => m.text)).toEqual([
      'The user is considering a Honda Civic.',
      'The user prefers short, direct answers.',
    ]);
    // The superseded memory carries today's metadata: its valid_until and superseded_by.
    expect(body[0]).toMatchObject({
      valid_until: '2026-08-16T09:14:10.000Z',
      superseded_by: DEMO.memories.toyota,
    });
    const withOffset = await get('/api/memories?as_of=2026-06-01T02:00:00%2B02:00');
    expect(withOffset.body).toEqual(body);
    expect(
      (await get('/api/memories?as_of=2026-06-01T00:00:00Z&include_archived=true')).body,
    ).toHaveLength(3);
  });

  it.each([
    ['as_of=2026-06-01', /as_of: must be an RFC 3339/],
    ['as_of=garbage', /as_of/],
    ['as_of=2026-06-01T00:00:00', /as_of/],
    ['include_archived=yes', /include_archived: must be true or false/],
  ])('%s is a 400 bad_request', async (query, message) => {
    const { status, body } = await get(`/api/memories?${query}`);
    expect(status).toBe(400);
    expect(Object.keys(body)).toEqual(['code', 'error', 'details']);
    expect(body.code).toBe('bad_request');
    expect(body.error).toMatch(message);
    expect(body.details).toBeNull();
  });

  it('401 unauthorized without a key or with a bad one', async () => {
    expect(await get('/api/memories', null)).toEqual({
      status: 401,
      body: {
        code: 'unauthorized',
        error: 'Missing API key: send Authorization: Bearer <key>',
        details: null,
      },
    });
    expect((await get('/api/memories', 'mk_bad')).body.code).toBe('unauthorized');
  });

  it('403 forbidden for a key without read', async () => {
    const writer = await t.key('development', ['write']);
    expect(await get('/api/memories', writer)).toEqual({
      status: 403,
      body: { code: 'forbidden', error: 'This operation needs the read scope', details: null },
    });
  });

  it('404 not_found for an unknown route, 405 method_not_allowed for a wrong method', async () => {
    expect(await get('/api/nothing')).toMatchObject({
      status: 404,
      body: { code: 'not_found', details: null },
    });
    const post = await t.request('/api/memories', { method: 'POST', key });
    expect(post.status).toBe(405);
    expect(await post.json()).toMatchObject({ code: 'method_not_allowed', details: null });
  });

  it("another workspace's key sees only its own memories", async () => {
    const otherKey = await t.key('other', ['read']);
    const { body } = await get('/api/memories?include_archived=true', otherKey);
    expect(body).toHaveLength(3);
    for (const m of body) expect(m.workspace_id).toBe(workspaceIdFor('other'));
    const empty = await get('/api/memories', await t.key('nobody', ['read']));
    expect(empty).toEqual({ status: 200, body: [] });
  });

  it('a store failure is a 500 internal_error with no details', async () => {
    const { vi } = await import('vitest');
    const spy = vi.spyOn(t.database.collections.memories, 'find').mockImplementation(() => {
      throw new Error('disk on fire at /var/lib/secret');
    });
    try {
      const { status, body } = await get('/api/memories');
      expect(status).toBe(500);
      expect(body).toEqual({
        code: 'internal_error',
        error: 'Internal server error',
        details: null,
      });
    } finally {
      spy.mockRestore();
    }
  });
});

describe("SupaCloud's memory object, from its one list (src/domain/supaCloudMemory.ts)", () => {
  /** Each field's type and format as SupaCloud's API document gives them. */
  const DOCUMENTED: Record<string, [type: string, format: string | null, nullable: boolean]> = {
    archived_at: ['string', 'date-time', true],
    created_at: ['string', 'date-time', false],
    id: ['string', 'uuid', false],
    importance: ['number', 'double', false],
    last_used_at: ['string', 'date-time', true],
    memory_kind: ['string', null, false],
    pinned: ['boolean', null, false],
    project_id: ['string', 'uuid', true],
    salience: ['number', 'double', false],
    scope: ['string', null, false],
    source_id: ['string', 'uuid', true],
    source_type: ['string', null, false],
    superseded_by: ['string', 'uuid', true],
    text: ['string', null, false],
    updated_at: ['string', 'date-time', false],
    user_id: ['string', 'uuid', true],
    valid_from: ['string', 'date-time', false],
    valid_until: ['string', 'date-time', true],
    version: ['integer', 'int32', false],
    workspace_id: ['string', 'uuid', false],
  };

  it("/openapi.json's Memory has SupaCloud's fields in its order, each of its type and format", async () => {
    const doc = await (await t.request('/openapi.json')).json();
    const memory = doc.components.schemas.Memory as {
      properties: Record<string, { type: string | string[]; format?: string }>;
    };
    expect(Object.keys(memory.properties)).toEqual(FIELDS);
    const described = Object.fromEntries(
      Object.entries(memory.properties).map(([name, p]) => {
        const types = Array.isArray(p.type) ? p.type : [p.type];
        return [name, [types.find((x) => x !== 'null'), p.format ?? null, types.includes('null')]];
      }),
    );
    expect(described).toEqual(DOCUMENTED);
  });

  it("the route's operation aliases each memory field to the name the list gives it", () => {
    const operation = parse(
      readFileSync(new URL('../../src/rest/supaCloud.graphql', import.meta.url), 'utf8'),
    );
    const query = operation.definitions[0] as OperationDefinitionNode;
    const allMemories = query.selectionSet.selections[0] as FieldNode;
    const selected = allMemories.selectionSet!.selections.map((s) => {
      const f = s as FieldNode;
      return [f.alias?.value ?? f.name.value, f.name.value];
    });
    expect(selected).toEqual(supaCloudMemoryEntries.map(([name, spec]) => [name, spec.field]));
    expect(selected.map(([name]) => name)).toEqual(FIELDS);
  });
});
