import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);

// One copy of graphql: Node (and so Yoga and Pothos) loads its CommonJS build, and Vite
// would otherwise give the project's files the ESM build, two sets of classes.
const resolve = { alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }] };

export default defineConfig({
  resolve,
  test: {
    // Runs once for the whole run (both projects below see what it provides).
    globalSetup: ['test/setup/database.ts', 'test/setup/explorer.ts', 'test/setup/model.ts'],
    reporters: process.env.CI
      ? ['default', ['json', { outputFile: '.vitest-report.json' }]]
      : ['default'],
    projects: [
      {
        resolve,
        test: {
          name: 'suite',
          include: ['test/**/*.test.ts'],
          setupFiles: ['test/setup/clock.ts', 'test/setup/recordStoreCommands.ts'],
          // FerretDB's first build can take minutes; a test run reuses the cached build.
          hookTimeout: 600_000,
          testTimeout: 60_000,
          // expect.poll waits for a condition (a page rendered, a key refused); its deadline
          // only ends a wait that will not succeed. Vitest's default, 1 s, is a speed a
          // loaded machine misses, a browser page's step most of all.
          expect: { poll: { timeout: 30_000 } },
          sequence: { groupOrder: 0 },
        },
      },
      {
        // After the suite: every store command it recorded must be served by an index.
        resolve,
        test: {
          name: 'indexes',
          include: ['test/indexes/*.check.ts'],
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
