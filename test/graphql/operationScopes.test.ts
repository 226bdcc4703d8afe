import SchemaBuilder from '@pothos/core';
import ScopeAuthPlugin from '@pothos/plugin-scope-auth';
import { parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { schema } from '../../src/schema/index.js';
import {
  declaredRules,
  directiveVariables,
  missingScopes,
} from '../../src/schema/operationScopes.js';

/**
 * The authorization decided before execution (src/schema/operationScopes.ts), on the
 * gateway's schema and on small schemas of its own for what the gateway's has none of
 * (subscriptions, rules only run time could decide). The matrix in authorization.test.ts
 * checks the same decision through the endpoint, with "nothing ran" for every mutation.
 */

const WRITE_ONLY = { authenticated: true, read: false, write: true, admin: false };
const READ_ONLY = { authenticated: true, read: true, write: false, admin: false };
const ADMIN_ONLY = { authenticated: true, read: false, write: false, admin: true };

const fieldsOf = (
  document: string,
  granted: Record<string, boolean>,
  variables: Record<string, unknown> = {},
  s = schema,
) => missingScopes(s, parse(document), { variables }, granted).map((m) => m.field);

const RECORD =
  'recordEpisode(dataset: "d", input: { episode: { occurredAt: "2026-01-01", source: "s", content: "c" } })';

describe('what an operation needs, decided from the document', () => {
  it('the ids a mutation hands back need only the mutation’s scope', () => {
    expect(
      fieldsOf(
        `mutation { ${RECORD} { alreadyRecorded outcome supersededIds episode { episodeId } facts { factId } } }`,
        WRITE_ONLY,
      ),
    ).toEqual([]);
  });

  it('every field the key may not run is named once, in the order the operation names them', () => {
    expect(
      fieldsOf(
        `mutation { ${RECORD} { episode { content recordedAt } facts { subject factId subject } again: facts { subject } } }`,
        WRITE_ONLY,
      ),
    ).toEqual(['Episode.content', 'Episode.recordedAt', 'Fact.subject']);
  });

  it('a root field the key lacks the scope for is named, and so is what under it needs read', () => {
    const missing = missingScopes(
      schema,
      parse(`mutation { ${RECORD} { facts { subject } } }`),
      {},
      ADMIN_ONLY,
    );
    expect(missing).toEqual([
      { field: 'Mutation.recordEpisode', needs: 'write' },
      { field: 'Fact.subject', needs: 'read' },
    ]);
  });

  it('named fragments, nested and spread many times', () => {
    const document = `
      mutation { ${RECORD} { ...Payload ...Payload } }
      fragment Payload on RecordEpisodePayload { facts { ...Ids ...Content } episode { episodeId } }
      fragment Ids on Fact { factId }
      fragment Content on Fact { object sourceQuote }`;
    expect(fieldsOf(document, WRITE_ONLY)).toEqual(['Fact.object', 'Fact.sourceQuote']);
  });

  it('inline fragments on node(id:): a field counts for every type the fragment can apply to', () => {
    const withoutRead = { authenticated: true, read: false };
    expect(
      fieldsOf('{ node(id: "x") { __typename ... on Fact { factId } } }', withoutRead),
    ).toEqual(['Query.node']);
    // The interface's own field: every node type's id needs read.
    expect(
      fieldsOf('{ node(id: "x") { id } }', withoutRead)
        .filter((f) => f !== 'Query.node')
        .sort(),
    ).toEqual(['Dataset.id', 'Entity.id', 'Episode.id', 'Fact.id', 'Memory.id']);
    // A fragment on one type narrows to it; on the interface, to every node type.
    expect(fieldsOf('{ node(id: "x") { ... on Fact { subject factId } } }', withoutRead)).toEqual([
      'Query.node',
      'Fact.subject',
    ]);
    expect(
      fieldsOf(
        '{ node(id: "x") { ... on Node { ... on Memory { memoryId text } } } }',
        withoutRead,
      ),
    ).toEqual(['Query.node', 'Memory.text']);
    // With read, nothing is missing.
    expect(fieldsOf('{ node(id: "x") { id ... on Fact { subject } } }', READ_ONLY)).toEqual([]);
  });

  it('@skip and @include, literal and with the request’s variables', () => {
    const document = `mutation($full: Boolean!, $bare: Boolean = false) {
      ${RECORD} {
        facts { factId subject @include(if: $full) object @skip(if: true) }
        episode @skip(if: $bare) { content }
      }
    }`;
    expect(fieldsOf(document, WRITE_ONLY, { full: false, bare: true })).toEqual([]);
    expect(fieldsOf(document, WRITE_ONLY, { full: true, bare: true })).toEqual(['Fact.subject']);
    expect(fieldsOf(document, WRITE_ONLY, { full: false, bare: false })).toEqual([
      'Episode.content',
    ]);
    // A value that is not a boolean (execution refuses it) counts as included.
    expect(fieldsOf(document, WRITE_ONLY, { full: 'yes', bare: true })).toEqual(['Fact.subject']);
    expect(directiveVariables(parse(document))).toEqual(['bare', 'full']);
  });

  it('introspection needs nothing; an operation the document does not hold needs nothing here', () => {
    expect(fieldsOf('{ __schema { types { name } } __typename }', {})).toEqual([]);
    expect(
      missingScopes(
        schema,
        parse('query A { viewer { workspace } } query B { datasets { totalCount } }'),
        { operationName: 'C' },
        {},
      ),
    ).toEqual([]);
    expect(
      missingScopes(
        schema,
        parse('query A { viewer { workspace } } query B { datasets { totalCount } }'),
        { operationName: 'B' },
        WRITE_ONLY,
      ).map((m) => m.field),
    ).toEqual(['Query.datasets']);
  });
});

/** A schema with a subscription and a type-level rule, built like the gateway's. */
function subscriptionSchema() {
  const b = new SchemaBuilder<{ AuthScopes: { read: boolean; authenticated: boolean } }>({
    plugins: [ScopeAuthPlugin],
    scopeAuth: { authScopes: () => ({ read: true, authenticated: true }) },
  });
  const Change = b.objectRef<{ id: string; text: string }>('Change').implement({
    authScopes: { read: true },
    fields: (t) => ({
      id: t.exposeString('id', { skipTypeScopes: true, authScopes: { authenticated: true } }),
      text: t.exposeString('text'),
    }),
  });
  b.queryType({
    fields: (t) => ({
      ok: t.boolean({ authScopes: { authenticated: true }, resolve: () => true }),
    }),
  });
  b.subscriptionType({
    fields: (t) => ({
      changes: t.field({
        type: Change,
        authScopes: { authenticated: true },
        subscribe: async function* () {
          yield { id: '1', text: 'x' };
        },
        resolve: (c) => c,
      }),
    }),
  });
  return b.toSchema({ disableScopeAuth: true });
}

describe('subscriptions and rules the check cannot decide', () => {
  it('a subscription’s selection is decided like a query’s', () => {
    const s = subscriptionSchema();
    const granted = { authenticated: true, read: false };
    expect(fieldsOf('subscription { changes { id } }', granted, {}, s)).toEqual([]);
    expect(fieldsOf('subscription { changes { id text } }', granted, {}, s)).toEqual([
      'Change.text',
    ]);
    expect(
      fieldsOf('subscription { changes { text } }', { ...granted, read: true }, {}, s),
    ).toEqual([]);
  });

  it('a rule only run time could decide (a function) is refused when the rules are read', () => {
    const b = new SchemaBuilder<{ AuthScopes: { read: boolean } }>({
      plugins: [ScopeAuthPlugin],
      scopeAuth: { authScopes: () => ({ read: true }) },
    });
    b.queryType({
      fields: (t) => ({
        dynamic: t.string({ authScopes: () => ({ read: true }), resolve: () => 'x' }),
      }),
    });
    expect(() => declaredRules(b.toSchema())).toThrow(
      /Query\.dynamic: authScopes must be a scope map the gateway can check before execution/,
    );
  });

  it('$any and $all are evaluated as scope-auth evaluates them', () => {
    const b = new SchemaBuilder<{ AuthScopes: { read: boolean; write: boolean; admin: boolean } }>({
      plugins: [ScopeAuthPlugin],
      scopeAuth: { authScopes: () => ({ read: true, write: true, admin: true }) },
    });
    b.queryType({
      fields: (t) => ({
        either: t.string({ authScopes: { read: true, write: true }, resolve: () => 'x' }),
        both: t.string({ authScopes: { $all: { read: true, admin: true } }, resolve: () => 'x' }),
      }),
    });
    const s = b.toSchema({ disableScopeAuth: true });
    const missing = (granted: Record<string, boolean>) =>
      missingScopes(s, parse('{ either both }'), {}, granted);
    expect(missing({ write: true, admin: true })).toEqual([
      { field: 'Query.both', needs: 'all of (read, admin)' },
    ]);
    expect(missing({ admin: true })).toEqual([
      { field: 'Query.either', needs: 'read or write' },
      { field: 'Query.both', needs: 'all of (read, admin)' },
    ]);
    expect(missing({ read: true, admin: true })).toEqual([]);
  });
});
