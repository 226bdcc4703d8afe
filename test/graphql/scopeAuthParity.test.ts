import SchemaBuilder from '@pothos/core';
import ScopeAuthPlugin from '@pothos/plugin-scope-auth';
import { execute, type GraphQLSchema, parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { declaredRules, missingScopes } from '../../src/schema/operationScopes.js';

/**
 * operationScopes.ts decides authorization before execution by reading scope-auth's
 * declarations from where Pothos keeps them (`extensions.pothosOptions`) and evaluating
 * them as scope-auth does (type, then interfaces, then the field; `skipTypeScopes`,
 * `skipInterfaceScopes`; `$all` / `$any`). The gateway's schema runs without scope-auth's
 * own checks, so nothing else would notice if a Pothos upgrade moved those options or
 * changed that order. Here one small schema uses every construct the gateway reads and is
 * built twice: with scope-auth's run-time checks, and without them as the gateway builds
 * its own. For every field path and every set of scopes, scope-auth's answer at run time
 * and the check before execution must agree.
 */

type Scopes = { a: boolean; b: boolean; c: boolean };

function buildSchemas(): { checked: GraphQLSchema; declared: GraphQLSchema } {
  const builder = new SchemaBuilder<{ Context: { scopes: Scopes }; AuthScopes: Scopes }>({
    plugins: [ScopeAuthPlugin],
    scopeAuth: { authScopes: (context) => context.scopes },
  });
  const Named = builder.interfaceRef<object>('Named').implement({
    authScopes: { b: true },
    fields: (t) => ({ name: t.string({ nullable: true, resolve: () => 'x' }) }),
  });
  const Thing = builder.objectRef<object>('Thing').implement({
    interfaces: [Named],
    isTypeOf: () => true,
    authScopes: { a: true },
    fields: (t) => ({
      plain: t.string({ nullable: true, resolve: () => 'x' }),
      own: t.string({ nullable: true, authScopes: { c: true }, resolve: () => 'x' }),
      skipsType: t.string({
        nullable: true,
        skipTypeScopes: true,
        authScopes: { c: true },
        resolve: () => 'x',
      }),
      skipsInterface: t.string({ nullable: true, skipInterfaceScopes: true, resolve: () => 'x' }),
    }),
  });
  const Nested = builder.objectRef<object>('Nested').implement({
    authScopes: { $all: { a: true, $any: { b: true, c: true } } },
    fields: (t) => ({ value: t.string({ nullable: true, resolve: () => 'x' }) }),
  });
  const Open = builder.objectRef<object>('Open').implement({
    authScopes: { $any: { b: true, c: true } },
    skipInterfaceScopes: true,
    fields: (t) => ({ value: t.string({ nullable: true, resolve: () => 'x' }) }),
  });
  builder.queryType({
    fields: (t) => ({
      thing: t.field({ type: Thing, nullable: true, authScopes: { a: true }, resolve: () => ({}) }),
      named: t.field({ type: Named, nullable: true, authScopes: { b: true }, resolve: () => ({}) }),
      nested: t.field({
        type: Nested,
        nullable: true,
        authScopes: { $any: { a: true, c: true } },
        resolve: () => ({}),
      }),
      open: t.field({ type: Open, nullable: true, authScopes: { c: true }, resolve: () => ({}) }),
    }),
  });
  return { checked: builder.toSchema(), declared: builder.toSchema({ disableScopeAuth: true }) };
}

const { checked, declared } = buildSchemas();

const PATHS = [
  '{ thing { plain } }',
  '{ thing { own } }',
  '{ thing { skipsType } }',
  '{ thing { skipsInterface } }',
  '{ thing { name } }',
  '{ named { name } }',
  '{ named { ... on Thing { own } } }',
  '{ nested { value } }',
  '{ open { value } }',
];

const SCOPE_SETS: Scopes[] = [0, 1, 2, 3, 4, 5, 6, 7].map((bits) => ({
  a: (bits & 1) !== 0,
  b: (bits & 2) !== 0,
  c: (bits & 4) !== 0,
}));

describe("the check before execution and scope-auth's own checks", () => {
  it('read the declarations where Pothos keeps them', () => {
    const rules = declaredRules(declared);
    expect(rules.types.get('Thing')).toEqual({ a: true });
    expect(rules.fields.get('Query')?.get('open')?.rules).toEqual([{ c: true }]);
    // Type, interface and field, in that order; skipsType keeps only the interface's.
    expect(rules.fields.get('Thing')?.get('own')?.rules).toEqual([
      { a: true },
      { b: true },
      { c: true },
    ]);
    expect(rules.fields.get('Thing')?.get('skipsType')?.rules).toEqual([{ b: true }, { c: true }]);
  });

  it.each(PATHS)('agree on %s for every set of scopes', async (query) => {
    const document = parse(query);
    for (const scopes of SCOPE_SETS) {
      const result = await execute({
        schema: checked,
        document,
        contextValue: { scopes },
      });
      const allowedAtRunTime = (result.errors ?? []).length === 0;
      const allowedBefore = missingScopes(declared, document, {}, scopes).length === 0;
      expect(allowedBefore, `${query} with ${JSON.stringify(scopes)}`).toBe(allowedAtRunTime);
    }
  });

  it('see both answers: each path is refused for some scopes and allowed for others', async () => {
    for (const query of PATHS) {
      const answers = SCOPE_SETS.map(
        (scopes) => missingScopes(declared, parse(query), {}, scopes).length === 0,
      );
      expect(answers, query).toContain(true);
      expect(answers, query).toContain(false);
    }
  });
});
