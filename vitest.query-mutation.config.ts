import { defineConfig } from 'vitest/config';

/** The query language's mutation tests (stryker.query.config.mjs): test/query, in memory, no store. */
export default defineConfig({
  test: {
    include: ['test/query/**/*.test.ts'],
    testTimeout: 30_000,
    pool: 'forks',
  },
});
