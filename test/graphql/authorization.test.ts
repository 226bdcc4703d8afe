import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import SchemaBuilder from '@pothos/core';
import ScopeAuthPlugin from '@pothos/plugin-scope-auth';
import { isObjectType } from 'graphql';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseApiKey } from '../../src/domain/apiKey.js';
import { MCP_TOOLS } from '../../src/mcp/tools.js';
import { schema } from '../../src/schema/index.js';
import { workspaceIdFor } from '../../src/store/workspaces.js';
import { authorizationRules } from '../helpers/authRules.js';
import { DEMO } from '../helpers/demo.js';
import { openTestGateway, type TestGateway } from '../helpers/gateway.js';
import { callTool, codeOf, mcpClient, textOf } from '../helpers/mcp.js';

/**
 * Authorization is declared on the schema (src/schema/authScopes.ts). This file checks it
 * two ways:
 * - by walking the built schema: every type and field has a rule, workspace data needs
 *   `read`, and only the listed ids and versions are readable without it;
 * - by a matrix: seven keys × every Query field, `node(id:)` for every node type (own and
 *   forged ids), every Mutation (its ids, and its payload's objects) and every REST route,
 *   each cell's outcome written below. The rows are checked against the schema, so a new
 *   root field or node type without a row fails here.
 */

describe('the schema declares a rule for every type and field', () => {
  const { gaps, fields, types } = authorizationRules(schema);

  it('no object type, root field or type-skipping field is without a rule', () => {
    expect(gaps).toEqual([]);
    expect(fields.length).toBeGreaterThan(100);
  });

  it('every node type (workspace data) needs read', () => {
    const nodeTypes = Object.values(schema.getTypeMap()).filter(
      (t) => isObjectType(t) && t.getInterfaces().some((i) => i.name === 'Node'),
    );
    expect(nodeTypes.map((t) => t.name).sort()).toEqual([
      'Dataset',
      'Entity',
      'Episode',
      'Fact',
      'Memory',
    ]);
    for (const type of nodeTypes) expect(types.get(type.name), type.name).toEqual(['read']);
  });

  it('without read, a key reads only the ids and versions its mutations hand back', () => {
    const nodeTypes = new Set(['Dataset', 'Entity', 'Episode', 'Fact', 'Memory']);
    const withoutRead = fields
      .filter((f) => nodeTypes.has(f.coordinate.split('.')[0]!) && !f.scopes.includes('read'))
      .map((f) => f.coordinate)
      .sort();
    expect(withoutRead).toEqual([
      'Episode.episodeId',
      'Fact.factId',
      'Memory.memoryId',
      'Memory.version',
    ]);
  });

  it('each root field needs the scope the README lists', () => {
    const root = Object.fromEntries(
      fields
        .filter((f) => /^(Query|Mutation)\./.test(f.coordinate))
        .map((f) => [f.coordinate, f.scopes.join(',')]),
    );
    expect(root).toEqual({
      'Query.allMemories': 'read',
      'Query.apiKeyEvents': 'admin',
      'Query.apiKeys': 'admin',
      'Query.dataset': 'read',
      'Query.datasets': 'read',
      'Query.memories': 'read',
      'Query.node': 'read',
      'Query.viewer': 'authenticated',
      'Mutation.archiveMemory': 'write',
      'Mutation.createApiKey': 'admin',
      'Mutation.createMemory': 'write',
      'Mutation.deleteFact': 'write',
      'Mutation.eraseDataset': 'admin',
      'Mutation.eraseEpisode': 'admin',
      'Mutation.pinMemory': 'write',
      'Mutation.recordEpisode': 'write',
      'Mutation.restoreFact': 'admin',
      'Mutation.revokeApiKey': 'admin',
      'Mutation.supersedeMemory': 'write',
      'Mutation.unarchiveMemory': 'write',
      'Mutation.unpinMemory': 'write',
      'Mutation.updateMemory': 'write',
    });
  });

  it('the walk finds a rule that was left out (its own check)', () => {
    const b = new SchemaBuilder<{ AuthScopes: { read: boolean } }>({
      plugins: [ScopeAuthPlugin],
      scopeAuth: { authScopes: () => ({ read: true }) },
    });
    const Secret = b.objectRef<{ text: string; id: string }>('Secret').implement({
      fields: (t) => ({
        text: t.exposeString('text'),
        id: t.exposeString('id', { skipTypeScopes: true }),
      }),
    });
    b.queryType({
      fields: (t) => ({
        secret: t.field({ type: Secret, resolve: () => ({ text: 'x', id: '1' }) }),
        guarded: t.string({ authScopes: { read: true }, resolve: () => 'y' }),
      }),
    });
    expect(authorizationRules(b.toSchema()).gaps.sort()).toEqual([
      "Secret.id skips its type's rule and declares none of its own",
      'root field Query.secret declares no authScopes',
      'type Secret declares no authScopes',
    ]);
  });
});

// ---------------------------------------------------------------------------------------
// The matrix
// ---------------------------------------------------------------------------------------

type KeyName = 'none' | 'read' | 'write' | 'admin' | 'readWrite' | 'all' | 'otherWorkspace';
const KEY_NAMES: KeyName[] = [
  'none',
  'read',
  'write',
  'admin',
  'readWrite',
  'all',
  'otherWorkspace',
];

/**
 * What a cell answers:
 * - `401`: UNAUTHENTICATED, HTTP 401, no data;
 * - `403`: FORBIDDEN on the root field, nothing of it in `data`;
 * - `data`: the field's own data (the case's `data` check);
 * - `nothing`: another workspace's key sees nothing (null, empty, zero, NOT_FOUND).
 */
type Outcome = '401' | '403' | 'data' | 'nothing';

// biome-ignore lint/suspicious/noExplicitAny: GraphQL answers, read by the checks below
type Json = any;

const DATASET = 'user_42';

let t: TestGateway;
const keys = {} as Record<KeyName, string | null>;
let counter = 0;
const uuid = () => {
  counter++;
  return `00000000-0000-4000-8000-${String(counter).padStart(12, '0')}`;
};

interface GraphqlAnswer {
  status: number;
  body: {
    data?: Record<string, unknown> | null;
    errors?: { message: string; path?: (string | number)[]; extensions?: { code?: string } }[];
  };
}

async function gql(
  query: string,
  variables: Record<string, unknown>,
  key: string | null,
): Promise<GraphqlAnswer> {
  const response = await t.request('/graphql', {
    method: 'POST',
    key,
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  return { status: response.status, body: await response.json() };
}

const codes = (a: GraphqlAnswer) => [
  ...new Set((a.body.errors ?? []).map((e) => e.extensions?.code)),
];

function expectUnauthenticated(a: GraphqlAnswer) {
  expect(a.status).toBe(401);
  expect(codes(a)).toEqual(['UNAUTHENTICATED']);
  expect(a.body.data ?? null).toBeNull();
}

/**
 * Refused whole before anything ran: HTTP 403, one FORBIDDEN error naming the root field
 * (and any other field the key may not run), no `data` at all.
 */
function expectForbidden(a: GraphqlAnswer, field: string) {
  expect(a.status).toBe(403);
  expect(codes(a)).toEqual(['FORBIDDEN']);
  expect(a.body.errors).toHaveLength(1);
  expect(a.body.data).toBeUndefined();
  expect(a.body.errors![0]!.message).toMatch(/^This operation needs the \w+ scope \(for /);
  expect(a.body.errors![0]!.message).toContain(field);
}

/** Everything the demo data says that a key without read must never see. */
const DEMO_CONTENT = /toyota|honda|berlin|family car|Corolla|euros|lives in/i;

/** Acme's admin reads a node's global id. */
async function globalId(
  query: string,
  variables: Record<string, unknown>,
  pick: (d: Json) => string,
) {
  const a = await gql(query, variables, keys.all);
  expect(a.body.errors).toBeUndefined();
  return pick(a.body.data);
}

/** A fresh episode in acme's dataset, with one fact about a subject of its own. */
async function recordFresh(dataset = DATASET) {
  const episodeId = uuid();
  const subject = `subject ${episodeId}`;
  const a = await gql(
    `mutation($dataset: String!, $input: RecordEpisodeInput!) {
      recordEpisode(dataset: $dataset, input: $input) { facts { factId } }
    }`,
    {
      dataset,
      input: {
        episode: {
          episodeId,
          occurredAt: '2026-01-01',
          source: 'chat',
          content: `secret ${episodeId}`,
        },
        facts: [{ subject, predicate: 'likes', object: 'toyota', confidence: 0.9 }],
      },
    },
    keys.all,
  );
  expect(a.body.errors).toBeUndefined();
  const factId = (a.body.data!.recordEpisode as { facts: { factId: string }[] }).facts[0]!.factId;
  return { episodeId, factId, subject };
}

async function createFreshMemory() {
  const memoryId = uuid();
  const a = await gql(
    `mutation($input: MemoryInput!) { createMemory(dataset: "${DATASET}", input: $input) { memoryId } }`,
    {
      input: {
        memoryId,
        text: `secret memory ${memoryId} about toyota`,
        memoryKind: 'fact',
        scope: 'user',
        sourceType: 'conversation',
      },
    },
    keys.all,
  );
  expect(a.body.errors).toBeUndefined();
  return memoryId;
}

beforeAll(async () => {
  // acme and globex hold the same demo data (same dataset names and public ids).
  t = await openTestGateway({ demoWorkspaces: ['acme', 'globex'] });
  keys.none = null;
  keys.read = await t.key('acme', ['read']);
  keys.write = await t.key('acme', ['write']);
  keys.admin = await t.key('acme', ['admin']);
  keys.readWrite = await t.key('acme', ['read', 'write']);
  keys.all = await t.key('acme', ['read', 'write', 'admin']);
  keys.otherWorkspace = await t.key('initech', ['read', 'write', 'admin']);
});

// Query fields ------------------------------------------------------------------------

interface QueryCase {
  query: string;
  variables?: Record<string, unknown>;
  field: string;
  expected: Record<KeyName, Outcome>;
  /** The own workspace's data (for `data` cells). */
  data: (value: Json, key: KeyName) => void;
  /** What another workspace's key sees (for `nothing` cells). */
  nothing?: (value: Json) => void;
}

const READERS: Record<KeyName, Outcome> = {
  none: '401',
  read: 'data',
  write: '403',
  admin: '403',
  readWrite: 'data',
  all: 'data',
  otherWorkspace: 'nothing',
};

/** Key management: acme's admin keys only; another workspace's admin sees its own keys. */
const ADMINS: Record<KeyName, Outcome> = {
  none: '401',
  read: '403',
  write: '403',
  admin: 'data',
  readWrite: '403',
  all: 'data',
  otherWorkspace: 'nothing',
};
const acmeKeyIds = () =>
  [keys.read, keys.write, keys.admin, keys.all].map((k) => parseApiKey(k!)!.keyId);

const QUERY_CASES: Record<string, QueryCase> = {
  apiKeys: {
    query: '{ apiKeys { keyId name scopes status createdAt lastUsedAt } }',
    field: 'apiKeys',
    expected: ADMINS,
    data: (v) => {
      const listed = v.map((k: Json) => k.keyId);
      for (const id of acmeKeyIds()) expect(listed).toContain(id);
      expect(JSON.stringify(v)).not.toMatch(/mk_|secret/i);
    },
    nothing: (v) => {
      const listed = v.map((k: Json) => k.keyId);
      for (const id of acmeKeyIds()) expect(listed).not.toContain(id);
    },
  },
  apiKeyEvents: {
    query: '{ apiKeyEvents { action keyId by at } }',
    field: 'apiKeyEvents',
    expected: ADMINS,
    data: (v) => {
      const created = v.filter((e: Json) => e.action === 'CREATED').map((e: Json) => e.keyId);
      for (const id of acmeKeyIds()) expect(created).toContain(id);
    },
    nothing: (v) => {
      for (const id of acmeKeyIds()) expect(v.map((e: Json) => e.keyId)).not.toContain(id);
    },
  },
  viewer: {
    query: '{ viewer { workspace scopes } }',
    field: 'viewer',
    expected: {
      none: '401',
      read: 'data',
      write: 'data',
      admin: 'data',
      readWrite: 'data',
      all: 'data',
      otherWorkspace: 'data',
    },
    data: (v, key) => {
      expect(v.workspace).toBe(key === 'otherWorkspace' ? 'initech' : 'acme');
      const scopes: Record<KeyName, string[]> = {
        none: [],
        read: ['READ'],
        write: ['WRITE'],
        admin: ['ADMIN'],
        readWrite: ['READ', 'WRITE'],
        all: ['READ', 'WRITE', 'ADMIN'],
        otherWorkspace: ['READ', 'WRITE', 'ADMIN'],
      };
      expect(v.scopes).toEqual(scopes[key]);
    },
  },
  datasets: {
    query: '{ datasets { totalCount edges { node { name } } } }',
    field: 'datasets',
    expected: READERS,
    data: (v) => expect(v.edges.map((e: Json) => e.node.name)).toContain(DATASET),
    nothing: (v) => expect(v).toEqual({ totalCount: 0, edges: [] }),
  },
  dataset: {
    query: `{ dataset(name: "${DATASET}") { name facts(includeInvalidated: true) { totalCount edges { node { subject episode { content } subjectEntity { facts { object } } } } } entities { totalCount } episodes { totalCount } memories { totalCount } } }`,
    field: 'dataset',
    expected: READERS,
    data: (v) => {
      expect(v.name).toBe(DATASET);
      expect(v.facts.totalCount).toBeGreaterThan(0);
    },
    nothing: (v) => expect(v).toBeNull(),
  },
  memories: {
    query: '{ memories(includeArchived: true) { totalCount edges { node { memoryId text } } } }',
    field: 'memories',
    expected: READERS,
    data: (v) => expect(v.totalCount).toBeGreaterThan(0),
    nothing: (v) => expect(v).toEqual({ totalCount: 0, edges: [] }),
  },
  allMemories: {
    query: '{ allMemories(includeArchived: true) { memoryId text } }',
    field: 'allMemories',
    expected: READERS,
    data: (v) => expect(v.length).toBeGreaterThan(0),
    nothing: (v) => expect(v).toEqual([]),
  },
};

describe('matrix: every Query field × every key', () => {
  it('has a row for every Query field (node has its own rows below)', () => {
    const queryFields = Object.keys(schema.getQueryType()!.getFields()).sort();
    expect([...Object.keys(QUERY_CASES), 'node'].sort()).toEqual(queryFields);
  });

  for (const [name, c] of Object.entries(QUERY_CASES)) {
    for (const key of KEY_NAMES) {
      it(`${name} × ${key}: ${c.expected[key]}`, async () => {
        const a = await gql(c.query, c.variables ?? {}, keys[key]);
        switch (c.expected[key]) {
          case '401':
            return expectUnauthenticated(a);
          case '403':
            expectForbidden(a, c.field);
            expect(JSON.stringify(a.body)).not.toMatch(DEMO_CONTENT);
            return;
          case 'data':
            expect(a.body.errors).toBeUndefined();
            return c.data(a.body.data![c.field], key);
          case 'nothing':
            expect(a.body.errors).toBeUndefined();
            return c.nothing!(a.body.data![c.field]);
        }
      });
    }
  }
});

// node(id:) -------------------------------------------------------------------------------

const NODE_LOOKUPS: Record<string, { query: string; pick: (d: Json) => string; field: string }> = {
  Dataset: {
    query: `{ dataset(name: "${DATASET}") { id } }`,
    pick: (d) => d.dataset.id,
    field: 'name',
  },
  Fact: {
    query: `{ dataset(name: "${DATASET}") { facts(first: 1) { edges { node { id } } } } }`,
    pick: (d) => d.dataset.facts.edges[0].node.id,
    field: 'subject',
  },
  Entity: {
    query: `{ dataset(name: "${DATASET}") { entity(name: "berlin") { id } } }`,
    pick: (d) => d.dataset.entity.id,
    field: 'name',
  },
  Episode: {
    query: `{ dataset(name: "${DATASET}") { episodes(first: 1) { edges { node { id } } } } }`,
    pick: (d) => d.dataset.episodes.edges[0].node.id,
    field: 'content',
  },
  Memory: {
    query: '{ memories(first: 1) { edges { node { id } } } }',
    pick: (d) => d.memories.edges[0].node.id,
    field: 'text',
  },
};

/** A global id for a node that does not exist in acme: the dataset is globex's alone. */
const forged = (type: string, id: string) =>
  Buffer.from(`${type}:${JSON.stringify(['globex-only', id])}`).toString('base64');

describe('matrix: node(id:) for every node type, own and forged ids × every key', () => {
  it('has a row for every node type', () => {
    const nodeTypes = Object.values(schema.getTypeMap())
      .filter((t) => isObjectType(t) && t.getInterfaces().some((i) => i.name === 'Node'))
      .map((t) => t.name)
      .sort();
    expect(Object.keys(NODE_LOOKUPS).sort()).toEqual(nodeTypes);
  });

  for (const [type, lookup] of Object.entries(NODE_LOOKUPS)) {
    for (const key of KEY_NAMES) {
      const outcome = READERS[key];
      it(`node(${type}) × ${key}: ${outcome} (own), ${outcome === 'data' ? 'null' : outcome} (forged)`, async () => {
        const own = await globalId(lookup.query, {}, lookup.pick);
        const query = `query($id: ID!) { node(id: $id) { id __typename ... on ${type} { ${lookup.field} } } }`;
        const answers = [await gql(query, { id: own }, keys[key])];
        answers.push(
          await gql(query, { id: forged(type, DEMO.memories.livesInBerlin) }, keys[key]),
        );
        answers.push(await gql(query, { id: forged(type, DATASET) }, keys[key]));
        const [mine, ...forgeries] = answers as [GraphqlAnswer, ...GraphqlAnswer[]];
        switch (outcome) {
          case '401':
            for (const a of answers) expectUnauthenticated(a);
            return;
          case '403':
            for (const a of answers) expectForbidden(a, 'node');
            return;
          case 'data':
            expect(mine.body.errors).toBeUndefined();
            expect(mine.body.data!.node).toMatchObject({ id: own, __typename: type });
            for (const a of forgeries) expect(a.body).toEqual({ data: { node: null } });
            return;
          case 'nothing':
            // Another workspace's key: acme's own id is as unknown as a forged one.
            for (const a of answers) expect(a.body).toEqual({ data: { node: null } });
            return;
        }
      });
    }
  }
});

// Mutations -----------------------------------------------------------------------------

interface MutationCase {
  scope: 'write' | 'admin';
  /** A fresh target in acme for one cell; returns the variables. */
  setup: () => Promise<Record<string, unknown>>;
  /** `mutation(<declarations>) { <field>(<args>) <selection> }` */
  declarations: string;
  args: string;
  /** What any key with the scope reads back: ids, counts, flags, versions. */
  ids: string;
  /** The payload's objects: workspace data, which needs read. */
  objects: string;
  /** Checks the ids answer of a key of acme. */
  idsData: (value: Json, vars: Record<string, unknown>) => void;
  /** Another workspace's key: what it gets (never acme's data). */
  otherWorkspace: 'NOT_FOUND' | 'zero' | 'own';
  /** The payload holds no workspace data (counts; keys, which need admin): no read needed. */
  payloadWithoutRead?: true;
}

const freshFact = async () => ({ dataset: DATASET, id: (await recordFresh()).factId });
const deletedFact = async () => {
  const vars = await freshFact();
  const a = await gql(
    'mutation($dataset: String!, $id: ID!) { deleteFact(dataset: $dataset, id: $id) { factId } }',
    vars,
    keys.all,
  );
  expect(a.body.errors).toBeUndefined();
  return vars;
};
const memoryVars = async () => ({ dataset: DATASET, memoryId: await createFreshMemory() });
const archivedMemoryVars = async () => {
  const vars = await memoryVars();
  const a = await gql(
    'mutation($dataset: String!, $memoryId: ID!) { archiveMemory(dataset: $dataset, memoryId: $memoryId) { version } }',
    vars,
    keys.all,
  );
  expect(a.body.errors).toBeUndefined();
  return vars;
};
const pinnedMemoryVars = async () => {
  const vars = await memoryVars();
  const a = await gql(
    'mutation($dataset: String!, $memoryId: ID!) { pinMemory(dataset: $dataset, memoryId: $memoryId) { version } }',
    vars,
    keys.all,
  );
  expect(a.body.errors).toBeUndefined();
  return vars;
};

const MEMORY_OBJECTS = '{ memoryId version text validFrom pinned }';
const memoryVersionMutation = (
  setup: () => Promise<Record<string, unknown>>,
  version: number,
): MutationCase => ({
  scope: 'write',
  setup,
  declarations: '$dataset: String!, $memoryId: ID!',
  args: 'dataset: $dataset, memoryId: $memoryId',
  ids: '{ memoryId version }',
  objects: MEMORY_OBJECTS,
  idsData: (v, vars) => expect(v).toEqual({ memoryId: vars.memoryId, version }),
  otherWorkspace: 'NOT_FOUND',
});

const MUTATION_CASES: Record<string, MutationCase> = {
  deleteFact: {
    scope: 'write',
    setup: freshFact,
    declarations: '$dataset: String!, $id: ID!',
    args: 'dataset: $dataset, id: $id',
    ids: '{ factId deleted }',
    objects: '{ factId fact { subject sourceQuote episode { content } } }',
    idsData: (v, vars) => expect(v).toEqual({ factId: vars.id, deleted: true }),
    otherWorkspace: 'NOT_FOUND',
  },
  restoreFact: {
    scope: 'admin',
    setup: deletedFact,
    declarations: '$dataset: String!, $id: ID!',
    args: 'dataset: $dataset, id: $id',
    ids: '{ factId }',
    objects:
      '{ factId subject subjectEntity { facts(includeInvalidated: true) { object sourceQuote episode { content } } } }',
    // The restored version: a document of its own, so the deleted time stays in the history.
    idsData: (v, vars) => expect(v).toEqual({ factId: expect.not.stringMatching(`^${vars.id}$`) }),
    otherWorkspace: 'NOT_FOUND',
  },
  recordEpisode: {
    scope: 'write',
    setup: async () => ({
      dataset: DATASET,
      input: {
        episode: {
          episodeId: uuid(),
          occurredAt: '2026-02-01',
          source: 'chat',
          content: 'user: my car is a toyota',
        },
        facts: [
          {
            subject: 'user',
            predicate: 'drives',
            object: 'toyota',
            confidence: 0.8,
            replaceExisting: true,
          },
        ],
      },
    }),
    declarations: '$dataset: String!, $input: RecordEpisodeInput!',
    args: 'dataset: $dataset, input: $input',
    ids: '{ alreadyRecorded supersededIds episode { episodeId } facts { factId } }',
    // The payload's lists are costed at an episode's 250 facts, so objects under them
    // stay one level deep (lists of lists there are over the cost limit).
    objects:
      '{ alreadyRecorded facts { factId subject subjectEntity { name } episode { content } } superseded { object sourceQuote } }',
    idsData: (v, vars) => {
      expect(v.alreadyRecorded).toBe(false);
      expect(v.episode.episodeId).toBe((vars.input as Json).episode.episodeId);
      expect(v.facts).toHaveLength(1);
      expect(Array.isArray(v.supersededIds)).toBe(true);
    },
    otherWorkspace: 'own',
  },
  eraseEpisode: {
    scope: 'admin',
    setup: async () => ({ dataset: DATASET, id: (await recordFresh()).episodeId }),
    declarations: '$dataset: String!, $id: ID!',
    args: 'dataset: $dataset, id: $id',
    ids: '{ facts episodes entities memories restoredFacts }',
    objects: '{ facts episodes }',
    idsData: (v) => expect(v).toMatchObject({ facts: 1, episodes: 1 }),
    otherWorkspace: 'zero',
    payloadWithoutRead: true,
  },
  eraseDataset: {
    scope: 'admin',
    setup: async () => {
      const dataset = `erasable ${uuid()}`;
      await recordFresh(dataset);
      return { name: dataset };
    },
    declarations: '$name: String!',
    args: 'name: $name',
    ids: '{ facts episodes entities memories }',
    objects: '{ facts episodes }',
    idsData: (v) => expect(v).toMatchObject({ facts: 1, episodes: 1 }),
    otherWorkspace: 'zero',
    payloadWithoutRead: true,
  },
  createApiKey: {
    scope: 'admin',
    setup: async () => ({ name: `pipeline ${uuid()}`, scopes: ['ADMIN'] }),
    declarations: '$name: String!, $scopes: [Scope!]!',
    args: 'name: $name, scopes: $scopes',
    ids: '{ apiKey { keyId name } }',
    objects: '{ key apiKey { keyId name scopes status } }',
    idsData: (v, vars) =>
      expect(v).toEqual({ apiKey: { keyId: expect.any(String), name: vars.name } }),
    otherWorkspace: 'own',
    payloadWithoutRead: true,
  },
  revokeApiKey: {
    scope: 'admin',
    setup: async () => ({ keyId: parseApiKey(await t.key('acme', ['read']))!.keyId }),
    declarations: '$keyId: ID!',
    args: 'keyId: $keyId',
    ids: '{ revoked apiKey { keyId } }',
    objects: '{ revoked apiKey { keyId status revokedAt } }',
    idsData: (v, vars) => expect(v).toEqual({ revoked: true, apiKey: { keyId: vars.keyId } }),
    otherWorkspace: 'NOT_FOUND',
    payloadWithoutRead: true,
  },
  createMemory: {
    scope: 'write',
    setup: async () => ({
      dataset: DATASET,
      input: {
        memoryId: uuid(),
        text: 'likes toyota',
        memoryKind: 'fact',
        scope: 'user',
        sourceType: 'conversation',
      },
    }),
    declarations: '$dataset: String!, $input: MemoryInput!',
    args: 'dataset: $dataset, input: $input',
    ids: '{ memoryId version }',
    objects: MEMORY_OBJECTS,
    idsData: (v, vars) =>
      expect(v).toEqual({ memoryId: (vars.input as Json).memoryId, version: 1 }),
    otherWorkspace: 'own',
  },
  updateMemory: {
    ...memoryVersionMutation(
      async () => ({ ...(await memoryVars()), patch: { text: 'now a honda' } }),
      2,
    ),
    declarations: '$dataset: String!, $memoryId: ID!, $patch: MemoryPatch!',
    args: 'dataset: $dataset, memoryId: $memoryId, patch: $patch',
  },
  archiveMemory: memoryVersionMutation(memoryVars, 2),
  unarchiveMemory: memoryVersionMutation(archivedMemoryVars, 3),
  pinMemory: memoryVersionMutation(memoryVars, 2),
  unpinMemory: memoryVersionMutation(pinnedMemoryVars, 3),
  supersedeMemory: {
    scope: 'write',
    setup: async () => ({
      ...(await memoryVars()),
      input: {
        text: 'drives a honda now',
        memoryKind: 'fact',
        scope: 'user',
        sourceType: 'conversation',
      },
    }),
    declarations: '$dataset: String!, $memoryId: ID!, $input: MemoryInput!',
    args: 'dataset: $dataset, memoryId: $memoryId, input: $input',
    ids: '{ previous { memoryId version } memory { memoryId version } }',
    objects: `{ previous ${MEMORY_OBJECTS} memory ${MEMORY_OBJECTS} }`,
    idsData: (v, vars) => {
      expect(v.previous).toEqual({ memoryId: vars.memoryId, version: 2 });
      expect(v.memory.version).toBe(1);
    },
    otherWorkspace: 'NOT_FOUND',
  },
};

const SCOPES_OF: Record<KeyName, string[]> = {
  none: [],
  read: ['read'],
  write: ['write'],
  admin: ['admin'],
  readWrite: ['read', 'write'],
  all: ['read', 'write', 'admin'],
  otherWorkspace: ['read', 'write', 'admin'],
};
const hasScope = (key: KeyName, scope: 'read' | 'write' | 'admin'): boolean =>
  SCOPES_OF[key].includes(scope);

describe('matrix: every Mutation, its ids and its payload objects × every key', () => {
  it('has a row for every Mutation field', () => {
    expect(Object.keys(MUTATION_CASES).sort()).toEqual(
      Object.keys(schema.getMutationType()!.getFields()).sort(),
    );
  });

  for (const [name, c] of Object.entries(MUTATION_CASES)) {
    const run = (selection: string, vars: Record<string, unknown>, key: KeyName) =>
      gql(`mutation(${c.declarations}) { ${name}(${c.args}) ${selection} }`, vars, keys[key]);

    for (const key of KEY_NAMES) {
      const cell =
        key === 'none'
          ? '401, nothing written'
          : !hasScope(key, c.scope)
            ? '403, nothing written'
            : key === 'otherWorkspace'
              ? { NOT_FOUND: 'NOT_FOUND', zero: 'zero counts', own: 'its own workspace only' }[
                  c.otherWorkspace
                ]
              : hasScope(key, 'read')
                ? 'ids and objects'
                : 'ids; a selection of objects refused whole, nothing written';
      it(`${name} × ${key}: ${cell}`, async () => {
        const vars = await c.setup();
        if (key === 'none') {
          expectUnauthenticated(await run(c.objects, vars, key));
          // Nothing was written: acme's admin still does it, as the first to.
          const after = await run(c.ids, vars, 'all');
          expect(after.body.errors).toBeUndefined();
          c.idsData(after.body.data![name], vars);
          return;
        }
        if (!hasScope(key, c.scope)) {
          const a = await run(c.objects, vars, key);
          expectForbidden(a, `Mutation.${name}`);
          expect(a.body.errors?.[0]?.message).toMatch(
            // The payload's fields that need the same scope (a key's) are named after it.
            new RegExp(`^This operation needs the ${c.scope} scope \\(for Mutation\\.${name}[,)]`),
          );
          // Nothing was written: the same mutation with acme's admin still finds its target.
          const after = await run(c.ids, vars, 'all');
          expect(after.body.errors).toBeUndefined();
          c.idsData(after.body.data![name], vars);
          return;
        }
        if (key === 'otherWorkspace') {
          // A mutation that writes into the caller's own workspace gets a workspace of its
          // own, so the read rows below still see an empty one.
          const a =
            c.otherWorkspace === 'own'
              ? await gql(
                  `mutation(${c.declarations}) { ${name}(${c.args}) ${c.objects} }`,
                  vars,
                  await t.key('umbrella', ['read', 'write', 'admin']),
                )
              : await run(c.objects, vars, key);
          if (c.otherWorkspace === 'NOT_FOUND') {
            expect(codes(a)).toEqual(['NOT_FOUND']);
            expect(a.body.data).toBeNull();
          } else if (c.otherWorkspace === 'zero') {
            expect(a.body).toEqual({ data: { [name]: { facts: 0, episodes: 0 } } });
          } else {
            expect(a.body.errors).toBeUndefined();
          }
          // acme's target is untouched: acme's admin can still do it.
          const after = await run(c.ids, vars, 'all');
          expect(after.body.errors).toBeUndefined();
          if (c.otherWorkspace !== 'own') c.idsData(after.body.data![name], vars);
          return;
        }
        if (hasScope(key, 'read')) {
          const a = await run(c.objects, vars, key);
          expect(a.body.errors).toBeUndefined();
          expect(a.body.data![name]).not.toBeNull();
          return;
        }
        // A key with the mutation's scope and no read: the ids come back...
        const ids = await run(c.ids, vars, key);
        expect(ids.body.errors).toBeUndefined();
        c.idsData(ids.body.data![name], vars);
        // ...and on a fresh target, a selection of the payload's objects is refused whole
        // before anything runs: nothing written, nothing of the data shown.
        const again = await c.setup();
        const objects = await run(c.objects, again, key);
        if (c.payloadWithoutRead) {
          // Counts, or a key (which needs admin): nothing there needs read.
          expect(objects.body.errors).toBeUndefined();
          return;
        }
        expect(objects.status).toBe(403);
        expect(codes(objects)).toEqual(['FORBIDDEN']);
        expect(objects.body.data).toBeUndefined();
        const [refusal] = objects.body.errors!;
        expect(refusal!.message).toMatch(/^This operation needs the read scope \(for \w+\.\w+/);
        expect(refusal!.message).toMatch(/; nothing was run$/);
        // Every field named needs read; the ids alone would have run.
        const missing = (refusal!.extensions as Json).missing as { field: string; needs: string }[];
        expect(missing.length).toBeGreaterThan(0);
        for (const m of missing) expect(m.needs).toBe('read');
        expect(missing.map((m) => m.field)).not.toContain(`Mutation.${name}`);
        expect(JSON.stringify(objects.body)).not.toMatch(/toyota|honda|secret|user:/i);
        // Nothing was written: acme's admin still does it, as the first to.
        const after = await run(c.ids, again, 'all');
        expect(after.body.errors).toBeUndefined();
        c.idsData(after.body.data![name], again);
      });
    }
  }
});

// REST routes ---------------------------------------------------------------------------

interface RestCase {
  method: 'GET' | 'POST' | 'DELETE';
  path: () => Promise<string>;
  /** A JSON body, for the routes that take one. */
  body?: unknown;
  expected: Record<KeyName, number>;
  /** The body of a 200 for acme's keys, and for another workspace's. */
  own: (body: Json) => void;
  other: (body: Json) => void;
}

const BASE = '/v1/memory/semantic';
const READ_ROUTE: Record<KeyName, number> = {
  none: 401,
  read: 200,
  write: 403,
  admin: 403,
  readWrite: 200,
  all: 200,
  otherWorkspace: 200,
};

/** A case for each route, named as the OpenAPI document names it: method and path. */
const REST_CASES: Record<string, RestCase> = {
  [`GET ${BASE}/datasets/{dataset}/facts`]: {
    method: 'GET',
    path: async () => `${BASE}/datasets/${DATASET}/facts`,
    expected: READ_ROUTE,
    own: (b) => expect(b.total).toBeGreaterThan(0),
    other: (b) => expect(b).toEqual({ facts: [], total: 0 }),
  },
  [`GET ${BASE}/datasets/{dataset}/entities`]: {
    method: 'GET',
    path: async () => `${BASE}/datasets/${DATASET}/entities`,
    expected: READ_ROUTE,
    own: (b) => expect(b.entities.length).toBeGreaterThan(0),
    other: (b) => expect(b).toEqual({ entities: [] }),
  },
  [`GET ${BASE}/datasets/{dataset}/entities/{name}/facts`]: {
    method: 'GET',
    path: async () => `${BASE}/datasets/${DATASET}/entities/user/facts`,
    expected: READ_ROUTE,
    own: (b) => expect(b.facts.length).toBeGreaterThan(0),
    other: (b) => expect(b).toEqual({ facts: [] }),
  },
  [`DELETE ${BASE}/datasets/{dataset}/facts/{factId}`]: {
    method: 'DELETE',
    path: async () => `${BASE}/datasets/${DATASET}/facts/${(await recordFresh()).factId}`,
    expected: {
      none: 401,
      read: 403,
      write: 200,
      admin: 403,
      readWrite: 200,
      all: 200,
      otherWorkspace: 404,
    },
    own: (b) => expect(b).toEqual({ factId: expect.any(String), deleted: true }),
    other: (b) => expect(b).toEqual({ error: 'Fact not found' }),
  },
  'POST /v1/memory/recall': {
    method: 'POST',
    path: async () => '/v1/memory/recall',
    body: { dataset: DATASET, query: 'what is the user interested in' },
    expected: READ_ROUTE,
    own: (b) => expect(b.facts.length).toBeGreaterThan(0),
    other: (b) => expect(b).toEqual({ facts: [], context: '' }),
  },
  'GET /api/memories': {
    method: 'GET',
    path: async () => '/api/memories',
    expected: READ_ROUTE,
    own: (b) => expect(b.length).toBeGreaterThan(0),
    other: (b) => expect(b).toEqual([]),
  },
};

describe('matrix: every REST route × every key', () => {
  it('has a row for every route in the OpenAPI document, by name', async () => {
    const doc = (await (await t.request('/openapi.json')).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    const routes = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`),
    );
    expect(Object.keys(REST_CASES).sort()).toEqual(routes.sort());
  });

  for (const [name, c] of Object.entries(REST_CASES)) {
    for (const key of KEY_NAMES) {
      it(`${name} × ${key}: ${c.expected[key]}`, async () => {
        const path = await c.path();
        const response = await t.request(path, {
          method: c.method,
          key: keys[key],
          ...(c.body
            ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(c.body) }
            : {}),
        });
        const body = await response.json();
        expect(response.status).toBe(c.expected[key]);
        if (response.status === 200) (key === 'otherWorkspace' ? c.other : c.own)(body);
        if (response.status === 403) expect(JSON.stringify(body)).toMatch(/scope/);
        if (response.status === 401) expect(JSON.stringify(body)).toMatch(/API key/);
        if (key === 'otherWorkspace' && response.status !== 404) c.other(body);
      });
    }
  }
});

// MCP tools ------------------------------------------------------------------------------

interface ToolCase {
  /** The scope the tool needs (it is offered to, and runs for, keys holding it). */
  scope: 'read' | 'write';
  args: () => Promise<Record<string, unknown>>;
  /** The answer for acme's keys, and for another workspace's (its own, empty workspace). */
  own: (result: CallToolResult) => void | Promise<void>;
  other: (result: CallToolResult) => void | Promise<void>;
}

const content = (r: CallToolResult): Json => r.structuredContent;
const isNotFound = (r: CallToolResult) => expect(codeOf(r), textOf(r)).toBe('NOT_FOUND');
/** Another workspace's dataset is no dataset of this one: said plainly, naming none of acme's. */
const isUnknownDataset = (r: CallToolResult) => {
  isNotFound(r);
  expect(textOf(r)).toContain(`No dataset "${DATASET}" in this workspace`);
};
const freshEpisode = () => {
  const episodeId = uuid();
  return {
    dataset: DATASET,
    input: {
      episode: { episodeId, occurredAt: '2026-01-01', source: 'chat', content: `mcp ${episodeId}` },
      facts: [{ subject: `mcp ${episodeId}`, predicate: 'likes', object: 'tea', confidence: 0.9 }],
    },
  };
};
const ACME = workspaceIdFor('acme');
const acmeFactsOf = (episodeId: string) =>
  t.database.collections.facts.countDocuments({ episodeId, workspaceId: ACME });

const TOOL_CASES: Record<string, ToolCase> = {
  recall: {
    scope: 'read',
    // Not "toyota": the fresh facts the other cases record all say it, so it is common.
    args: async () => ({ dataset: DATASET, query: 'corolla hybrid' }),
    own: (r) => expect(content(r).facts.length).toBeGreaterThan(0),
    other: isUnknownDataset,
  },
  list_facts: {
    scope: 'read',
    args: async () => ({ dataset: DATASET }),
    own: (r) => expect(content(r).total).toBeGreaterThan(0),
    other: isUnknownDataset,
  },
  entity_facts: {
    scope: 'read',
    args: async () => ({ dataset: DATASET, entity: 'user' }),
    own: (r) => expect(content(r).facts.length).toBeGreaterThan(0),
    other: isNotFound,
  },
  fact_history: {
    scope: 'read',
    args: async () => ({ dataset: DATASET, factId: (await recordFresh()).factId }),
    own: (r) => expect(content(r).history).toHaveLength(1),
    other: isNotFound,
  },
  what_changed: {
    scope: 'read',
    args: async () => {
      await recordFresh();
      return { dataset: DATASET };
    },
    own: (r) => expect(content(r).changes.length).toBeGreaterThan(0),
    other: isUnknownDataset,
  },
  list_datasets: {
    scope: 'read',
    args: async () => ({}),
    own: (r) => expect(content(r).datasets.map((d: Json) => d.name)).toContain(DATASET),
    other: (r) => expect(content(r).datasets).toEqual([]),
  },
  record_episode: {
    scope: 'write',
    args: async () => freshEpisode(),
    own: async (r) => {
      expect(content(r).outcome).toBe('RECORDED');
      expect(await acmeFactsOf(content(r).episodeId)).toBe(1);
    },
    // Recorded in the other workspace's own dataset of that name, never in acme's.
    other: async (r) => {
      expect(content(r).outcome).toBe('RECORDED');
      expect(await acmeFactsOf(content(r).episodeId)).toBe(0);
      const { episodeId } = content(r);
      const inOther = { episodeId, workspaceId: workspaceIdFor('initech') };
      expect(await t.database.collections.facts.countDocuments(inOther)).toBe(1);
    },
  },
  delete_fact: {
    scope: 'write',
    args: async () => ({ dataset: DATASET, factId: (await recordFresh()).factId }),
    own: (r) => expect(content(r).deleted).toBe(true),
    other: isNotFound,
  },
  create_memory: {
    scope: 'write',
    args: async () => ({ dataset: DATASET, input: { text: 'mcp memory', memoryId: uuid() } }),
    own: (r) => expect(content(r).version).toBe(1),
    other: async (r) => {
      expect(content(r).version).toBe(1);
      const inWorkspace = (name: string) =>
        t.database.collections.memories.countDocuments({
          memoryId: content(r).memoryId,
          workspaceId: workspaceIdFor(name),
        });
      expect([await inWorkspace('acme'), await inWorkspace('initech')]).toEqual([0, 1]);
    },
  },
  update_memory: {
    scope: 'write',
    args: async () => ({
      dataset: DATASET,
      memoryId: await createFreshMemory(),
      patch: { text: 'changed by mcp' },
    }),
    own: (r) => expect(content(r).version).toBe(2),
    other: isNotFound,
  },
};

const holds: Record<Exclude<KeyName, 'none'>, readonly string[]> = {
  read: ['read'],
  write: ['write'],
  admin: ['admin'],
  readWrite: ['read', 'write'],
  all: ['read', 'write', 'admin'],
  otherWorkspace: ['read', 'write', 'admin'],
};

describe('matrix: every MCP tool × every key', () => {
  const clients = new Map<KeyName, Client>();
  const clientOf = async (key: Exclude<KeyName, 'none'>) => {
    let client = clients.get(key);
    if (!client) {
      client = await mcpClient('http://gateway.test', keys[key], (r) => t.gateway.fetch(r));
      clients.set(key, client);
    }
    return client;
  };

  it('has a row for every tool the server declares', () => {
    expect(Object.keys(TOOL_CASES)).toEqual(MCP_TOOLS.map((tool) => tool.name));
  });

  for (const [name, c] of Object.entries(TOOL_CASES)) {
    it(`${name}: no key is 401; offered to and run for the keys holding ${c.scope}, FORBIDDEN for the others; another workspace sees nothing of acme`, async () => {
      const call = {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name, arguments: await c.args() },
      };
      const anonymous = await t.request('/mcp', {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify(call),
      });
      expect(anonymous.status).toBe(401);
      expect(JSON.stringify(await anonymous.json())).not.toMatch(DEMO_CONTENT);
      for (const key of KEY_NAMES) {
        if (key === 'none') continue;
        const client = await clientOf(key);
        const offered = (await client.listTools()).tools.map((tool) => tool.name);
        const result = await callTool(client, name, await c.args());
        const allowed = holds[key].includes(c.scope);
        expect(offered.includes(name), `${key} offered`).toBe(allowed);
        if (!allowed) {
          expect(codeOf(result), `${key}: ${textOf(result)}`).toBe('FORBIDDEN');
          expect(textOf(result)).toMatch(/scope/);
          continue;
        }
        expect(
          codeOf(result) === null || key === 'otherWorkspace',
          `${key}: ${textOf(result)}`,
        ).toBe(true);
        await (key === 'otherWorkspace' ? c.other : c.own)(result);
        if (key === 'otherWorkspace') expect(textOf(result)).not.toMatch(DEMO_CONTENT);
      }
    });
  }
});

describe('matrix: every Subscription field × every key (GraphQL over SSE)', () => {
  const SUBSCRIPTION_CASES: Record<string, { query: string; expected: Record<KeyName, Outcome> }> =
    {
      datasetChanges: {
        query: `subscription { datasetChanges(dataset: "${DATASET}") { kind fact { subject } } }`,
        expected: READERS,
      },
    };

  it('has a row for every Subscription field', () => {
    expect(Object.keys(SUBSCRIPTION_CASES).sort()).toEqual(
      Object.keys(schema.getSubscriptionType()!.getFields()).sort(),
    );
  });

  for (const [name, c] of Object.entries(SUBSCRIPTION_CASES)) {
    it(`${name}: 401 without a key, 403 without read, the changes for readers, silence for another workspace`, async () => {
      const opened = new Map<KeyName, { text: () => string; cancel: () => Promise<void> }>();
      for (const key of KEY_NAMES) {
        const response = await t.request('/graphql', {
          method: 'POST',
          key: keys[key],
          headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
          body: JSON.stringify({ query: c.query }),
        });
        const expected = c.expected[key];
        if (expected === '401' || expected === '403') {
          const text = await response.text();
          expect(response.status).toBe(Number(expected));
          expect(text).toContain(expected === '401' ? 'UNAUTHENTICATED' : 'FORBIDDEN');
          expect(text).not.toMatch(DEMO_CONTENT);
          continue;
        }
        expect(response.status).toBe(200);
        const reader = response.body!.getReader();
        let text = '';
        void (async () => {
          for (;;) {
            const { value, done } = await reader.read().catch(() => ({ value: null, done: true }));
            if (done) return;
            text += new TextDecoder().decode(value!);
          }
        })();
        opened.set(key, { text: () => text, cancel: () => reader.cancel() });
      }
      while (t.gateway.live.counts().streams < opened.size) {
        await new Promise((r) => setTimeout(r, 10));
      }
      await new Promise((r) => setTimeout(r, 100));
      await recordFresh();
      for (const [key, stream] of opened) {
        if (c.expected[key] !== 'data') continue;
        while (!stream.text().includes('FACT_RECORDED'))
          await new Promise((r) => setTimeout(r, 10));
        expect(stream.text()).toContain('subject ');
      }
      const silent = opened.get('otherWorkspace')!;
      await new Promise((r) => setTimeout(r, 100));
      expect(silent.text()).not.toContain('event: next');
      for (const stream of opened.values()) await stream.cancel();
    });
  }
});
