// Mutation testing (npm run test:mutation; not in CI: too slow on two cores). The modules where a silent change costs
// most; the store on SQLite only (vitest.mutation.config.ts sets TEST_SQLITE_ONLY). One module at a time:
//   npx stryker run --mutate 'src/translate/**/*.ts'
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutation.config.ts' },
  mutate: ['src/auth/**/*.ts', 'src/query/**/*.ts', 'src/translate/**/*.ts', 'src/write/**/*.ts', 'src/store/**/*.ts'],
  coverageAnalysis: 'perTest',
  concurrency: 2,
  timeoutMS: 20000,
  reporters: ['clear-text', 'progress', 'html'],
  htmlReporter: { fileName: 'reports/mutation/index.html' },
  thresholds: { high: 90, low: 80, break: null },
  tempDirName: '.stryker-tmp',
  ignoreStatic: true,
};
