import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);

export default defineConfig({
  resolve: {
    // One copy of graphql: Node (and so Yoga and Pothos) loads its CommonJS build, and
    // Vite would otherwise give the project's files the ESM build, two sets of classes.
    alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }],
  },
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/setup/database.ts'],
    // FerretDB's first build can take minutes; a test run reuses the cached build.
    hookTimeout: 600_000,
    testTimeout: 60_000,
    reporters: process.env.CI
      ? ['default', ['json', { outputFile: '.vitest-report.json' }]]
      : ['default'],
  },
});
