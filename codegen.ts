/**
 * GraphQL Code Generator configuration, over the committed, sorted schema.graphql. Three
 * outputs, each from its own folders of `.graphql` operation documents (an output's
 * documents may use each other's fragments, never another output's):
 * - src/generated/operations.ts: typed document nodes for the REST adapters' operations
 *   (src/rest/*.graphql, run in-process with graphql-js / graphql-jit);
 * - test/generated/operations.ts: typed document nodes for the tests' operations
 *   (every `.graphql` file under test/), so adding a test operation changes no source file;
 * - explorer/src/generated/operations.ts: the memory explorer's operations as typed
 *   strings (`documentMode: 'string'`), so the browser bundle needs no GraphQL runtime.
 * `npm run codegen` (scripts/codegen.ts) writes all three with @graphql-codegen/core; a
 * test (test/graphql/generated.test.ts) fails when any committed output is stale.
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
      documentFolders: ['src'],
      plugins: ['typescript-operations', 'typed-document-node'],
      config: typesConfig,
    },
    'test/generated/operations.ts': {
      documentFolders: ['test'],
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
