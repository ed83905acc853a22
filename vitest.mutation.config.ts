import { defineConfig } from 'vitest/config';

// read by the global setup (no PostgreSQL) and the database helper (SQLite only), in this process and the workers
process.env.TEST_SQLITE_ONLY = '1';

/** The suite's part that covers the mutated modules, on SQLite only (no PostgreSQL server is started). */
export default defineConfig({
  test: {
    include: [
      'test/auth/**/*.test.ts', 'test/query/**/*.test.ts', 'test/translate/**/*.test.ts', 'test/write/**/*.test.ts', 'test/store/**/*.test.ts',
      'test/exec/**/*.test.ts', 'test/plan/**/*.test.ts',
    ],
    exclude: ['test/store/instances.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    env: { TEST_SQLITE_ONLY: '1' },
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
