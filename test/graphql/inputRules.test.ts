import {
  type GraphQLArgument,
  type GraphQLField,
  getNamedType,
  isInputObjectType,
  isObjectType,
} from 'graphql';
import { describe, expect, it } from 'vitest';
import { schema } from '../../src/schema/index.js';

/**
 * An input object argument validated by a whole-object zod schema (`.validate(schema)`)
 * gets what the schema outputs: a field the GraphQL input type has and the schema does not
 * would be dropped without a word, and one the schema has and the type does not could never
 * be set. Walking the built schema, every such pair names the same fields.
 */

interface ObjectRule {
  shape: Record<string, unknown>;
}

function wholeObjectRules(arg: GraphQLArgument): ObjectRule[] {
  const extensions = arg.extensions as { '@pothos/plugin-validation'?: { schemas?: unknown[] } };
  const schemas = extensions['@pothos/plugin-validation']?.schemas ?? [];
  return schemas.filter(
    (s): s is ObjectRule => typeof s === 'object' && s !== null && 'shape' in s,
  );
}

function validatedInputArgs() {
  const found: { at: string; typeFields: string[]; ruleFields: string[] }[] = [];
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue;
    for (const field of Object.values(type.getFields()) as GraphQLField<unknown, unknown>[]) {
      for (const arg of field.args) {
        const input = getNamedType(arg.type);
        if (!isInputObjectType(input)) continue;
        for (const rule of wholeObjectRules(arg)) {
          found.push({
            at: `${type.name}.${field.name}(${arg.name}: ${input.name})`,
            typeFields: Object.keys(input.getFields()).sort(),
            ruleFields: Object.keys(rule.shape).sort(),
          });
        }
      }
    }
  }
  return found;
}

describe('input types and their whole-object rules', () => {
  it('name the same fields, for every validated input argument', () => {
    const found = validatedInputArgs();
    // createMemory, supersedeMemory and updateMemory at least: a walk that finds none fails.
    expect(found.length).toBeGreaterThanOrEqual(3);
    for (const { at, typeFields, ruleFields } of found) expect(ruleFields, at).toEqual(typeFields);
  });
});
