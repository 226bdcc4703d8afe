import SchemaBuilder from '@pothos/core';
import ValidationPlugin from '@pothos/plugin-validation';
import {
  type GraphQLField,
  type GraphQLInputObjectType,
  type GraphQLSchema,
  getNamedType,
  isInputObjectType,
  isObjectType,
} from 'graphql';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { schema } from '../../src/schema/index.js';

/**
 * Every input object a GraphQL argument can carry, at any depth, is validated by a zod
 * rule that names exactly its fields: an argument's whole-object rule (`.validate(schema)`)
 * gets what the rule outputs, so a GraphQL input field the rule lacks is dropped without a
 * word, and a rule field the input type lacks can never be set. The walk reads the rule
 * through whatever wraps it (pipes, transforms, optional, nullable, defaults, arrays, lazy)
 * and descends into nested input types (RecordEpisodeInput's FactInput) with the rule's
 * nested object. A zod construct it cannot see through is a failure, not a pass.
 */

type ZodDef = { type: string; [key: string]: unknown };
const defOf = (rule: unknown): ZodDef | null =>
  (rule as { _zod?: { def?: ZodDef } } | null)?._zod?.def ?? null;

/** The wrappers a rule's value passes through on its way to an object, and what they wrap. */
const INNER: Record<string, (def: ZodDef) => unknown> = {
  // A pipe validates with its input side (a transform is the output side).
  pipe: (def) => def.in,
  optional: (def) => def.innerType,
  nullable: (def) => def.innerType,
  default: (def) => def.innerType,
  prefault: (def) => def.innerType,
  nonoptional: (def) => def.innerType,
  readonly: (def) => def.innerType,
  catch: (def) => def.innerType,
  array: (def) => def.element,
  lazy: (def) => (def.getter as () => unknown)(),
};

/** The object a rule validates, through its wrappers; a string saying why not otherwise. */
function objectShapeOf(rule: unknown): Record<string, unknown> | string {
  let current = rule;
  for (let depth = 0; depth < 20; depth++) {
    const def = defOf(current);
    if (!def) return 'not a zod schema';
    if (def.type === 'object') return def.shape as Record<string, unknown>;
    const inner = INNER[def.type];
    if (!inner) return `a zod ${def.type}, which the walk cannot see an object through`;
    current = inner(def);
  }
  return 'nested deeper than the walk follows';
}

/** A plugin-validation rule list kept in a type's, field's or argument's extensions. */
const rulesIn = (extensions: unknown): unknown[] =>
  (extensions as { '@pothos/plugin-validation'?: { schemas?: unknown[] } } | undefined)?.[
    '@pothos/plugin-validation'
  ]?.schemas ?? [];

interface Walk {
  /** Input types checked, each with where it was reached. */
  checked: string[];
  problems: string[];
}

/**
 * Checks one input type against the rules that reach it (its argument's or its parent
 * field's, and any of its own), then its nested input types.
 */
function checkInput(type: GraphQLInputObjectType, parentRules: unknown[], at: string, walk: Walk) {
  walk.checked.push(`${at}: ${type.name}`);
  const shapes: Record<string, unknown>[] = [];
  for (const rule of [...parentRules, ...rulesIn(type.extensions)]) {
    const shape = objectShapeOf(rule);
    if (typeof shape === 'string') walk.problems.push(`${at} (${type.name}): its rule is ${shape}`);
    else shapes.push(shape);
  }
  const fields = type.getFields();
  for (const shape of shapes) {
    for (const name of Object.keys(shape)) {
      if (!(name in fields)) {
        walk.problems.push(`${at}.${name}: the rule has it, ${type.name} has no such field`);
      }
    }
  }
  for (const field of Object.values(fields)) {
    const fieldRules = [
      ...shapes.flatMap((shape) => (field.name in shape ? [shape[field.name]] : [])),
      ...rulesIn(field.extensions),
    ];
    if (fieldRules.length === 0) {
      walk.problems.push(`${at}.${field.name}: ${type.name}.${field.name} has no rule`);
    }
    const nested = getNamedType(field.type);
    if (isInputObjectType(nested)) checkInput(nested, fieldRules, `${at}.${field.name}`, walk);
  }
}

/** Every argument of every object type's field whose type is an input object, walked. */
function walkInputRules(target: GraphQLSchema): Walk {
  const walk: Walk = { checked: [], problems: [] };
  for (const type of Object.values(target.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue;
    for (const field of Object.values(type.getFields()) as GraphQLField<unknown, unknown>[]) {
      for (const arg of field.args) {
        const input = getNamedType(arg.type);
        if (!isInputObjectType(input)) continue;
        checkInput(input, rulesIn(arg.extensions), `${type.name}.${field.name}(${arg.name})`, walk);
      }
    }
  }
  return walk;
}

describe("the gateway's input types and their rules", () => {
  it('name the same fields, at every depth, for every input argument', () => {
    const walk = walkInputRules(schema);
    // Every input type of the schema is reached through some argument.
    const reached = new Set(walk.checked.map((c) => c.split(': ')[1]));
    const inputTypes = Object.values(schema.getTypeMap()).filter(
      (t) => isInputObjectType(t) && !t.name.startsWith('__'),
    );
    expect(inputTypes.length).toBeGreaterThanOrEqual(6);
    expect([...reached].sort()).toEqual(inputTypes.map((t) => t.name).sort());
    expect(walk.problems).toEqual([]);
  });
});

describe('the walk, fed declarations that break the rule', () => {
  /** A small schema of its own: a parent input with a nested list input, validated by `rule`. */
  function brokenSchema(rule: z.ZodType, childFields: 'all' | 'one-more') {
    const builder = new SchemaBuilder<{ Scalars: { ID: { Input: string; Output: string } } }>({
      plugins: [ValidationPlugin],
      // Required by the type of every builder once scope-auth is installed; unused here.
      scopeAuth: { authScopes: () => ({}) },
    });
    const Child = builder.inputType('Child', {
      fields: (t) => ({
        name: t.string({ required: true }),
        ...(childFields === 'one-more' ? { tags: t.stringList() } : {}),
      }),
    });
    const Parent = builder.inputType('Parent', {
      fields: (t) => ({
        title: t.string({ required: true }),
        children: t.field({ type: [Child] }),
      }),
    });
    builder.queryType({
      fields: (t) => ({
        save: t.boolean({
          args: { input: t.arg({ type: Parent, required: true }).validate(rule) },
          resolve: () => true,
        }),
      }),
    });
    return builder.toSchema();
  }

  const child = z.object({ name: z.string() });
  const parentOf = (c: z.ZodType) =>
    z
      .object({ title: z.string(), children: z.array(c).nullish() })
      .superRefine(() => {})
      .transform((v) => v);

  it('passes a rule that names every field, through a pipe and a nested array', () => {
    expect(walkInputRules(brokenSchema(parentOf(child), 'all')).problems).toEqual([]);
  });

  it('fails a nested input field the rule does not name (Fact.tags with no rule)', () => {
    expect(walkInputRules(brokenSchema(parentOf(child), 'one-more')).problems).toEqual([
      'Query.save(input).children.tags: Child.tags has no rule',
    ]);
  });

  it('fails a rule field the input type does not have', () => {
    const extra = child.extend({ tags: z.array(z.string()).nullish() });
    expect(walkInputRules(brokenSchema(parentOf(extra), 'all')).problems).toEqual([
      'Query.save(input).children.tags: the rule has it, Child has no such field',
    ]);
  });

  it('fails a rule it cannot see an object through', () => {
    const union = z.union([z.object({ title: z.string() }), z.object({ other: z.string() })]);
    expect(walkInputRules(brokenSchema(union, 'all')).problems.sort()).toEqual([
      'Query.save(input) (Parent): its rule is a zod union, which the walk cannot see an object through',
      'Query.save(input).children.name: Child.name has no rule',
      'Query.save(input).children: Parent.children has no rule',
      'Query.save(input).title: Parent.title has no rule',
    ]);
  });
});
