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
  let response: Response;
  try {
    response = await fetch('/graphql', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/graphql-response+json, application/json',
        authorization: `Bearer ${key}`,
      },
      body: JSON.stringify({
        query: document.toString(),
        operationName: document.__meta__?.operationName ?? operationName(document.toString()),
        variables,
      }),
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
  return /\b(?:query|mutation)\s+(\w+)/.exec(text)?.[1];
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
