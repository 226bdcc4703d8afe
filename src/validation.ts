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
