import { randomUUID } from 'node:crypto';
import {
  type GraphQLArgument,
  getNamedType,
  isObjectType,
  NoDeprecatedCustomRule,
  parse,
  validate,
} from 'graphql';
import { beforeAll, describe, expect, it } from 'vitest';
import { TRUSTED_DOCUMENTS } from '../../src/generated/trustedDocuments.js';
import { createGateway } from '../../src/http/app.js';
import { schema } from '../../src/schema/index.js';
import {
  ArgNamesDeleteFactDocument,
  ArgNamesDeleteFactEitherDocument,
  ArgNamesDeleteFactOldNameDocument,
  ArgNamesEraseEpisodeDocument,
  ArgNamesEraseEpisodeEitherDocument,
  ArgNamesEraseEpisodeOldNameDocument,
  ArgNamesFactStateDocument,
  ArgNamesRestoreFactDocument,
  ArgNamesRestoreFactEitherDocument,
  ArgNamesRestoreFactOldNameDocument,
  RecordEpisodeIdsDocument,
} from '../generated/operations.js';
import { type GraphqlError, openTestGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * One argument name per thing: a field names a fact, an episode or a memory by
 * `factId`, `episodeId` or `memoryId`, the names its payloads, inputs and REST use. The
 * old `id` of deleteFact, restoreFact and eraseEpisode keeps working for one release,
 * deprecated with a reason; exactly one of the two must be given (BAD_USER_INPUT, naming
 * the argument, otherwise), and both spellings are checked alike.
 */

const DATASET = 'argument_names';
const NOT_A_UUID = 'not-a-uuid';

let t: TestGateway;
let admin: string;
let writer: string;
let reader: string;

beforeAll(async () => {
  t = await openTestGateway({ demoWorkspaces: [] });
  admin = await t.key('acme', ['read', 'write', 'admin']);
  writer = await t.key('acme', ['read', 'write']);
  reader = await t.key('acme', ['read']);
});

type Result<T> = {
  status: number;
  body: { data?: T | null; errors?: GraphqlError[]; extensions?: unknown };
};

/** The data of an answer with no error, and nothing in it about deprecation or breakage. */
function data<T>(result: Result<T>): T {
  expect(result.body.errors).toBeUndefined();
  expect(result.status).toBe(200);
  expect(JSON.stringify(result.body)).not.toMatch(/deprecat|warning/i);
  return result.body.data!;
}

/** The one error of a refused answer: BAD_USER_INPUT (or `code`), nothing answered. */
function refused<T>(result: Result<T>, code = 'BAD_USER_INPUT'): GraphqlError {
  expect(result.body.errors).toHaveLength(1);
  const error = result.body.errors![0]!;
  expect(error.extensions?.code).toBe(code);
  expect(result.body.data ?? null).toBeNull();
  return error;
}

/** A fresh episode with one fact in it. */
async function recorded(): Promise<{ episodeId: string; factId: string }> {
  const subject = `subject ${randomUUID()}`;
  const { recordEpisode } = data(
    await t.graphql(
      RecordEpisodeIdsDocument,
      {
        dataset: DATASET,
        input: {
          episode: {
            content: `user: ${subject} likes tea`,
            occurredAt: '2026-11-01T00:00:00Z',
            source: 'chat',
          },
          facts: [{ subject, predicate: 'likes', object: 'tea', confidence: 0.9 }],
        },
      },
      writer,
    ),
  );
  return { episodeId: recordEpisode.episode.episodeId, factId: recordEpisode.facts[0]!.factId };
}

async function invalidReasonOf(factId: string) {
  const answer = data(
    await t.graphql(ArgNamesFactStateDocument, { dataset: DATASET, factId }, reader),
  );
  return answer.dataset?.fact?.invalidReason;
}

async function factExists(factId: string) {
  const answer = data(
    await t.graphql(ArgNamesFactStateDocument, { dataset: DATASET, factId }, reader),
  );
  return answer.dataset?.fact != null;
}

/** The names a field may use for a fact, an episode or a memory. */
const CANONICAL = new Set(['factId', 'episodeId', 'memoryId']);

/**
 * Field arguments that take an ID of something else: reviewed one by one, so a new
 * argument naming a fact, an episode or a memory as `id` cannot slip in unnoticed.
 */
const NOT_A_FACT_EPISODE_OR_MEMORY: Record<string, string> = {
  'Query.node(id)':
    "a Relay global ID of any node (a Fact's, an Episode's...: Node.id, not a factId)",
  'Mutation.revokeApiKey(keyId)': 'an API key',
};

/** An argument that takes an identifier: of type ID (or a list of IDs), or named like one. */
const isIdArgument = (arg: GraphQLArgument) =>
  getNamedType(arg.type).name === 'ID' || /(?:^id|Id|ID|_id)$/.test(arg.name);

describe('field arguments naming a fact, an episode or a memory, on every type', () => {
  const types = Object.values(schema.getTypeMap()).filter((type) => !type.name.startsWith('__'));

  it('are factId, episodeId or memoryId, or deprecated with a reason naming the new one', () => {
    const found: string[] = [];
    const problems: string[] = [];
    for (const type of types) {
      if (!isObjectType(type)) continue;
      for (const field of Object.values(type.getFields())) {
        for (const arg of field.args.filter(isIdArgument)) {
          const at = `${type.name}.${field.name}(${arg.name})`;
          found.push(at);
          if (CANONICAL.has(arg.name)) {
            if (arg.deprecationReason) problems.push(`${at}: the new name is deprecated`);
            continue;
          }
          if (arg.deprecationReason !== undefined && arg.deprecationReason !== null) {
            const replacement = field.args.find(
              (other) => CANONICAL.has(other.name) && arg.deprecationReason!.includes(other.name),
            );
            if (!arg.deprecationReason.trim()) problems.push(`${at}: deprecated without a reason`);
            else if (!replacement)
              problems.push(
                `${at}: its deprecation names no factId/episodeId/memoryId of the field`,
              );
            continue;
          }
          if (!(at in NOT_A_FACT_EPISODE_OR_MEMORY))
            problems.push(`${at}: not one of ${[...CANONICAL]}`);
        }
      }
    }
    // A walk that finds nothing proves nothing (a renamed root type, a broken filter).
    expect(found.length).toBeGreaterThan(0);
    expect(found).toEqual(
      expect.arrayContaining([
        'Mutation.deleteFact(factId)',
        'Mutation.restoreFact(factId)',
        'Mutation.eraseEpisode(episodeId)',
        'Mutation.updateMemory(memoryId)',
        'Dataset.fact(factId)',
        'Dataset.episode(episodeId)',
      ]),
    );
    expect(problems).toEqual([]);
    // The exceptions are still there to be exceptions (a stale one would hide nothing).
    for (const at of Object.keys(NOT_A_FACT_EPISODE_OR_MEMORY)) expect(found).toContain(at);
  });

  it.each([
    ['deleteFact', 'factId'],
    ['restoreFact', 'factId'],
    ['eraseEpisode', 'episodeId'],
  ])('%s takes %s, and `id` deprecated, both optional in the schema', (name, newName) => {
    const field = schema.getMutationType()!.getFields()[name]!;
    const args = Object.fromEntries(field.args.map((a) => [a.name, a]));
    expect(Object.keys(args).sort()).toEqual(['dataset', 'id', newName].sort());
    expect(String(args[newName]!.type)).toBe('ID');
    expect(args[newName]!.deprecationReason).toBeUndefined();
    expect(String(args.id!.type)).toBe('ID');
    expect(args.id!.deprecationReason).toContain(`Use \`${newName}\``);
    // The field's own contract is unchanged: its scope, its cost and its answer.
    expect(String(args.dataset!.type)).toBe('String!');
  });
});

describe('deleteFact', () => {
  it('deletes by factId', async () => {
    const { factId } = await recorded();
    const answer = data(
      await t.graphql(ArgNamesDeleteFactDocument, { dataset: DATASET, factId }, writer),
    );
    expect(answer.deleteFact).toEqual({
      factId,
      deleted: true,
      fact: { factId, invalidReason: 'DELETED' },
    });
    expect(await invalidReasonOf(factId)).toBe('DELETED');
  });

  it('still deletes by its deprecated name id, answering the same', async () => {
    const { factId } = await recorded();
    const answer = data(
      await t.graphql(ArgNamesDeleteFactOldNameDocument, { dataset: DATASET, id: factId }, writer),
    );
    expect(answer.deleteFact).toEqual({
      factId,
      deleted: true,
      fact: { factId, invalidReason: 'DELETED' },
    });
    expect(await invalidReasonOf(factId)).toBe('DELETED');
  });

  it('refuses neither name, naming factId', async () => {
    const error = refused(
      await t.graphql(ArgNamesDeleteFactEitherDocument, { dataset: DATASET }, writer),
    );
    expect(error.message).toMatch(/^factId: is required/);
    expect(error.message).toContain('id, its deprecated name');
    expect(error.extensions?.issues).toEqual([{ path: ['factId'], message: expect.any(String) }]);
  });

  it('refuses both names (even the same id twice) and deletes nothing', async () => {
    const { factId } = await recorded();
    const other = await recorded();
    for (const id of [factId, other.factId]) {
      const error = refused(
        await t.graphql(ArgNamesDeleteFactEitherDocument, { dataset: DATASET, factId, id }, writer),
      );
      expect(error.message).toBe('factId: give factId or its deprecated name id, not both');
      expect(error.extensions?.issues).toEqual([{ path: ['factId'], message: expect.any(String) }]);
    }
    expect(await invalidReasonOf(factId)).toBeNull();
    expect(await invalidReasonOf(other.factId)).toBeNull();
  });

  it('checks either name for a UUID alike', async () => {
    const byNew = refused(
      await t.graphql(
        ArgNamesDeleteFactEitherDocument,
        { dataset: DATASET, factId: NOT_A_UUID },
        writer,
      ),
    );
    expect(byNew.message).toBe('factId: must be a UUID');
    const byOld = refused(
      await t.graphql(
        ArgNamesDeleteFactEitherDocument,
        { dataset: DATASET, id: NOT_A_UUID },
        writer,
      ),
    );
    expect(byOld.message).toBe('id: must be a UUID');
  });

  it('still needs the write scope under either name', async () => {
    const { factId } = await recorded();
    refused(
      await t.graphql(ArgNamesDeleteFactDocument, { dataset: DATASET, factId }, reader),
      'FORBIDDEN',
    );
    refused(
      await t.graphql(ArgNamesDeleteFactOldNameDocument, { dataset: DATASET, id: factId }, reader),
      'FORBIDDEN',
    );
    expect(await invalidReasonOf(factId)).toBeNull();
  });
});

describe('restoreFact', () => {
  async function deleted() {
    const { factId } = await recorded();
    data(await t.graphql(ArgNamesDeleteFactDocument, { dataset: DATASET, factId }, writer));
    return factId;
  }

  it('restores by factId', async () => {
    const factId = await deleted();
    const answer = data(
      await t.graphql(ArgNamesRestoreFactDocument, { dataset: DATASET, factId }, admin),
    );
    // The fact believed again as a version of its own (its deleted time stays in history).
    expect(answer.restoreFact).toEqual({ factId: expect.any(String), invalidReason: null });
    expect(answer.restoreFact.factId).not.toBe(factId);
    expect(await invalidReasonOf(answer.restoreFact.factId)).toBeNull();
  });

  it('still restores by its deprecated name id, answering the same', async () => {
    const factId = await deleted();
    const answer = data(
      await t.graphql(ArgNamesRestoreFactOldNameDocument, { dataset: DATASET, id: factId }, admin),
    );
    // The fact believed again as a version of its own (its deleted time stays in history).
    expect(answer.restoreFact).toEqual({ factId: expect.any(String), invalidReason: null });
    expect(answer.restoreFact.factId).not.toBe(factId);
    expect(await invalidReasonOf(answer.restoreFact.factId)).toBeNull();
  });

  it('refuses neither name, naming factId', async () => {
    const error = refused(
      await t.graphql(ArgNamesRestoreFactEitherDocument, { dataset: DATASET }, admin),
    );
    expect(error.message).toMatch(/^factId: is required/);
    expect(error.extensions?.issues).toEqual([{ path: ['factId'], message: expect.any(String) }]);
  });

  it('refuses both names and restores nothing', async () => {
    const factId = await deleted();
    const error = refused(
      await t.graphql(
        ArgNamesRestoreFactEitherDocument,
        { dataset: DATASET, factId, id: factId },
        admin,
      ),
    );
    expect(error.message).toBe('factId: give factId or its deprecated name id, not both');
    expect(await invalidReasonOf(factId)).toBe('DELETED');
  });

  it('checks either name for a UUID alike, and still needs the admin scope', async () => {
    expect(
      refused(
        await t.graphql(
          ArgNamesRestoreFactEitherDocument,
          { dataset: DATASET, factId: NOT_A_UUID },
          admin,
        ),
      ).message,
    ).toBe('factId: must be a UUID');
    expect(
      refused(
        await t.graphql(
          ArgNamesRestoreFactEitherDocument,
          { dataset: DATASET, id: NOT_A_UUID },
          admin,
        ),
      ).message,
    ).toBe('id: must be a UUID');
    const factId = await deleted();
    refused(
      await t.graphql(ArgNamesRestoreFactDocument, { dataset: DATASET, factId }, writer),
      'FORBIDDEN',
    );
    expect(await invalidReasonOf(factId)).toBe('DELETED');
  });
});

describe('eraseEpisode', () => {
  it('erases by episodeId', async () => {
    const { episodeId, factId } = await recorded();
    const answer = data(
      await t.graphql(ArgNamesEraseEpisodeDocument, { dataset: DATASET, episodeId }, admin),
    );
    expect(answer.eraseEpisode).toEqual({ episodes: 1, facts: 1 });
    expect(await factExists(factId)).toBe(false);
  });

  it('still erases by its deprecated name id, answering the same', async () => {
    const { episodeId, factId } = await recorded();
    const answer = data(
      await t.graphql(
        ArgNamesEraseEpisodeOldNameDocument,
        { dataset: DATASET, id: episodeId },
        admin,
      ),
    );
    expect(answer.eraseEpisode).toEqual({ episodes: 1, facts: 1 });
    expect(await factExists(factId)).toBe(false);
  });

  it('refuses neither name, naming episodeId', async () => {
    const error = refused(
      await t.graphql(ArgNamesEraseEpisodeEitherDocument, { dataset: DATASET }, admin),
    );
    expect(error.message).toMatch(/^episodeId: is required/);
    expect(error.extensions?.issues).toEqual([
      { path: ['episodeId'], message: expect.any(String) },
    ]);
  });

  it('refuses both names and erases nothing', async () => {
    const { episodeId, factId } = await recorded();
    const error = refused(
      await t.graphql(
        ArgNamesEraseEpisodeEitherDocument,
        { dataset: DATASET, episodeId, id: episodeId },
        admin,
      ),
    );
    expect(error.message).toBe('episodeId: give episodeId or its deprecated name id, not both');
    expect(await factExists(factId)).toBe(true);
  });

  it('checks either name for a UUID alike, and still needs the admin scope', async () => {
    expect(
      refused(
        await t.graphql(
          ArgNamesEraseEpisodeEitherDocument,
          { dataset: DATASET, episodeId: NOT_A_UUID },
          admin,
        ),
      ).message,
    ).toBe('episodeId: must be a UUID');
    expect(
      refused(
        await t.graphql(
          ArgNamesEraseEpisodeEitherDocument,
          { dataset: DATASET, id: NOT_A_UUID },
          admin,
        ),
      ).message,
    ).toBe('id: must be a UUID');
    const { episodeId, factId } = await recorded();
    refused(
      await t.graphql(ArgNamesEraseEpisodeDocument, { dataset: DATASET, episodeId }, writer),
      'FORBIDDEN',
    );
    expect(await factExists(factId)).toBe(true);
  });
});

describe('registered documents', () => {
  const registered = Object.entries(TRUSTED_DOCUMENTS).map(([hash, text]) => {
    const document = parse(text);
    const names = document.definitions.flatMap((d) =>
      d.kind === 'OperationDefinition' && d.name ? [d.name.value] : [],
    );
    return { hash, text, document, name: names[0] ?? '' };
  });

  it('all still validate, and the explorer and MCP use no deprecated argument', () => {
    expect(registered.length).toBeGreaterThan(0);
    for (const { name, document } of registered) {
      expect(validate(schema, document), name).toEqual([]);
      if (/^(Mcp|Explorer)/.test(name)) {
        expect(validate(schema, document, [NoDeprecatedCustomRule]), name).toEqual([]);
      }
    }
  });

  it("MCP's deleteFact runs by hash, under the new name", async () => {
    const mcpDelete = registered.find((d) => d.name === 'McpDeleteFact');
    expect(mcpDelete?.text).toContain('factId: $factId');
    const { factId } = await recorded();
    const gateway = createGateway({
      database: t.database,
      trustedDocuments: 'only',
      keyUseFlushMs: 0,
    });
    const response = await gateway.fetch(
      new Request('http://gateway.test/graphql', {
        method: 'POST',
        headers: {
          authorization: `Bearer ${writer}`,
          'content-type': 'application/json',
          accept: 'application/json',
        },
        body: JSON.stringify({
          documentId: `sha256:${mcpDelete!.hash}`,
          variables: { dataset: DATASET, factId },
        }),
      }),
    );
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ data: { deleteFact: { factId, deleted: true } } });
    expect(await invalidReasonOf(factId)).toBe('DELETED');
  });
});
