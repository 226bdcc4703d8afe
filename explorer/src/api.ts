import { DOCUMENT_HASHES } from './generated/documentHashes.ts';
import type { TypedDocumentString } from './generated/operations.ts';

/**
 * The explorer's one way to the gateway: a POST to its public /graphql endpoint with the
 * key as a bearer token, an operation typed by codegen, and the answer or an ApiError.
 */

/** What the gateway said went wrong, with the HTTP status and the error code it sent. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string | null,
  ) {
    super(message);
  }

  /** The key was refused: missing, unknown or revoked. */
  get isUnauthenticated(): boolean {
    return this.status === 401 || this.code === 'UNAUTHENTICATED';
  }
}

interface GraphqlAnswer<T> {
  data?: T | null;
  errors?: { message: string; extensions?: { code?: string } }[];
}

/**
 * Whether to send registered operations by hash (docs/OPERATIONS.md, "Trusted documents"): until the
 * gateway says it does not know one (TRUSTED_DOCUMENTS=off, or a gateway built from other
 * operations), then the text for the rest of the page's life.
 */
let sendHashes = true;

/**
 * How a request names its operation: by the SHA-256 of its text, registered when the
 * explorer was built (`extensions.persistedQuery`, which a gateway running registered
 * operations only accepts), or by its text.
 */
export function operationParams(document: {
  toString(): string;
  __meta__?: Record<string, unknown>;
}) {
  const text = document.toString();
  const name = (document.__meta__?.operationName as string | undefined) ?? operationName(text);
  const hash = name ? DOCUMENT_HASHES[name] : undefined;
  return sendHashes && hash
    ? { operationName: name, extensions: { persistedQuery: { version: 1, sha256Hash: hash } } }
    : { operationName: name, query: text };
}

export async function request<TResult, TVariables>(
  key: string,
  document: TypedDocumentString<TResult, TVariables>,
  variables: TVariables,
  signal?: AbortSignal,
): Promise<TResult> {
  // Header values are Latin-1; a key with other characters is no key (and would make
  // fetch throw as if the gateway were down).
  if (!/^[\x21-\x7e]+$/.test(key)) {
    throw new ApiError(
      'This is not an API key: it has spaces or characters keys never hold',
      401,
      'UNAUTHENTICATED',
    );
  }
  const params = operationParams(document);
  let response: Response;
  try {
    response = await fetch('/graphql', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/graphql-response+json, application/json',
        authorization: `Bearer ${key}`,
      },
      body: JSON.stringify({ ...params, variables }),
      signal: signal ?? null,
    });
  } catch (cause) {
    if (signal?.aborted) throw cause;
    throw new ApiError('The gateway cannot be reached. Is it running?', 0, 'NETWORK');
  }
  let answer: GraphqlAnswer<TResult>;
  try {
    answer = (await response.json()) as GraphqlAnswer<TResult>;
  } catch {
    throw new ApiError(
      `The gateway answered ${response.status} without JSON`,
      response.status,
      null,
    );
  }
  const first = answer.errors?.[0];
  if (first?.extensions?.code === 'PERSISTED_QUERY_NOT_FOUND' && !('query' in params)) {
    // The gateway does not know the explorer's operations by hash: the text, from now on.
    sendHashes = false;
    return request(key, document, variables, signal);
  }
  if (first || !answer.data) {
    throw new ApiError(
      first?.message ?? `The gateway answered ${response.status} without data`,
      response.status,
      first?.extensions?.code ?? null,
    );
  }
  return answer.data;
}

function operationName(text: string): string | undefined {
  return /\b(?:query|mutation|subscription)\s+(\w+)/.exec(text)?.[1];
}

const KEY_ITEM = 'memory-explorer.key';

/**
 * The key lives in the tab's session storage: typed in once per tab, gone when the tab
 * closes. On the embedded store, a page asked for through a loopback host carries the
 * development key (the same rule as GraphiQL's prefilled headers).
 */
export function storedKey(): string | null {
  const stored = sessionStorage.getItem(KEY_ITEM);
  // An empty item: the key was cleared in this tab, so the prefilled one is not reused.
  return stored === null ? prefilledKey() : stored || null;
}

export function storeKey(key: string | null): void {
  sessionStorage.setItem(KEY_ITEM, key ?? '');
}

/**
 * The id of the development key this page was handed (`mk_<id>_<secret>`), or null: the
 * page then cannot tell it from other keys.
 */
export function developmentKeyId(): string | null {
  return /^mk_([0-9a-f]{24})_/.exec(prefilledKey() ?? '')?.[1] ?? null;
}

function prefilledKey(): string | null {
  const element = document.getElementById('explorer-config');
  if (!element?.textContent) return null;
  try {
    const config = JSON.parse(element.textContent) as { developmentKey?: string | null };
    return config.developmentKey ?? null;
  } catch {
    return null;
  }
}
