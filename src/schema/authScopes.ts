import type { RequestContext } from '../context.js';

/**
 * Authorization, declared on the schema and nowhere else (@pothos/plugin-scope-auth):
 *
 * - every object type declares `authScopes` at the type level; the types that hold
 *   workspace data (Dataset, Fact, Entity, Episode, Memory) need `read`, so every path to
 *   them (root field, `node(id:)`, a nested field, a mutation's payload) meets one rule;
 *   types that only carry a result's shape (connections, payloads, counts, Viewer) need a
 *   valid key (`authenticated`);
 * - every Query and Mutation field declares the scope it needs (`read`, `write`, `admin`)
 *   with `t.withAuth({ read: true })`: its resolver then gets Pothos's AuthContexts
 *   context (`AuthenticatedContext`), `ctx.auth` typed and present, and has no auth line
 *   of its own; a nested field acts for the workspace its parent was read for
 *   (store/tenant.ts `tenantOfDataset`, `tenantOfDocument`);
 * - a field that skips its type's rule (`skipTypeScopes`) declares its own: that is how a
 *   write-only pipeline key reads back the ids and versions its mutations return.
 *
 * The rules are checked before execution, for the whole operation
 * (src/schema/operationScopes.ts): a key that may not run every field it selects is
 * refused whole (FORBIDDEN, naming the fields), and nothing runs.
 * test/graphql/authorization.test.ts walks the built schema and fails on a type or field
 * without a rule. A request without a key never reaches execution (401 at the edge).
 */

/** The scopes of the request's key, as the rules name them. */
export function scopesOf(ctx: RequestContext) {
  const scopes = ctx.auth?.scopes ?? [];
  return {
    authenticated: ctx.auth !== null,
    read: scopes.includes('read'),
    write: scopes.includes('write'),
    admin: scopes.includes('admin'),
  };
}

/** A field that a key without `read` may see: an id or a version a mutation hands back. */
export const READABLE_WITHOUT_READ = {
  skipTypeScopes: true,
  authScopes: { authenticated: true },
} as const;
