import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { print } from 'graphql';
import type { MongoClientOptions } from 'mongodb';
import type { Clock } from '../../src/clock.js';
import { loadDemoDataset } from '../../src/demo/seed.js';
import type { Scope } from '../../src/domain/apiKey.js';
import { createGateway, type GatewayOptions } from '../../src/http/app.js';
import type { Database } from '../../src/store/database.js';
import { createApiKey } from '../../src/store/workspaces.js';
import { openTestDatabase } from './database.js';

type Gateway = ReturnType<typeof createGateway>;

/**
 * A clock that starts at `start` and moves with real time: for tests whose expectations
 * depend on "now" (which demo facts are live), so they hold on any date the suite runs.
 */
export function clockFrom(start: string): Clock {
  const offset = Date.parse(start) - Date.now();
  return () => new Date(Date.now() + offset);
}

export interface TestGateway {
  database: Database;
  gateway: Gateway;
  /** A key for the workspace, with the given scopes (default read, write, admin). */
  key(workspace: string, scopes?: Scope[]): Promise<string>;
  /** Runs a typed GraphQL operation in-process through `yoga.fetch`. */
  graphql<TResult, TVariables>(
    document: TypedDocumentNode<TResult, TVariables>,
    variables: TVariables,
    key: string | null,
  ): Promise<{ status: number; body: { data?: TResult | null; errors?: GraphqlError[] } }>;
  /** Runs a GraphQL query written as text, in-process, as a client that sends text does. */
  graphqlText(
    query: string,
    variables: Record<string, unknown>,
    key: string | null,
  ): Promise<{
    status: number;
    // biome-ignore lint/suspicious/noExplicitAny: an answer of any shape, as a test reads it
    body: { data?: any; errors?: GraphqlError[] };
  }>;
  /** An HTTP request in-process through the gateway's fetch. */
  request(path: string, init?: RequestInit & { key?: string | null }): Promise<Response>;
}

export interface GraphqlError {
  message: string;
  path?: (string | number)[];
  extensions?: { code?: string; [k: string]: unknown };
}

/**
 * A gateway over a fresh test database, driven in-process (no listener). The demo
 * dataset is loaded into the given workspaces.
 */
export async function openTestGateway(
  options: {
    demoWorkspaces?: string[];
    clientOptions?: MongoClientOptions;
    gateway?: Partial<GatewayOptions>;
  } = {},
): Promise<TestGateway> {
  const database = await openTestDatabase(options.clientOptions);
  for (const w of options.demoWorkspaces ?? ['acme'])
    await loadDemoDataset(database.collections, w, new Date());
  // Key use is written only when a test asks (flushKeyUse): a write at a moment of the
  // timer's choosing would land in the commands a test counts.
  const gateway = createGateway({ database, keyUseFlushMs: 0, ...options.gateway });
  const request = async (path: string, init: RequestInit & { key?: string | null } = {}) => {
    const headers = new Headers(init.headers);
    if (init.key) headers.set('authorization', `Bearer ${init.key}`);
    return gateway.fetch(new Request(`http://gateway.test${path}`, { ...init, headers }));
  };
  const graphqlText = async (query: string, variables: object, key: string | null) => {
    const response = await request('/graphql', {
      method: 'POST',
      key,
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ query, variables }),
    });
    return { status: response.status, body: await response.json() };
  };
  return {
    database,
    gateway,
    key: async (workspace, scopes = ['read', 'write', 'admin']) =>
      (await createApiKey(database.collections, workspace, scopes)).key,
    graphql: (document, variables, key) => graphqlText(print(document), variables as object, key),
    graphqlText,
    request,
  };
}
