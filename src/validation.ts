/**
 * How a refused input is described, the same way on every surface: each problem as
 * "path: message" (the message alone for the input as a whole), joined with "; ". The
 * REST parameters, the GraphQL arguments (Pothos's validation plugin) and the import
 * format all say it this way.
 */

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
