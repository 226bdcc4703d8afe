import type { CodegenConfig } from '@graphql-codegen/cli';

/**
 * GraphQL Code Generator: typed documents for every operation in the repository (the
 * tests' operations, and the REST adapters'), over the committed, sorted schema.graphql.
 * `npm run codegen` writes src/generated/operations.ts; a test fails when it is stale.
 */
const config: CodegenConfig = {
  schema: 'schema.graphql',
  documents: ['test/**/*.graphql', 'src/**/*.graphql'],
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
