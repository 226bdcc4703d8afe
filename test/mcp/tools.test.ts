import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { MongoNetworkError } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Scope } from '../../src/domain/apiKey.js';
import { MCP_TOOLS } from '../../src/mcp/tools.js';
import { DEMO } from '../helpers/demo.js';
import { clockFrom, openTestGateway, type TestGateway } from '../helpers/gateway.js';
import { callTool, codeOf, mcpClient, textOf } from '../helpers/mcp.js';

/**
 * Every MCP tool through the SDK's own client, on a real store (the demo dataset in
 * workspace acme, a second workspace beside it): what each answers, what each scope is
 * offered and refused, what another workspace sees, bad arguments, retries.
 */

const DATASET = 'user_42';
const READ_TOOLS = MCP_TOOLS.filter((tool) => tool.annotations.readOnlyHint).map((t) => t.name);
const WRITE_TOOLS = MCP_TOOLS.filter((tool) => !tool.annotations.readOnlyHint).map((t) => t.name);

let t: TestGateway;
const clients: Client[] = [];

async function connect(scopes: Scope[], workspace = 'acme'): Promise<Client> {
  const client = await mcpClient('http://gateway.test', await t.key(workspace, scopes), (r) =>
    t.gateway.fetch(r),
  );
  clients.push(client);
  return client;
}

let reader: Client;
let agent: Client;
let other: Client;

beforeAll(async () => {
  t = await openTestGateway({
    demoWorkspaces: ['acme', 'globex'],
    gateway: { clock: clockFrom('2026-12-01T00:00:00Z') },
  });
  reader = await connect(['read']);
  agent = await connect(['read', 'write']);
  other = await connect(['read', 'write'], 'globex');
});

afterAll(async () => {
  for (const client of clients) await client.close();
});

const structured = <T = Record<string, unknown>>(result: { structuredContent?: unknown }) =>
  result.structuredContent as T;

interface Fact {
  factId: string;
  subject: string;
  predicate: string;
  object: string;
  validUntil: string | null;
  invalidAt: string | null;
}

let episodes = 0;
/** A record_episode argument: a new episode (its own id) with the given facts. */
function episode(facts: Record<string, unknown>[], dataset = 'agent-notes') {
  episodes++;
  return {
    dataset,
    input: {
      episode: {
        episodeId: crypto.randomUUID(),
        occurredAt: `2026-11-${String(10 + (episodes % 18)).padStart(2, '0')}T10:00:00Z`,
        source: 'chat',
        content: `turn ${episodes}`,
      },
      facts,
    },
  };
}
const fact = (object: string, more: Record<string, unknown> = {}) => ({
  subject: 'user',
  predicate: 'likes',
  object,
  confidence: 0.9,
  ...more,
});

describe('tools/list', () => {
  it.each([
    [['read'], READ_TOOLS],
    [['write'], WRITE_TOOLS],
    [['admin'], []],
    [
      ['read', 'write'],
      [...READ_TOOLS, ...WRITE_TOOLS],
    ],
    [
      ['read', 'write', 'admin'],
      [...READ_TOOLS, ...WRITE_TOOLS],
    ],
  ] as [Scope[], string[]][])('a key with %j is offered %j', async (scopes, offered) => {
    const { tools } = await (await connect(scopes)).listTools();
    expect(tools.map((tool) => tool.name)).toEqual(offered);
  });

  it('describes each tool for a model: schemas in, schemas out, annotations', async () => {
    const { tools } = await agent.listTools();
    for (const tool of tools) {
      expect(tool.description?.length, tool.name).toBeGreaterThan(100);
      expect(tool.inputSchema.type, tool.name).toBe('object');
      expect(tool.outputSchema?.type, tool.name).toBe('object');
      expect(tool.annotations?.readOnlyHint, tool.name).toBe(READ_TOOLS.includes(tool.name));
    }
    const named = Object.fromEntries(tools.map((tool) => [tool.name, tool]));
    expect(named.delete_fact!.annotations?.destructiveHint).toBe(true);
    expect(named.record_episode!.annotations?.idempotentHint).toBe(true);
    // The time arguments say what they mean.
    const recall = named.recall!.inputSchema.properties as Record<string, { description?: string }>;
    expect(recall.validAt?.description).toMatch(/true in the world/);
    expect(recall.knownAt?.description).toMatch(/believed/);
    expect(named.recall!.inputSchema.required).toEqual(['dataset', 'query']);
  });
});

describe('each tool, on the demo dataset', () => {
  it('recall: the ranked facts and memories, and the context as text', async () => {
    const result = await callTool(reader, 'recall', {
      dataset: DATASET,
      query: 'which car is the user interested in',
      explain: true,
    });
    const answer = structured<{
      context: string;
      facts: { fact: Fact; explanation?: { terms: unknown[] } }[];
      memories: { memory: { text: string } }[];
    }>(result);
    expect(answer.facts.map((f) => f.fact.factId)).toContain(DEMO.facts.toyotaInterest);
    expect(answer.facts[0]!.explanation?.terms.length).toBeGreaterThan(0);
    expect(answer.memories.map((m) => m.memory.text)).toContain(
      'The user is interested in a Toyota Corolla Hybrid.',
    );
    expect(textOf(result)).toBe(answer.context);
    expect(textOf(result)).toContain('toyota corolla hybrid');
  });

  it('recall with memories: false: facts only, nor any memory line in the context', async () => {
    const result = await callTool(reader, 'recall', {
      dataset: DATASET,
      query: 'which car is the user interested in',
      memories: false,
    });
    const answer = structured<{ facts: unknown[]; memories: unknown[] }>(result);
    expect(answer.facts.length).toBeGreaterThan(0);
    expect(answer.memories).toEqual([]);
    expect(textOf(result)).not.toContain('Memory:');
  });

  it('recall: validAt asks what was true then, knownAt what was believed then', async () => {
    const ids = async (args: Record<string, unknown>) =>
      structured<{ facts: { fact: Fact }[] }>(
        await callTool(reader, 'recall', {
          dataset: DATASET,
          query: 'user interested in',
          ...args,
        }),
      ).facts.map((f) => f.fact.factId);
    // In June, as known now: the Civic interest's corrected version (true until August).
    expect(await ids({ validAt: '2026-06-01' })).toContain(DEMO.facts.hondaInterestUntilToyota);
    // As believed in June: the Civic interest as first recorded.
    expect(await ids({ asOf: '2026-06-01' })).toContain(DEMO.facts.hondaInterest);
    expect(await ids({})).toContain(DEMO.facts.toyotaInterest);
  });

  it('list_facts: a page at a time, the filters of the Memory Soda list, both time axes', async () => {
    const first = structured<{ facts: Fact[]; total: number; nextCursor: string | null }>(
      await callTool(reader, 'list_facts', { dataset: DATASET, limit: 2 }),
    );
    expect(first.total).toBe(3);
    expect(first.nextCursor).not.toBeNull();
    const second = structured<{ facts: Fact[]; nextCursor: string | null }>(
      await callTool(reader, 'list_facts', {
        dataset: DATASET,
        limit: 2,
        cursor: first.nextCursor,
      }),
    );
    expect(second.nextCursor).toBeNull();
    expect([...first.facts, ...second.facts].map((f) => f.factId).sort()).toEqual(
      [DEMO.facts.familyCar, DEMO.facts.hondaMadeBy, DEMO.facts.toyotaInterest].sort(),
    );
    const all = structured<{ total: number }>(
      await callTool(reader, 'list_facts', { dataset: DATASET, includeInvalidated: true }),
    );
    expect(all.total).toBe(8);
    const civic = structured<{ facts: Fact[] }>(
      await callTool(reader, 'list_facts', { dataset: DATASET, q: 'civic', knownAt: '2026-06-01' }),
    );
    expect(civic.facts.map((f) => f.factId).sort()).toEqual(
      [DEMO.facts.hondaInterest, DEMO.facts.hondaMadeBy].sort(),
    );
    const text = textOf(await callTool(reader, 'list_facts', { dataset: DATASET }));
    expect(text).toMatch(/^3 facts\n- user is interested in toyota corolla hybrid \(valid from /);
  });

  it('entity_facts: an entity by name, any case; one the dataset does not know is NOT_FOUND', async () => {
    const result = await callTool(reader, 'entity_facts', {
      dataset: DATASET,
      entity: 'Honda Civic',
    });
    const answer = structured<{ entity: { name: string; type: string }; facts: Fact[] }>(result);
    expect(answer.entity).toEqual({ name: 'honda civic', type: 'PRODUCT' });
    expect(answer.facts.map((f) => f.factId)).toEqual([DEMO.facts.hondaMadeBy]);
    const then = structured<{ facts: Fact[] }>(
      await callTool(reader, 'entity_facts', {
        dataset: DATASET,
        entity: 'honda civic',
        validAt: '2026-06-01',
      }),
    );
    expect(then.facts.map((f) => f.factId)).toContain(DEMO.facts.hondaInterestUntilToyota);
    const unknown = await callTool(reader, 'entity_facts', { dataset: DATASET, entity: 'a boat' });
    expect(codeOf(unknown)).toBe('NOT_FOUND');
    expect(textOf(unknown)).toBe('NOT_FOUND: No entity named "a boat" in dataset "user_42"');
  });

  it('fact_history: the fact, what superseded it, and how its statement changed', async () => {
    const result = await callTool(reader, 'fact_history', {
      dataset: DATASET,
      factId: DEMO.facts.hondaInterest,
    });
    const answer = structured<{
      fact: Fact & { supersededBy: Fact | null };
      history: (Fact & { correctionOf: { factId: string } | null })[];
    }>(result);
    expect(answer.fact.supersededBy?.factId).toBe(DEMO.facts.toyotaInterest);
    expect(answer.history.map((f) => f.factId).sort()).toEqual(
      [
        DEMO.facts.hondaInterest,
        DEMO.facts.hondaInterestUntilToyota,
        DEMO.facts.toyotaInterest,
      ].sort(),
    );
    expect(
      answer.history.find((f) => f.factId === DEMO.facts.hondaInterestUntilToyota)?.correctionOf,
    ).toEqual({ factId: DEMO.facts.hondaInterest });
    expect(textOf(result)).toContain('Superseded by:\n- user is interested in toyota');
    const unknown = await callTool(reader, 'fact_history', {
      dataset: DATASET,
      factId: crypto.randomUUID(),
    });
    expect(codeOf(unknown)).toBe('NOT_FOUND');
  });

  it('list_datasets: the workspace’s datasets', async () => {
    const answer = structured<{ datasets: { name: string }[]; total: number }>(
      await callTool(reader, 'list_datasets'),
    );
    expect(answer.datasets.map((d) => d.name)).toContain(DATASET);
  });
});

describe('writes', () => {
  it('record_episode: RECORDED, and the same call again ALREADY_RECORDED, changing nothing', async () => {
    const call = episode([fact('tea', { replaceExisting: true })]);
    const first = await callTool(agent, 'record_episode', call);
    const recorded = structured<{
      outcome: string;
      factIds: string[];
      facts: Fact[];
      episodeId: string;
    }>(first);
    expect(recorded.outcome).toBe('RECORDED');
    expect(recorded.episodeId).toBe(call.input.episode.episodeId);
    expect(recorded.facts.map((f) => f.object)).toEqual(['tea']);
    expect(textOf(first)).toMatch(/^RECORDED: episode .*, 1 fact\n- user likes tea/);
    const again = structured<{ outcome: string; factIds: string[] }>(
      await callTool(agent, 'record_episode', call),
    );
    expect(again).toMatchObject({ outcome: 'ALREADY_RECORDED', factIds: recorded.factIds });
    expect(
      await t.database.collections.facts.countDocuments({ episodeId: recorded.episodeId }),
    ).toBe(1);
  });

  it('record_episode: a replacing fact supersedes, and says which', async () => {
    const dataset = 'drinks';
    const earlier = structured<{ factIds: string[] }>(
      await callTool(agent, 'record_episode', {
        ...episode([fact('coffee', { replaceExisting: true, validAt: '2026-01-01' })], dataset),
      }),
    );
    const result = await callTool(agent, 'record_episode', {
      ...episode([fact('tea', { replaceExisting: true, validAt: '2026-03-01' })], dataset),
    });
    const later = structured<{ supersededIds: string[]; superseded: Fact[] }>(result);
    expect(later.supersededIds).toEqual(earlier.factIds);
    expect(later.superseded.map((f) => [f.factId, f.object, f.invalidAt !== null])).toEqual([
      [earlier.factIds[0], 'coffee', true],
    ]);
    expect(textOf(result)).toMatch(/\nSuperseded:\n- user likes coffee \(valid from 2026-01-01/);
  });

  it('record_episode with a write-only key (a pipeline’s): the ids it wrote, nothing it may not read', async () => {
    const pipeline = await connect(['write']);
    const result = await callTool(pipeline, 'record_episode', episode([fact('jazz')]));
    const answer = structured<Record<string, unknown>>(result);
    expect(answer).toMatchObject({ outcome: 'RECORDED', factIds: [expect.any(String)] });
    expect(answer).not.toHaveProperty('facts');
    expect(textOf(result)).not.toContain('jazz');
  });

  it('record_episode after the database failed mid-write: WRITE_OUTCOME_UNKNOWN, and the retry COMPLETES it', async () => {
    const call = episode([fact('opera')]);
    const facts = t.database.collections.facts as unknown as {
      insertMany: (...args: unknown[]) => Promise<unknown>;
    };
    const original = facts.insertMany.bind(facts);
    const spy = vi.spyOn(facts, 'insertMany').mockImplementationOnce(async (...args) => {
      await original(...args);
      throw new MongoNetworkError('connection lost');
    });
    const failed = await callTool(agent, 'record_episode', call);
    spy.mockRestore();
    expect(codeOf(failed)).toBe('WRITE_OUTCOME_UNKNOWN');
    expect(textOf(failed)).toMatch(/retry with the same episode id/);
    expect(textOf(failed)).not.toMatch(/at .*\.ts:\d+|MongoNetworkError|connection lost/);
    const retry = structured<{ outcome: string }>(await callTool(agent, 'record_episode', call));
    expect(retry.outcome).toBe('COMPLETED');
  });

  it('delete_fact: deletes once; again, NOT_FOUND', async () => {
    const { factIds } = structured<{ factIds: string[] }>(
      await callTool(agent, 'record_episode', episode([fact('cats')])),
    );
    const args = { dataset: 'agent-notes', factId: factIds[0] };
    const deleted = await callTool(agent, 'delete_fact', args);
    expect(structured(deleted)).toEqual({ factId: factIds[0], deleted: true });
    expect(codeOf(await callTool(agent, 'delete_fact', args))).toBe('NOT_FOUND');
  });

  it('create_memory and update_memory: versions, and CONFLICT on a stale expectedVersion', async () => {
    const created = structured<{ memoryId: string; version: number; memory: { scope: string } }>(
      await callTool(agent, 'create_memory', {
        dataset: 'agent-notes',
        input: { text: 'The user likes short answers.' },
      }),
    );
    expect(created).toMatchObject({ version: 1, memory: { scope: 'user' } });
    const update = (expectedVersion: number, text: string) =>
      callTool(agent, 'update_memory', {
        dataset: 'agent-notes',
        memoryId: created.memoryId,
        expectedVersion,
        patch: { text },
      });
    const updated = structured<{ version: number; memory: { text: string } }>(
      await update(1, 'The user likes very short answers.'),
    );
    expect(updated).toMatchObject({
      version: 2,
      memory: { text: 'The user likes very short answers.' },
    });
    const stale = await update(1, 'overwritten?');
    expect(codeOf(stale)).toBe('CONFLICT');
    const unknown = await callTool(agent, 'update_memory', {
      dataset: 'agent-notes',
      memoryId: crypto.randomUUID(),
      patch: { text: 'x' },
    });
    expect(codeOf(unknown)).toBe('NOT_FOUND');
  });

  it('create_memory and update_memory with a write-only key: id and version, nothing it may not read', async () => {
    const pipeline = await connect(['write']);
    const created = await callTool(pipeline, 'create_memory', {
      dataset: 'agent-notes',
      input: { text: 'The user writes in French.' },
    });
    const answer = structured<{ memoryId: string }>(created);
    expect(answer).toEqual({ memoryId: expect.any(String), version: 1 });
    expect(textOf(created)).not.toContain('French');
    const updated = await callTool(pipeline, 'update_memory', {
      dataset: 'agent-notes',
      memoryId: answer.memoryId,
      expectedVersion: 1,
      patch: { text: 'The user writes in German.' },
    });
    expect(structured(updated)).toEqual({ memoryId: answer.memoryId, version: 2 });
    expect(textOf(updated)).not.toContain('German');
  });

  it('what_changed: resumed from the cursor it answered, every change once', async () => {
    const dataset = 'feed';
    await callTool(agent, 'record_episode', episode([fact('a'), fact('b')], dataset));
    const page = structured<{ changes: { id: string }[]; cursor: string; hasMore: boolean }>(
      await callTool(reader, 'what_changed', { dataset, limit: 2 }),
    );
    expect(page.changes).toHaveLength(2);
    expect(page.hasMore).toBe(true);
    await callTool(agent, 'record_episode', episode([fact('c')], dataset));
    const seen = page.changes.map((c) => c.id);
    let cursor = page.cursor;
    for (let more = true; more; ) {
      const next = structured<{ changes: { id: string }[]; cursor: string; hasMore: boolean }>(
        await callTool(reader, 'what_changed', { dataset, after: cursor, limit: 2 }),
      );
      seen.push(...next.changes.map((c) => c.id));
      cursor = next.cursor;
      more = next.hasMore;
    }
    const whole = structured<{ changes: { id: string; kind: string }[] }>(
      await callTool(reader, 'what_changed', { dataset, limit: 100 }),
    );
    expect(whole.changes.map((c) => c.kind)).toEqual([
      'EPISODE_RECORDED',
      'FACT_RECORDED',
      'FACT_RECORDED',
      'EPISODE_RECORDED',
      'FACT_RECORDED',
    ]);
    expect(seen).toEqual(whole.changes.map((c) => c.id));
    // Caught up: the cursor answers nothing new, and is kept.
    const caughtUp = structured<{ changes: unknown[]; cursor: string }>(
      await callTool(reader, 'what_changed', { dataset, after: cursor }),
    );
    expect(caughtUp).toMatchObject({ changes: [], cursor });
  });
});

describe('refusals an agent can act on', () => {
  it('a tool the key is not offered is FORBIDDEN, naming the scope, and nothing is written', async () => {
    const before = await t.database.collections.episodes.countDocuments({});
    const refused = await callTool(reader, 'record_episode', episode([fact('dogs')]));
    expect(codeOf(refused)).toBe('FORBIDDEN');
    expect(textOf(refused)).toMatch(/write/);
    expect(await t.database.collections.episodes.countDocuments({})).toBe(before);
    const pipeline = await connect(['write']);
    expect(codeOf(await callTool(pipeline, 'recall', { dataset: DATASET, query: 'car' }))).toBe(
      'FORBIDDEN',
    );
  });

  it('another workspace sees none of this one: no such dataset, nothing changed', async () => {
    // globex has its own copy of the demo: the same names, its own ids.
    const acmeFact = structured<{ factIds: string[] }>(
      await callTool(agent, 'record_episode', episode([fact('acme only')], 'acme-secrets')),
    ).factIds[0]!;
    const names = structured<{ datasets: { name: string }[] }>(
      await callTool(other, 'list_datasets'),
    ).datasets.map((d) => d.name);
    expect(names).not.toContain('acme-secrets');
    // Answered as for a name no workspace has: neither acme's dataset nor its names show.
    for (const [name, args] of [
      ['list_facts', { dataset: 'acme-secrets' }],
      ['recall', { dataset: 'acme-secrets', query: 'acme only' }],
      ['what_changed', { dataset: 'acme-secrets' }],
      ['fact_history', { dataset: 'acme-secrets', factId: acmeFact }],
      ['delete_fact', { dataset: 'acme-secrets', factId: acmeFact }],
      ['entity_facts', { dataset: 'acme-secrets', entity: 'user' }],
    ] as const) {
      expect(textOf(await callTool(other, name, args)), name).toBe(
        'NOT_FOUND: No dataset "acme-secrets" in this workspace; list_datasets names its datasets',
      );
    }
    const stillLive = await t.database.collections.facts.findOne({ factId: acmeFact });
    expect(stillLive?.invalidAt).toBeNull();
  });

  it('an unknown dataset is NOT_FOUND, said plainly, with the names it may have meant', async () => {
    const meant = 'NOT_FOUND: No dataset "User_42" in this workspace; did you mean "user_42"?';
    for (const [name, args, client] of [
      ['recall', { query: 'car' }, reader],
      ['list_facts', {}, reader],
      ['entity_facts', { entity: 'honda civic' }, reader],
      ['fact_history', { factId: DEMO.facts.hondaInterest }, reader],
      ['what_changed', {}, reader],
      ['delete_fact', { factId: DEMO.facts.hondaInterest }, agent],
      ['update_memory', { memoryId: crypto.randomUUID(), patch: { text: 'x' } }, agent],
    ] as const) {
      const result = await callTool(client, name, { dataset: 'User_42', ...args });
      expect(result.isError, name).toBe(true);
      expect(textOf(result), name).toBe(meant);
    }
    expect(textOf(await callTool(reader, 'list_facts', { dataset: 'user-42s' }))).toBe(
      'NOT_FOUND: No dataset "user-42s" in this workspace; did you mean "user_42"?',
    );
    for (const team of ['team-a', 'team-b']) {
      await callTool(agent, 'create_memory', { dataset: team, input: { text: 'A team.' } });
    }
    expect(textOf(await callTool(reader, 'what_changed', { dataset: 'team-c' }))).toBe(
      'NOT_FOUND: No dataset "team-c" in this workspace; did you mean "team-a" or "team-b"?',
    );
    // Nothing was created by asking, and the demo's facts are still believed.
    const names = structured<{ datasets: { name: string }[] }>(
      await callTool(reader, 'list_datasets'),
    ).datasets.map((d) => d.name);
    expect(names).not.toContain('User_42');
    expect(
      codeOf(
        await callTool(reader, 'fact_history', {
          dataset: DATASET,
          factId: DEMO.facts.hondaInterest,
        }),
      ),
    ).toBeNull();
    // A workspace with no dataset yet says so.
    const empty = await connect(['read'], 'initech');
    expect(textOf(await callTool(empty, 'recall', { dataset: 'user_42', query: 'car' }))).toBe(
      'NOT_FOUND: No dataset "user_42" in this workspace: it has none yet (record_episode or create_memory creates one)',
    );
  });

  it('what is not found is worded the same by every tool: what, which, in which dataset', async () => {
    const unknown = crypto.randomUUID();
    expect(
      textOf(await callTool(reader, 'fact_history', { dataset: DATASET, factId: unknown })),
    ).toBe(`NOT_FOUND: No fact ${unknown} in dataset "user_42"`);
    // delete_fact needs the fact believed now: not an unknown one, nor one deleted already.
    const { factIds } = structured<{ factIds: string[] }>(
      await callTool(agent, 'record_episode', episode([fact('hats')])),
    );
    const dataset = 'agent-notes';
    await callTool(agent, 'delete_fact', { dataset, factId: factIds[0] });
    for (const factId of [unknown, factIds[0]]) {
      expect(textOf(await callTool(agent, 'delete_fact', { dataset, factId }))).toBe(
        `NOT_FOUND: No fact ${factId} believed now in dataset "agent-notes"`,
      );
    }
    expect(
      textOf(
        await callTool(agent, 'update_memory', {
          dataset: DATASET,
          memoryId: unknown,
          patch: { text: 'x' },
        }),
      ),
    ).toBe(`NOT_FOUND: No memory ${unknown} in dataset "user_42"`);
    // A write-only key may not read the workspace's datasets: it is told what its tool could not find.
    const pipeline = await connect(['write']);
    expect(
      textOf(await callTool(pipeline, 'delete_fact', { dataset: 'User_42', factId: unknown })),
    ).toBe(`NOT_FOUND: No fact ${unknown} believed now in dataset "User_42"`);
  });

  it('bad arguments name the field, and nothing is written', async () => {
    const cases: [string, Record<string, unknown>, RegExp][] = [
      [
        'list_facts',
        { dataset: DATASET, limit: 0 },
        /^BAD_USER_INPUT: limit: must be between 1 and 100$/,
      ],
      ['recall', { dataset: DATASET }, /^BAD_USER_INPUT: query: /],
      [
        'recall',
        { dataset: DATASET, query: 'x', validAt: 'yesterday' },
        /validAt: must be an ISO 8601 date/,
      ],
      [
        'fact_history',
        { dataset: DATASET, factId: 'f1' },
        /^BAD_USER_INPUT: factId: must be a UUID$/,
      ],
      ['list_facts', { dataset: '' }, /^BAD_USER_INPUT: dataset: must not be empty$/],
      [
        'record_episode',
        episode([fact('x', { confidence: 2 })]),
        /^BAD_USER_INPUT: .*input\.facts\.0\.confidence: must be between 0 and 1/,
      ],
      [
        'record_episode',
        { dataset: 'agent-notes', input: { facts: [] } },
        /^BAD_USER_INPUT: input\.episode: /,
      ],
    ];
    const before = await t.database.collections.facts.countDocuments({});
    for (const [name, args, message] of cases) {
      const result = await callTool(agent, name, args);
      expect(textOf(result), name).toMatch(message);
    }
    expect(await t.database.collections.facts.countDocuments({})).toBe(before);
  });

  it('an unknown tool is a protocol error (JSON-RPC invalid params), not a tool result', async () => {
    const error = await callTool(agent, 'forget_everything').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpError);
    expect((error as McpError).code).toBe(ErrorCode.InvalidParams);
    // The SDK's client prefixes the code to the message it reads: once, not twice.
    expect((error as McpError).message).toBe('MCP error -32602: Unknown tool: forget_everything');
  });

  it('a failure the gateway does not expect is masked: a code and a generic message, never a stack', async () => {
    const facts = t.database.collections.facts as unknown as {
      find: (...args: unknown[]) => unknown;
    };
    const spy = vi.spyOn(facts, 'find').mockImplementation(() => {
      throw new Error('secret internals at store.ts:12');
    });
    const result = await callTool(reader, 'list_facts', { dataset: DATASET });
    spy.mockRestore();
    expect(textOf(result)).toBe('INTERNAL_SERVER_ERROR: Internal server error');
  });
});
