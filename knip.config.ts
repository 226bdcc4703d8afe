import type { KnipConfig } from 'knip';

/**
 * Unused files, dependencies and exports. The plain run (`knip`) reports an export that
 * nothing outside its file uses; the production run (`knip --production`) reports one that
 * only tests use, where an export the file itself also uses is fine.
 */
const production = process.argv.includes('--production');

const config: KnipConfig = {
  entry: [
    'src/main.ts!',
    'src/cli/*.ts!',
    'scripts/*.ts',
    'bench/*.ts',
    'test/**/*.test.ts',
    'test/**/*.check.ts',
    'test/setup/*.ts',
    'explorer/src/main.tsx!',
  ],
  project: [
    'src/**/*.ts!',
    'explorer/src/**/*.{ts,tsx}!',
    'test/**/*.ts',
    'bench/**/*.ts',
    'scripts/**/*.ts',
  ],
  ignoreExportsUsedInFile: production,
  ignoreDependencies: ['swagger-ui-dist', '@types/swagger-ui-dist', '@graphql-codegen/typescript'],
  ignoreBinaries: ['go'],
};

export default config;
