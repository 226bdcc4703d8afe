/**
 * Reading what the selection asks for (src/schema/selectedReads.ts): every field of a type
 * read by selection declares what it reads (the walk), a selection reads what its fields
 * declare and nothing else, and the store's reads carry that projection on GraphQL, the
 * REST routes and the MCP tools alike. test/graphql/selectedReads.property.test.ts
 * compares answers read this way with answers read whole.
 */

import {
  GraphQLObjectType,
  GraphQLSchema,
  GraphQLString,
  getNamedType,
  type OperationDefinitionNode,
  parse,
} from 'graphql';
import type { CommandStartedEvent } from 'mongodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { schema } from '../../src/schema/index.js';
import {
  documentFields,
  readDeclarations,
  readsOfSelection,
} from '../../src/schema/selectedReads.js';
import { concreteTypes } from '../../src/schema/selectionWalk.js';
import { openTestGateway, type TestGateway } from '../helpers/gateway.js';
import { callTool, mcpClient } from '../helpers/mcp.js';
import { MEMORY_SODA_FACT_FIELDS } from '../helpers/memorySoda.js';

/** What the field at the top of `query`'s first selection reads of `typeName` documents. */
function readsOf(query: string, typeName: string, on: GraphQLSchema = schema) {
  const document = parse(query);
  const operation = document.definitions.find(
    (d): d is OperationDefinitionNode => d.kind === 'OperationDefinition',
  )!;
  const fragments = Object.fromEntries(
    document.definitions.flatMap((d) =>
      d.kind === 'FragmentDefinition' ? [[d.name.value, d]] : [],
    ),
  );
  // The first root field's first field: `dataset(...) { <this> }`, or the root field itself.
  const root = operation.selectionSet.selections[0]!;
  if (root.kind !== 'Field') throw new Error('a field first');
  const rootField = on.getQueryType()!.getFields()[root.name.value]!;
  const [node, parent] =
    root.selectionSet && getNamedType(rootField.type).name === 'Dataset'
      ? [root.selectionSet.selections[0]!, getNamedType(rootField.type) as GraphQLObjectType]
      : [root, on.getQueryType()!];
  if (node.kind !== 'Field') throw new Error('a field');
  const field = parent.getFields()[node.name.value]!;
  const reads = readsOfSelection(
    { schema: on, fragments },
    [node],
    concreteTypes(on, getNamedType(field.type)),
    on.getType(typeName) as GraphQLObjectType,
  );
  return reads === null ? null : reads.fields;
}

describe('the declarations', () => {
  it('every field of a type read by selection declares what it reads', () => {
    const found = readDeclarations(schema);
    expect(found.types.sort()).toEqual(['Entity', 'Episode', 'Fact']);
    expect(found.undeclared).toEqual([]);
    const fields = found.types.reduce(
      (n, name) => n + Object.keys((schema.getType(name) as GraphQLObjectType).getFields()).length,
      0,
    );
    // The walk saw every field of those types, and there are as many as the schema says.
    expect(found.declared).toBe(fields);
    expect(fields).toBeGreaterThanOrEqual(38);
  });

  it('the walk names a field that declares nothing, and its selection reads the whole document', () => {
    interface Note {
      noteId: string;
      text: string;
      summary: string;
    }
    const note = documentFields<Note>();
    const Note = new GraphQLObjectType({
      name: 'Note',
      ...note.always('noteId'),
      fields: {
        text: { type: GraphQLString, ...note.reads('text') },
        summary: { type: GraphQLString },
      },
    });
    const withGap = new GraphQLSchema({
      query: new GraphQLObjectType({ name: 'Query', fields: { note: { type: Note } } }),
    });
    expect(readDeclarations(withGap)).toEqual({
      types: ['Note'],
      declared: 1,
      undeclared: ['Note.summary'],
    });
    expect(readsOf('{ note { text } }', 'Note', withGap)).toEqual(['noteId', 'text']);
    expect(readsOf('{ note { text summary } }', 'Note', withGap)).toBeNull();
  });
});

describe('what a selection reads', () => {
  it('the fields selected, what each declares, and what the type always carries', () => {
    expect(
      readsOf('{ dataset(name: "d") { fact(factId: "x") { subject state } } }', 'Fact'),
    ).toEqual(['dataset', 'factId', 'invalidAt', 'subject', 'validAt', 'validUntil']);
  });

  it('through connections, edges and fragments; not below a nested document', () => {
    const query = `{ dataset(name: "d") { facts { totalCount pageInfo { endCursor }
      edges { cursor node { ...F ... on Fact { object } subjectEntity { name type }
        history { sourceQuote confidence } } } } } }
      fragment F on Fact { predicate }`;
    // subjectEntity reads the fact's dataset and subject; history its tenant, subject and
    // predicate; what they select of the entity and of the other facts is theirs to read.
    expect(readsOf(query, 'Fact')).toEqual([
      'dataset',
      'factId',
      'object',
      'predicate',
      'subject',
      'workspaceId',
    ]);
  });

  it('a field under @skip or @include counts, whatever the variables say', () => {
    const query = `query($x: Boolean!) { dataset(name: "d") {
      fact(factId: "x") { subject @include(if: $x) object @skip(if: $x) } } }`;
    expect(readsOf(query, 'Fact')).toEqual(['dataset', 'factId', 'object', 'subject']);
  });

  it('an entity is read whole but for its storage fields, so one read of it answers every selection', () => {
    expect(readsOf('{ dataset(name: "d") { entity(name: "x") { name } } }', 'Entity')).toEqual([
      'dataset',
      'entityId',
      'name',
      'type',
      'updatedAt',
    ]);
  });
});

describe('the store reads what the operation selects', () => {
  let t: TestGateway;
  const commands: CommandStartedEvent[] = [];
  const projections = (comment: string) =>
    commands.filter((c) => c.command.comment === comment).map((c) => c.command.projection);

  beforeAll(async () => {
    t = await openTestGateway({ clientOptions: { monitorCommands: true } });
    t.database.client.on('commandStarted', (event) => commands.push(event));
  });

  const only = (...fields: string[]) => ({
    _id: 0,
    ...Object.fromEntries(fields.map((f) => [f, 1])),
  });

  it('GraphQL: the nested question reads of each fact what it selects, in one query', async () => {
    const key = await t.key('acme', ['read']);
    commands.length = 0;
    const { body } = await t.graphqlText(
      `{ dataset(name: "user_42") { entities(first: 50) { edges { node { name
        facts { predicate subjectEntity { name } } } } } } }`,
      {},
      key,
    );
    expect(body.errors).toBeUndefined();
    expect(projections('store:factsOfEntities')).toEqual([
      // Selected: predicate, and the subject for its entity; the store's own: its order
      // and the keys that sort facts to their entities.
      only('dataset', 'factId', 'predicate', 'subject', 'validAt', 'subjectKey', 'objectKey'),
    ]);
  });

  it("GraphQL: a list of episodes reads no episode's content unless it is selected", async () => {
    const key = await t.key('acme', ['read']);
    const list = async (fields: string) => {
      commands.length = 0;
      const { body } = await t.graphqlText(
        `{ dataset(name: "user_42") { episodes(first: 5) { edges { node { ${fields} } } } } }`,
        {},
        key,
      );
      expect(body.errors).toBeUndefined();
      return projections('store:listEpisodes');
    };
    expect(await list('source occurredAt')).toEqual([
      only('dataset', 'episodeId', 'occurredAt', 'source'),
    ]);
    expect(await list('content')).toEqual([only('content', 'dataset', 'episodeId', 'occurredAt')]);
  });

  it("REST: Memory Soda's fact list reads the fields of its answer", async () => {
    const key = await t.key('acme', ['read']);
    commands.length = 0;
    const response = await t.request('/v1/memory/semantic/datasets/user_42/facts', { key });
    expect(response.status).toBe(200);
    const [projection] = projections('store:listFacts');
    expect(Object.keys(projection).sort()).toEqual(
      ['_id', 'dataset', ...MEMORY_SODA_FACT_FIELDS].sort(),
    );
  });

  it("MCP: list_facts reads the fields of the tool's answer", async () => {
    const client = await mcpClient('http://gateway.test', await t.key('acme', ['read']), (r) =>
      t.gateway.fetch(r),
    );
    try {
      commands.length = 0;
      const result = await callTool(client, 'list_facts', { dataset: 'user_42' });
      expect(result.isError).toBeFalsy();
      const [projection] = projections('store:listFacts');
      expect(projection).toBeDefined();
      // The fact's fields the tool answers with; none of what only filters and writes use.
      expect(projection).toMatchObject({ subject: 1, recordedAt: 1, invalidReason: 1 });
      for (const field of ['subjectKey', 'objectKey', 'objectIsEntity', 'supersededBy']) {
        expect(projection).not.toHaveProperty(field);
      }
    } finally {
      await client.close();
    }
  });
});
