import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/setup/database.ts'],
    // FerretDB's first build can take minutes; a test run reuses the cached build.
    hookTimeout: 600_000,
    testTimeout: 60_000,
    reporters: process.env.CI ? ['default', ['json', { outputFile: '.vitest-report.json' }]] : ['default'],
  },
});
