// Mutation testing (npm run test:mutation; not in CI: too slow on two cores). The modules where a silent change costs
// most: the query compiler, the executor (src/exec, and src/plan while it moves there), the recency rule (now
// src/store/recency.ts), the translators, writes, auth and the store; the store on SQLite only
// (vitest.mutation.config.ts sets TEST_SQLITE_ONLY). A run under 85 % fails. One module at a time:
//   npx stryker run --mutate src/query/compile.ts --concurrency 1
// Scores and the survivors left: docs/benchmarks.md, "Mutation testing".
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutation.config.ts' },
  mutate: [
    'src/auth/**/*.ts', 'src/query/**/*.ts', 'src/translate/**/*.ts', 'src/write/**/*.ts', 'src/store/**/*.ts',
    'src/exec/**/*.ts', 'src/plan/**/*.ts',
  ],
  coverageAnalysis: 'perTest',
  concurrency: 2,
  timeoutMS: 20000,
  reporters: ['clear-text', 'progress', 'html'],
  htmlReporter: { fileName: 'reports/mutation/index.html' },
  thresholds: { high: 90, low: 80, break: 85 },
  tempDirName: '.stryker-tmp',
  ignoreStatic: true,
};
