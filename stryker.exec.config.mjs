import base from './stryker.config.mjs';

// The executor alone (npm run test:mutation:exec, ~5 min at concurrency 2): its own tests and the column questions, which
// cover every path of src/exec/execute.ts and best.ts in seconds (the gateway-level tests cover them too, at ~30 s a mutant).
export default {
  ...base,
  vitest: { configFile: 'vitest.exec-mutation.config.ts' },
  mutate: ['src/exec/execute.ts', 'src/exec/best.ts'],
  htmlReporter: { fileName: 'reports/mutation/exec.html' },
};
