import base from './stryker.config.mjs';

// The query language alone (npm run test:mutation:query): every file of src/query/, killed by its own tests — parse,
// compile, the operators against their reference, aggregate, projection — which run in memory in seconds (the
// gateway-level tests cover the same code at ~30 s a mutant). One file at a time on two cores, e.g.
//   npx stryker run stryker.query.config.mjs --mutate src/query/compare.ts --concurrency 1
export default {
  ...base,
  vitest: { configFile: 'vitest.query-mutation.config.ts' },
  mutate: ['src/query/**/*.ts'],
  htmlReporter: { fileName: 'reports/mutation/query.html' },
};
