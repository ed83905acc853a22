import { defineConfig } from 'vitest/config';

/** The executor's mutation tests (stryker.exec.config.mjs): test/exec and the column questions, in memory, no store. */
export default defineConfig({
  test: {
    include: ['test/exec/execute.test.ts', 'test/exec/execute-paths.test.ts', 'test/replica/column-questions.test.ts'],
    testTimeout: 30_000,
    pool: 'forks',
  },
});
