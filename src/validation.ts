/**
 * How a refused input is described, the same way on every surface: each problem as
 * "path: message" (the message alone for the input as a whole), joined with "; ". The
 * REST parameters, the GraphQL arguments (Pothos's validation plugin) and the import
 * format all say it this way.
 */

import * as z from 'zod';

/** "a string", "an object", "a number": the article a type name reads with. */
function named(type: string): string {
  const noun = type === 'nan' ? 'a number' : type;
  return /^[aeiou]/.test(noun) ? `an ${noun}` : noun.startsWith('a ') ? noun : `a ${noun}`;
}

/** What a value is, in the words a client reads (JSON's, not JavaScript's). */
function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'number' && Number.isNaN(value)) return 'not a number';
  return named(typeof value);
}

/** How a bound on a string's or a list's size reads: the unit, singular and plural. */
const UNITS: Record<string, [string, string]> = {
  string: ['character', 'characters'],
  array: ['item', 'items'],
  set: ['item', 'items'],
};

/**
 * zod's messages in the product's voice, for every input zod checks without a message of
 * its own ("dataset: is required (a string)" rather than "Invalid input: expected string,
 * received undefined"). A schema's own message wins; what is not listed keeps zod's.
 */
export function productVoice(issue: z.core.$ZodRawIssue): string | undefined {
  switch (issue.code) {
    case 'invalid_type':
      return issue.input === undefined
        ? `is required (${named(issue.expected)})`
        : `must be ${named(issue.expected)}, not ${kindOf(issue.input)}`;
    case 'too_small':
    case 'too_big': {
      const small = issue.code === 'too_small';
      const bound = String(small ? issue.minimum : issue.maximum);
      const relation = issue.exact
        ? 'exactly'
        : small
          ? issue.inclusive === false
            ? 'more than'
            : 'at least'
          : issue.inclusive === false
            ? 'less than'
            : 'at most';
      const unit = UNITS[issue.origin];
      if (!unit) return `must be ${relation} ${bound}`;
      const amount = `${relation} ${bound} ${bound === '1' ? unit[0] : unit[1]}`;
      return issue.origin === 'string' ? `must be ${amount} long` : `must hold ${amount}`;
    }
    case 'invalid_value':
      return issue.values.length === 1
        ? `must be ${JSON.stringify(issue.values[0])}`
        : `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
    case 'unrecognized_keys':
      return `${issue.keys.length === 1 ? 'unknown field' : 'unknown fields'} ${issue.keys.map((k) => `'${k}'`).join(', ')}`;
    case 'invalid_format':
      if (issue.format === 'uuid' || issue.format === 'guid') return 'must be a UUID';
      if (issue.format === 'datetime')
        return 'must be an ISO 8601 date-time with a zone, e.g. 2026-06-01T12:00:00Z';
      if (issue.format === 'date') return 'must be an ISO 8601 date, e.g. 2026-06-01';
      return undefined;
    default:
      return undefined;
  }
}

// Once per process, before any input is read: every module that reads input imports this
// file (describeIssues), so no parse runs with zod's own words.
z.config({ customError: productVoice });

/** One problem with an input, as zod and Standard Schema (Pothos's validation plugin) report it. */
export interface Issue {
  readonly message: string;
  /** Where it is: keys, or Standard Schema's `{ key }` segments; absent or empty: the input itself. */
  readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined;
}

/** An issue's path as plain keys. */
export function issuePath(issue: Issue): PropertyKey[] {
  return (issue.path ?? []).map((segment) => (typeof segment === 'object' ? segment.key : segment));
}

/** "name: reason; name.0.field: reason" for a failed parse, naming where each problem is. */
export function describeIssues(issues: readonly Issue[]): string {
  return issues
    .map((issue) => {
      const path = issuePath(issue).map(String).join('.');
      return path ? `${path}: ${issue.message}` : issue.message;
    })
    .join('; ');
}

/** What a string holding a lone surrogate is told: stored, it would not read back the same. */
const ILL_FORMED_TEXT =
  'must be valid Unicode text: it holds a lone surrogate (an unpaired \\uD800-\\uDFFF escape), which cannot be stored and read back as sent';

/**
 * The first string in a JSON-like value (variables, a body) that is not well-formed
 * Unicode, as an issue naming where it is (`input.facts.0.subject`), or null. A lone
 * surrogate (a JSON `"\ud800"` escape) would be stored as U+FFFD while the answer echoed
 * the original, so a dataset could be listed under a name that does not read it back.
 */
export function illFormedText(value: unknown, path: PropertyKey[] = []): Issue | null {
  if (typeof value === 'string') {
    return value.isWellFormed() ? null : { message: ILL_FORMED_TEXT, path };
  }
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) {
      const issue = illFormedText(item, [...path, i]);
      if (issue) return issue;
    }
  } else if (value !== null && typeof value === 'object' && !(value instanceof Date)) {
    for (const [key, item] of Object.entries(value)) {
      const keyIssue = key.isWellFormed() ? null : { message: ILL_FORMED_TEXT, path: [...path] };
      const issue = keyIssue ?? illFormedText(item, [...path, key]);
      if (issue) return issue;
    }
  }
  return null;
}
