/**
 * GraphQL Code Generator configuration: typed documents for every operation in the
 * repository (the tests' operations and the REST adapters'), over the committed, sorted
 * schema.graphql. `npm run codegen` (scripts/codegen.ts) writes the output with
 * @graphql-codegen/core; a test fails when the committed output is stale.
 */
export interface CodegenConfig {
  schema: string;
  /** Folders searched (recursively) for `.graphql` operation documents. */
  documentFolders: string[];
  generates: Record<string, { plugins: string[]; config: Record<string, unknown> }>;
}

const config: CodegenConfig = {
  schema: 'schema.graphql',
  documentFolders: ['src', 'test'],
  generates: {
    'src/generated/operations.ts': {
      plugins: ['typescript-operations', 'typed-document-node'],
      config: {
        useTypeImports: true,
        enumsAsTypes: true,
        scalars: {
          DateTime: { input: 'string', output: 'string' },
          ID: { input: 'string', output: 'string' },
        },
        avoidOptionals: { field: true, inputValue: false, object: true, defaultValue: false },
      },
    },
  },
};

export default config;
