/**
 * GraphQL Code Generator configuration, over the committed, sorted schema.graphql. Two
 * outputs, each from its own folders of `.graphql` operation documents:
 * - src/generated/operations.ts: typed document nodes for the tests' operations and the
 *   REST adapters' (run in-process with graphql-js / graphql-jit);
 * - explorer/src/generated/operations.ts: the memory explorer's operations as typed
 *   strings (`documentMode: 'string'`), so the browser bundle needs no GraphQL runtime.
 * `npm run codegen` (scripts/codegen.ts) writes both with @graphql-codegen/core; a test
 * fails when either committed output is stale.
 */
export interface CodegenOutput {
  /** Folders searched (recursively) for `.graphql` operation documents. */
  documentFolders: string[];
  plugins: string[];
  config: Record<string, unknown>;
}

export interface CodegenConfig {
  schema: string;
  generates: Record<string, CodegenOutput>;
}

const typesConfig = {
  useTypeImports: true,
  enumsAsTypes: true,
  scalars: {
    DateTime: { input: 'string', output: 'string' },
    ID: { input: 'string', output: 'string' },
  },
  avoidOptionals: { field: true, inputValue: false, object: true, defaultValue: false },
};

const config: CodegenConfig = {
  schema: 'schema.graphql',
  generates: {
    'src/generated/operations.ts': {
      documentFolders: ['src', 'test'],
      plugins: ['typescript-operations', 'typed-document-node'],
      config: typesConfig,
    },
    'explorer/src/generated/operations.ts': {
      documentFolders: ['explorer/src'],
      plugins: ['typescript-operations', 'typed-document-node'],
      config: { ...typesConfig, documentMode: 'string' },
    },
  },
};

export default config;
