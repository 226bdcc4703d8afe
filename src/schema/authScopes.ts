import type { AuthFailure, ForbiddenResult } from '@pothos/plugin-scope-auth';
import type { GraphQLResolveInfo } from 'graphql';
import type { RequestContext } from '../context.js';
import { GatewayError } from '../errors.js';

/**
 * Authorization, declared on the schema and nowhere else (@pothos/plugin-scope-auth):
 *
 * - every object type declares `authScopes` at the type level; the types that hold
 *   workspace data (Dataset, Fact, Entity, Episode, Memory) need `read`, so every path to
 *   them (root field, `node(id:)`, a nested field, a mutation's payload) meets one rule;
 *   types that only carry a result's shape (connections, payloads, counts, Viewer) need a
 *   valid key (`authenticated`);
 * - every Query and Mutation field declares the scope it needs (`read`, `write`, `admin`);
 * - a field that skips its type's rule (`skipTypeScopes`) declares its own: that is how a
 *   write-only pipeline key reads back the ids and versions its mutations return.
 *
 * test/graphql/authorization.test.ts walks the built schema and fails on a type or field
 * without a rule. A request without a key never reaches execution (401 at the edge).
 */

/** The scopes of the request's key, computed once per request by the plugin. */
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

/** The scopes a failed check wanted, for the message ("read", "write or admin"). */
function wanted(failure: AuthFailure): string[] {
  switch (failure.kind) {
    case 'AuthScope':
      return [failure.scope];
    case 'AnyAuthScopes':
    case 'AllAuthScopes':
      return failure.failures.flatMap(wanted);
    default:
      return [];
  }
}

/** Every refusal is one FORBIDDEN error on the field, naming the scope it needs. */
export function forbidden(info: GraphQLResolveInfo, result: ForbiddenResult): GatewayError {
  const scopes = [...new Set(wanted(result.failure))].filter((s) => s !== 'authenticated');
  // A root field is the operation itself (and the REST routes' message); a nested field
  // is named, so a client sees which part of its selection the key may not read.
  const root = info.parentType.name === 'Query' || info.parentType.name === 'Mutation';
  const where = root ? 'This operation' : `${info.parentType.name}.${info.fieldName}`;
  return new GatewayError(
    'FORBIDDEN',
    scopes.length > 0
      ? `${where} needs the ${scopes.map((s) => `"${s}"`).join(' or ')} scope`
      : `${where} is not available to this key`,
  );
}
