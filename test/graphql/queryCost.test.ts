import { readFileSync } from 'node:fs';
import SchemaBuilder from '@pothos/core';
import ComplexityPlugin from '@pothos/plugin-complexity';
import {
  type DefinitionNode,
  type DocumentNode,
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLObjectType,
  type GraphQLSchema,
  getNamedType,
  getOperationAST,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isObjectType,
  Kind,
  parse,
  print,
} from 'graphql';
import type { CommandStartedEvent } from 'mongodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { measureOperation, QUERY_LIMITS } from '../../src/http/queryLimits.js';
import { DEFAULT_QUERY } from '../../src/http/yoga.js';
import { MCP_TOOLS } from '../../src/mcp/tools.js';
import { defaultFieldCost, QUERY_COST, WHOLE_LIST_CAP } from '../../src/schema/cost.js';
import { schema } from '../../src/schema/index.js';
import { DEMO } from '../helpers/demo.js';
import { everyDoc } from '../helpers/docs.js';
import { openTestGateway, type TestGateway } from '../helpers/gateway.js';

// ---------------------------------------------------------------------------------------
// The schema walk: every list of objects declares its bound where it is defined.
// ---------------------------------------------------------------------------------------

type Complexity = number | { field?: number; multiplier?: number };
type ComplexityOption = Complexity | ((args: Record<string, unknown>) => Complexity);

const objectList = (field: GraphQLField<unknown, unknown>) => {
  const type = isNonNullType(field.type) ? field.type.ofType : field.type;
  return (
    (isListType(type) || getNamedType(field.type).name.endsWith('Connection')) &&
    isObjectType(getNamedType(field.type))
  );
};

const multiplierOf = (option: ComplexityOption, args: Record<string, unknown>) => {
  const value = typeof option === 'function' ? option(args) : option;
  return typeof value === 'number' ? undefined : value.multiplier;
};

/** What is wrong with the cost rules of a schema: one line per field. */
function costRuleProblems(s: GraphQLSchema): { problems: string[]; checked: number } {
  const problems: string[] = [];
  let checked = 0;
  for (const type of Object.values(s.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue;
    for (const field of Object.values(type.getFields())) {
      const option = field.extensions?.complexity as ComplexityOption | undefined;
      const name = `${type.name}.${field.name}`;
      if (option === undefined) {
        problems.push(`${name}: no cost`);
        continue;
      }
      if (!objectList(field) || name.endsWith('Connection.edges')) continue;
      checked++;
      if (option === defaultFieldCost) {
        problems.push(`${name}: a list without a declared bound`);
        continue;
      }
      const first = field.args.find((a) => a.name === 'first');
      if (first) {
        const fallback = multiplierOf(option, {});
        if (fallback !== first.defaultValue)
          problems.push(
            `${name}: costed as ${fallback} without first, defaults to ${first.defaultValue}`,
          );
        if (multiplierOf(option, { first: 7 }) !== 7)
          problems.push(`${name}: first: 7 is not costed as 7`);
        const huge = multiplierOf(option, { first: 10 ** 9 }) ?? Number.POSITIVE_INFINITY;
        if (huge > WHOLE_LIST_CAP) problems.push(`${name}: first is not clamped (${huge})`);
      } else {
        const bound = multiplierOf(option, {}) ?? Number.POSITIVE_INFINITY;
        if (!(bound >= 1 && bound <= WHOLE_LIST_CAP))
          problems.push(`${name}: unbounded list (multiplier ${bound})`);
      }
    }
  }
  return { problems, checked };
}

/**
 * Anything at all: every property and call gives another, as a number it is 0, and it is
 * not a promise. Handed to a resolver as its parent and arguments, it lets the resolver go
 * as far as it would with real ones.
 */
function anything(): unknown {
  const target = () => {};
  const proxy: unknown = new Proxy(target, {
    get: (_t, property) => {
      if (property === 'then') return undefined;
      if (property === Symbol.toPrimitive) return () => 0;
      if (property === Symbol.iterator) return function* () {};
      return proxy;
    },
    apply: () => proxy,
  });
  return proxy;
}

/** Arguments a field takes as a client would send them: defaults, else plain valid values. */
function sampleArgs(field: GraphQLField<unknown, unknown>): Record<string, unknown> {
  const sample = (type: GraphQLInputType): unknown => {
    if (isNonNullType(type)) return sample(type.ofType);
    if (isListType(type)) return [];
    if (isEnumType(type)) return type.getValues()[0]!.value;
    if (isInputObjectType(type)) {
      return Object.fromEntries(
        Object.values(type.getFields())
          .filter((f) => isNonNullType(f.type))
          .map((f) => [f.name, f.defaultValue ?? sample(f.type)]),
      );
    }
    switch (type.name) {
      case 'ID':
        return '00000000-0000-4000-8000-000000000001';
      case 'Int':
        return 1;
      case 'Float':
        return 0.5;
      case 'Boolean':
        return false;
      case 'DateTime':
        return new Date('2026-01-01T00:00:00Z');
      default:
        return 'x';
    }
  };
  // Optional arguments left out, as most clients leave them.
  return Object.fromEntries(
    field.args
      .filter((a) => a.defaultValue !== undefined || isNonNullType(a.type))
      .map((a) => [a.name, a.defaultValue ?? sample(a.type)]),
  );
}

/**
 * The fields whose resolvers read the store or a loader: every resolver of the schema is
 * called with a context that records whether `store` or `loaders` is read (parent and
 * arguments stand-ins from `anything`); what a resolver throws after that does not matter.
 */
async function ioFields(s: GraphQLSchema): Promise<Map<string, 'store' | 'loader'>> {
  const io = new Map<string, 'store' | 'loader'>();
  for (const type of Object.values(s.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue;
    for (const field of Object.values(type.getFields())) {
      if (!field.resolve) continue;
      const coordinate = `${type.name}.${field.name}`;
      const ctx = new Proxy(
        { now: new Date(), auth: { workspaceId: 'w', workspace: 'w', keyId: 'k', scopes: [] } },
        {
          get: (target, property) => {
            if (property === 'store') {
              io.set(coordinate, 'store');
              return anything();
            }
            if (property === 'loaders') {
              if (!io.has(coordinate)) io.set(coordinate, 'loader');
              return anything();
            }
            return property in target ? Reflect.get(target, property) : anything();
          },
        },
      );
      try {
        const result: unknown = await field.resolve(
          anything(),
          sampleArgs(field),
          ctx,
          anything() as never,
        );
        // Reads deferred into what it answers (recall's `facts()`) are still its own.
        if (result && typeof result === 'object') {
          for (const value of Object.values(result)) {
            if (typeof value === 'function') await Promise.resolve(value()).catch(() => {});
          }
        }
      } catch {
        // The stand-ins are not real data; only what the resolver read first counts.
      }
    }
  }
  return io;
}

/** What is wrong with the cost of the fields that do I/O: one line per field. */
async function ioCostProblems(s: GraphQLSchema): Promise<{ problems: string[]; io: number }> {
  const problems: string[] = [];
  const io = await ioFields(s);
  for (const [coordinate, kind] of io) {
    const [typeName, fieldName] = coordinate.split('.') as [string, string];
    const field = (s.getType(typeName) as GraphQLObjectType).getFields()[fieldName]!;
    const option = field.extensions?.complexity as ComplexityOption | undefined;
    if (option === undefined || option === defaultFieldCost) {
      problems.push(
        `${coordinate}: reads the ${kind === 'store' ? 'store' : 'loaders'} and declares no cost`,
      );
      continue;
    }
    const value = typeof option === 'function' ? option({}) : option;
    const own = typeof value === 'number' ? value : (value.field ?? 0);
    if (kind === 'store' && own < QUERY_COST) {
      problems.push(`${coordinate}: runs its own query and costs ${own}, under ${QUERY_COST}`);
    }
  }
  return { problems, io: io.size };
}

describe('the cost model, declared on the schema', () => {
  it('every field whose resolver reads the store or a loader declares its cost; one with its own query pays for it', async () => {
    const { problems, io } = await ioCostProblems(schema);
    expect(problems).toEqual([]);
    // Pages, counts, lookups, loaded entities and episodes: a walk that finds none has
    // checked nothing.
    expect(io).toBeGreaterThanOrEqual(15);
  });

  it('the walk refuses a field with its own query and no cost (Entity.factCount, as a newcomer would write it)', async () => {
    const b = new SchemaBuilder<{
      DefaultFieldNullability: false;
      Context: { store: { count(): Promise<number> }; loaders: unknown };
    }>({
      plugins: [ComplexityPlugin],
      defaultFieldNullability: false,
      complexity: { fieldComplexity: defaultFieldCost },
    } as never);
    const Entity = b.objectRef<{ name: string }>('Entity').implement({
      fields: (t) => ({
        name: t.exposeString('name'),
        factCount: t.int({ resolve: (_entity, _args, ctx) => ctx.store.count() }),
        cheapCount: t.int({ complexity: 1, resolve: (_entity, _args, ctx) => ctx.store.count() }),
      }),
    });
    b.queryType({
      fields: (t) => ({
        entity: t.field({ type: Entity, complexity: 1, resolve: () => ({ name: 'x' }) }),
      }),
    });
    expect((await ioCostProblems(b.toSchema())).problems.sort()).toEqual([
      'Entity.cheapCount: runs its own query and costs 1, under 10',
      'Entity.factCount: reads the store and declares no cost',
    ]);
  });

  it('gives every list of objects a bound: first (literal, variable or default, clamped) or a cap', () => {
    const { problems, checked } = costRuleProblems(schema);
    expect(problems).toEqual([]);
    // Connections, Entity.facts, Episode.facts, Fact.history, allEntities, allMemories,
    // the recordEpisode payload's lists: a walk that finds none has checked nothing.
    expect(checked).toBeGreaterThanOrEqual(12);
  });

  it('the walk flags a list whose bound nobody declared', () => {
    // Only the complexity plugin (the cast: the project's other plugins declare required options).
    const b = new SchemaBuilder<{ DefaultFieldNullability: false }>({
      plugins: [ComplexityPlugin],
      defaultFieldNullability: false,
      complexity: { fieldComplexity: defaultFieldCost },
    } as never);
    const Thing = b.objectRef<{ n: number }>('Thing').implement({
      fields: (t) => ({ n: t.exposeInt('n') }),
    });
    b.queryType({
      fields: (t) => ({ things: t.field({ type: [Thing], resolve: () => [] }) }),
    });
    expect(costRuleProblems(b.toSchema()).problems).toEqual([
      'Query.things: a list without a declared bound',
    ]);
  });

  it('scalars are free, objects cost one, a list multiplies its selection by its bound', () => {
    const cost = (query: string, variables: Record<string, unknown> = {}) =>
      measureOperation(schema, parse(query), { variables }, {}).cost;
    const page = '{ dataset(name: "d") { facts(first: 10) { edges { node { subject } } } } }';
    // dataset 1 + facts page 10 (its own query) + 10 nodes.
    expect(cost(page)).toBe(21);
    expect(
      cost(
        '{ dataset(name: "d") { facts(first: 10) { edges { node { subject object validAt state } } } } }',
      ),
    ).toBe(21);
    // Each loaded entity costs one more per node.
    expect(
      cost(
        '{ dataset(name: "d") { facts(first: 10) { edges { node { subjectEntity { name } } } } } }',
      ),
    ).toBe(31);
    // Variables and defaults count like literals.
    const byVariable =
      'query ($f: Int) { dataset(name: "d") { facts(first: $f) { edges { node { subject } } } } }';
    expect(cost(byVariable, { f: 10 })).toBe(21);
    expect(cost(byVariable, {})).toBe(
      cost('{ dataset(name: "d") { facts { edges { node { subject } } } } }'),
    );
    expect(cost('{ dataset(name: "d") { facts { edges { node { subject } } } } }')).toBe(61);
  });
});

// ---------------------------------------------------------------------------------------
// Calibration: the front-end corpus passes, the attacks are refused before anything runs.
// ---------------------------------------------------------------------------------------

function operationsIn(source: string): { name: string; document: DocumentNode }[] {
  const definitions = parse(source).definitions;
  const fragments = definitions.filter((d) => d.kind === Kind.FRAGMENT_DEFINITION);
  return definitions
    .filter((d) => d.kind === Kind.OPERATION_DEFINITION)
    .map((op: DefinitionNode) => {
      // Fragments the operation spreads, and the ones those spread, and so on.
      const used: DefinitionNode[] = [];
      let text = print(op);
      for (let grew = true; grew; ) {
        grew = false;
        for (const f of fragments) {
          if (
            f.kind === Kind.FRAGMENT_DEFINITION &&
            !used.includes(f) &&
            new RegExp(`\\.\\.\\.${f.name.value}\\b`).test(text)
          ) {
            used.push(f);
            text += print(f);
            grew = true;
          }
        }
      }
      return {
        name: (op.kind === Kind.OPERATION_DEFINITION && op.name?.value) || 'anonymous',
        document: { kind: Kind.DOCUMENT, definitions: [op, ...used] } as DocumentNode,
      };
    });
}

const corpus = [
  ...operationsIn(readFileSync(new URL('./frontEndCorpus.graphql', import.meta.url), 'utf8')),
  ...operationsIn(DEFAULT_QUERY),
  // Every GraphQL example of the README and docs/ that runs as written (not one with a
  // "<placeholder>" for the reader to fill in).
  ...everyDoc().flatMap(({ text }) =>
    [...text.matchAll(/```graphql\n([\s\S]*?)```/g)]
      .filter((m) => !m[1]!.includes('"<'))
      .flatMap((m) => operationsIn(m[1]!)),
  ),
  ...operationsIn(
    readFileSync(new URL('../../src/rest/memorySoda.graphql', import.meta.url), 'utf8'),
  ),
  ...operationsIn(
    readFileSync(new URL('../../src/rest/supaCloud.graphql', import.meta.url), 'utf8'),
  ),
  // The MCP tools', with the largest values their arguments allow.
  ...operationsIn(readFileSync(new URL('../../src/mcp/tools.graphql', import.meta.url), 'utf8')),
  // The memory explorer's, with the largest page it asks for.
  ...operationsIn(
    readFileSync(new URL('../../explorer/src/operations.graphql', import.meta.url), 'utf8'),
  ),
];

/** Variables for the corpus, by name: the largest values each allows. */
const VARIABLES: Record<string, unknown> = {
  dataset: 'user_42',
  name: 'user',
  first: 100,
  q: 'car',
  includeInvalidated: true,
  includeArchived: true,
  factId: '00000000-0000-4000-8000-000000000000',
  query: 'what does the user drive?',
  withCounts: true,
};

/** Where an operation's field allows less than the shared largest value. */
const EXPLORER_INSTANTS = { validAt: '2026-06-01T00:00:00Z', knownAt: '2026-09-01T00:00:00Z' };
const OPERATION_VARIABLES: Record<string, Record<string, unknown>> = {
  MemorySodaRecall: { first: 50, explain: true },
  McpRecall: { first: 50, explain: true, withMemories: true },
  McpEntityFacts: { first: 1000 },
  McpFactHistory: { factId: DEMO.facts.hondaInterest },
  ExplorerTimeline: EXPLORER_INSTANTS,
  ExplorerChanges: {
    since: '2026-01-01T00:00:00Z',
    until: '2026-12-01T00:00:00Z',
    withLearned: true,
    withDropped: true,
  },
  ExplorerEntity: EXPLORER_INSTANTS,
  ExplorerEpisode: { ...EXPLORER_INSTANTS, episodeId: DEMO.episodes.hondaCivic },
  ExplorerSearch: EXPLORER_INSTANTS,
  ExplorerRecall: { validAt: '2026-10-01T00:00:00Z', knownAt: '2026-10-01T00:00:00Z' },
  ExplorerMemories: { asOf: '2026-10-01T00:00:00Z', includeSuperseded: true },
};

const variablesFor = (document: DocumentNode) => {
  const op = document.definitions[0]!;
  if (op.kind !== Kind.OPERATION_DEFINITION) return {};
  const values = { ...VARIABLES, ...OPERATION_VARIABLES[op.name?.value ?? ''] };
  return Object.fromEntries(
    (op.variableDefinitions ?? [])
      .map((v) => v.variable.name.value)
      .filter((n) => n in values)
      .map((n) => [n, values[n]]),
  );
};

/** Attacks seen on the running gateway, and the same through variables and aliases. */
const nestedFacts = (levels: number, first = '') => {
  let selection = 'facts { subject }';
  for (let i = 0; i < levels; i++)
    selection = `facts${first} { subject subjectEntity { ${selection} } }`;
  return selection;
};
const ATTACKS: { name: string; query: string; variables?: Record<string, unknown> }[] = [
  {
    name: 'unpaginated lists nested four deep under a hub entity',
    query: `{ dataset(name: "user_42") { entity(name: "user") { facts { subjectEntity { facts { subjectEntity { facts { subjectEntity { facts { subject } } } } } } } } } }`,
  },
  {
    name: 'the same nesting with first given through variables',
    query: `query Nested($f: Int) { dataset(name: "user_42") { entity(name: "user") { ${nestedFacts(3, '(first: $f)')} } } }`,
    variables: { f: 1000 },
  },
  {
    name: 'a page of 100 facts fanned out through aliases',
    query: `{ dataset(name: "user_42") { ${Array.from(
      { length: 3 },
      (_, i) =>
        `a${i}: facts(first: 100) { edges { node { subjectEntity { facts { subject } } } } }`,
    ).join(' ')} } }`,
  },
  {
    name: 'histories of histories',
    query: `query H($n: Int = 100) { dataset(name: "user_42") { facts(first: $n) { edges { node { history(first: $n) { history(first: $n) { subject } } } } } } }`,
  },
  {
    name: 'every entity of every dataset with its facts',
    query: `{ datasets(first: 100) { edges { node { allEntities { facts { subject } } } } } }`,
  },
];

let t: TestGateway;
let key: string;
const commands: CommandStartedEvent[] = [];

beforeAll(async () => {
  t = await openTestGateway({ clientOptions: { monitorCommands: true } });
  key = await t.key('acme', ['read', 'write', 'admin']);
  t.database.client.on('commandStarted', (event) => commands.push(event));
});

const post = (body: object, accept = 'application/graphql-response+json') =>
  t.request('/graphql', {
    method: 'POST',
    key,
    headers: { 'content-type': 'application/json', accept },
    body: JSON.stringify(body),
  });

describe('the front-end corpus passes the limits', () => {
  it('holds the operations the issue names (and is not empty)', () => {
    const names = corpus.map((c) => c.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'CorpusFactsPage',
        'CorpusMemoriesPage',
        'CorpusEntitiesWithLiveFacts',
        'CorpusEpisodesWithFactsAndEntities',
        'CurrentFacts',
        'MemorySodaListFacts',
        'MemorySodaListEntities',
        'MemorySodaEntityFacts',
        'MemorySodaRecall',
        'SupaCloudListMemories',
        'ExplorerViewer',
        'ExplorerTimeline',
        'ExplorerChanges',
        'ExplorerEntity',
        'ExplorerEpisode',
        'ExplorerSearch',
        'ExplorerRecall',
        'ExplorerMemories',
      ]),
    );
    // Every MCP tool's operation, the fuller one a write tool runs for a key that may read too.
    expect(names).toEqual(
      expect.arrayContaining(
        MCP_TOOLS.map((tool) => getOperationAST(tool.operation)?.name?.value).concat([
          'McpRecordEpisode',
          'McpCreateMemory',
          'McpUpdateMemory',
        ]),
      ),
    );
    // The README's examples are in it too.
    expect(corpus.length).toBeGreaterThan(15);
  });

  it.each(corpus.map((c) => [c.name, c.document] as const))(
    '%s costs no more than the limit and runs without errors',
    async (_name, document) => {
      const variables = variablesFor(document);
      const { cost, depth } = measureOperation(schema, document, { variables }, {});
      expect(cost).toBeLessThanOrEqual(QUERY_LIMITS.maxCost);
      expect(depth).toBeLessThanOrEqual(QUERY_LIMITS.maxDepth);
      const op = document.definitions[0]!;
      if (op.kind === Kind.OPERATION_DEFINITION && op.operation === 'subscription') {
        // A subscription opens its stream (an error would come as the first event, or as a
        // status): open, with only the heartbeat to say so; then the client goes.
        const stream = await post({ query: print(document), variables }, 'text/event-stream');
        expect(stream.status).toBe(200);
        const reader = stream.body!.getReader();
        expect(new TextDecoder().decode((await reader.read()).value)).toBe(':\n\n');
        // Its watch's first reads done, so none lands in the next test's count.
        while (t.gateway.live.watches.counts().followers === 0) {
          await new Promise((r) => setTimeout(r, 10));
        }
        await t.gateway.live.watches.started();
        await reader.cancel();
        return;
      }
      const response = await post({ query: print(document), variables });
      const body = await response.json();
      const isMutation = op.kind === Kind.OPERATION_DEFINITION && op.operation === 'mutation';
      if (isMutation) {
        // Mutations run without the inputs they need here (they are measured, not applied):
        // whatever they answer, it is not a limit's refusal.
        const codes = (body.errors ?? []).map(
          (e: { extensions: { code: string } }) => e.extensions.code,
        );
        expect(codes).not.toContain('QUERY_TOO_COMPLEX');
      } else {
        expect(body.errors).toBeUndefined();
        expect(response.status).toBe(200);
      }
    },
  );
});

describe('abusive operations are refused before anything runs', () => {
  it.each(ATTACKS.map((a) => [a.name, a] as const))('%s', async (_name, attack) => {
    const body = { query: attack.query, variables: attack.variables ?? {} };
    commands.length = 0;
    const response = await post(body);
    const ran = commands
      .map((c) => String(c.command.comment ?? c.commandName))
      .filter((c) => c !== 'store:authenticateApiKey');
    expect(ran).toEqual([]);
    expect(response.status).toBe(400);
    const answer = await response.json();
    expect(answer.data).toBeUndefined();
    expect(answer.errors, JSON.stringify(answer.errors)).toHaveLength(1);
    const [error] = answer.errors;
    expect(error.message).not.toMatch(/Syntax Error/);
    expect(error.extensions).toMatchObject({
      code: 'QUERY_TOO_COMPLEX',
      limit: expect.any(Number),
    });
    const measure = error.extensions.measure as string;
    expect(error.extensions[measure]).toBeGreaterThan(error.extensions.limit);
    expect(measureOperation(schema, parse(attack.query), body, {}).cost).toBeGreaterThan(
      QUERY_LIMITS.maxCost,
    );

    // With application/json, the same refusal answers 200 (GraphQL over HTTP).
    const legacy = await post(body, 'application/json');
    expect(legacy.status).toBe(200);
    expect((await legacy.json()).errors[0].extensions.code).toBe('QUERY_TOO_COMPLEX');
  });

  it("one document is measured with each request's own variables, whatever was asked before", async () => {
    // Measures are remembered per document and variables: a cheap request first must not
    // let the same text through later with costly variables, nor the other way round.
    const query = `query Lists($n: Int!) { dataset(name: "cost") { entities(first: $n) { edges { node {
      facts(first: $n) { subjectEntity { facts(first: $n) { factId } } } } } } } }`;
    const document = parse(query);
    const cheap = { n: 1 };
    const costly = { n: 100 };
    expect(measureOperation(schema, document, { variables: cheap }, {}).cost).toBeLessThan(
      QUERY_LIMITS.maxCost,
    );
    expect(measureOperation(schema, document, { variables: costly }, {}).cost).toBeGreaterThan(
      QUERY_LIMITS.maxCost,
    );
    const codes = [];
    for (const variables of [cheap, costly, cheap, costly, costly, cheap]) {
      const answer = await (await post({ query, variables })).json();
      codes.push(answer.errors?.[0]?.extensions.code ?? 'ok');
    }
    expect(codes).toEqual([
      'ok',
      'QUERY_TOO_COMPLEX',
      'ok',
      'QUERY_TOO_COMPLEX',
      'QUERY_TOO_COMPLEX',
      'ok',
    ]);
  });

  it('the refusal names the computed cost and the limit', async () => {
    const answer = await (await post({ query: ATTACKS[0]!.query })).json();
    const expected = measureOperation(schema, parse(ATTACKS[0]!.query), {}, {}).cost;
    expect(answer.errors[0].extensions).toEqual({
      code: 'QUERY_TOO_COMPLEX',
      measure: 'cost',
      cost: expected,
      limit: QUERY_LIMITS.maxCost,
    });
    expect(answer.errors[0].message).toContain(`(${expected}) is over the limit of 20000`);
  });
});
