import { GraphQLScalarType, Kind } from 'graphql';
import { INSTANT_FORMAT, parseInstant } from '../domain/time.js';
import { badInput } from '../errors.js';

const PROBLEM = `expected ${INSTANT_FORMAT}`;

function parse(value: unknown): Date {
  if (typeof value !== 'string')
    throw badInput(`DateTime: ${PROBLEM}; got ${JSON.stringify(value)}`);
  const date = parseInstant(value);
  if (!date) throw badInput(`DateTime: ${PROBLEM}; got "${value.slice(0, 100)}"`);
  return date;
}

/**
 * ISO 8601 instants. Input: a date alone (00:00:00Z of that day) or a date-time with a
 * zone; anything else is rejected with a message saying what is accepted. Output: the
 * `toISOString()` form, with milliseconds and Z.
 */
export const dateTimeScalar = new GraphQLScalarType<Date, string>({
  name: 'DateTime',
  description:
    'An instant in ISO 8601: output as 2026-08-16T09:14:02.000Z; input as a date-time with a zone, or a date alone meaning 00:00:00Z of that day.',
  serialize(value) {
    if (value instanceof Date) return value.toISOString();
    throw new TypeError('DateTime cannot represent a non-Date value');
  },
  parseValue: parse,
  parseLiteral(ast) {
    if (ast.kind !== Kind.STRING) throw badInput(`DateTime: ${PROBLEM}`);
    return parse(ast.value);
  },
});
