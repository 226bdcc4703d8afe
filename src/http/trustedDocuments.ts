import { usePersistedOperations } from '@graphql-yoga/plugin-persisted-operations';
import type { GraphQLParams, Plugin } from 'graphql-yoga';
import type { TrustedDocumentMode } from '../config.js';
import type { RequestContext } from '../context.js';
import { GatewayError } from '../errors.js';
import { TRUSTED_DOCUMENTS } from '../generated/trustedDocuments.js';

/**
 * Trusted documents (docs/OPERATIONS.md, "Trusted documents"): the operations the explorer and the REST
 * adapters send are registered at build time (`npm run codegen` writes
 * src/generated/trustedDocuments.ts: the SHA-256 of each text → the text), and a request
 * may send that hash instead of the text: Apollo's `extensions.persistedQuery`
 * (`{ version: 1, sha256Hash }`) or GraphQL over HTTP's `documentId` (`sha256:<hex>`, or
 * the hex alone). TRUSTED_DOCUMENTS says what else runs:
 * - `off`: nothing is registered: every hash is unknown, text runs (the gateway before);
 * - `also` (default): registered hashes and text both run;
 * - `only`: registered hashes only; text is refused before anything runs, except from a
 *   key with the `admin` scope (the developers' and operators' keys: GraphiQL, scripts),
 *   which may still explore.
 * An unknown hash answers the protocol's "not found" (`PersistedQueryNotFound`,
 * PERSISTED_QUERY_NOT_FOUND) in every mode, so a client falls back to sending the text.
 */
const HASH = /^(?:sha256:)?([0-9a-f]{64})$/;

/** The hash a request names, in either protocol's form, or null. */
function documentHash(params: GraphQLParams & { documentId?: unknown }): string | null {
  const apollo = (
    params.extensions as
      | { persistedQuery?: { version?: unknown; sha256Hash?: unknown } }
      | undefined
  )?.persistedQuery;
  const named =
    apollo && apollo.version === 1 && typeof apollo.sha256Hash === 'string'
      ? apollo.sha256Hash
      : typeof params.documentId === 'string'
        ? params.documentId
        : null;
  return named === null ? null : (HASH.exec(named.toLowerCase())?.[1] ?? named);
}

/** Text, in `only` mode, from a key that may not send it: refused before it is parsed. */
function textOnlyFromDevelopers(): Plugin<RequestContext> {
  return {
    onParams({ params, context }) {
      if (!params.query) return;
      if ((context as Partial<RequestContext>).auth?.scopes.includes('admin')) return;
      throw new GatewayError(
        'PERSISTED_QUERY_ONLY',
        'This gateway runs registered operations only (TRUSTED_DOCUMENTS=only): send the hash of a registered document (extensions.persistedQuery or documentId), not its text; keys with the admin scope may send text',
        undefined,
        'request',
      );
    },
  };
}

/** The Yoga plugins of a mode: resolving hashes (every mode), refusing text (`only`). */
export function trustedDocumentPlugins(mode: TrustedDocumentMode): Plugin<RequestContext>[] {
  const registered = mode === 'off' ? {} : TRUSTED_DOCUMENTS;
  return [
    ...(mode === 'only' ? [textOnlyFromDevelopers()] : []),
    usePersistedOperations<RequestContext>({
      // Text is the policy's business (above), not the plugin's.
      allowArbitraryOperations: true,
      extractPersistedOperationId: (params) => documentHash(params),
      getPersistedOperation: (hash) => registered[hash] ?? null,
      customErrors: {
        notFound: {
          message: 'PersistedQueryNotFound',
          extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' },
        },
        keyNotFound: {
          message:
            'Send a query, or the hash of a registered document (extensions.persistedQuery or documentId)',
          extensions: { code: 'BAD_REQUEST', http: { status: 400 } },
        },
      },
    }),
  ];
}
