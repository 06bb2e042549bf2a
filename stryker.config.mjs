// @ts-check
/**
 * Mutation testing of the core modules whose tests are unit tests (docs/mutation-testing.md): `npm run mutation`.
 * The modules that run only inside the local stack are in stryker.stack.config.mjs.
 *
 * @type {import('@stryker-mutator/api/core').PartialStrykerOptions}
 */
export default {
  testRunner: 'vitest',
  // The unit project (vitest.config.ts), without the local stack: the unit tests need none, and the vitest
  // runner activates a mutant in the test files' workers only, never in the stack's process where the handlers
  // run. The runner takes a config file, not a project: vitest.unit.config.ts holds the unit project alone.
  vitest: { configFile: 'vitest.unit.config.ts', related: true, pool: 'forks' },
  // Not `testFiles`: with it Stryker 10.1 activates a mutant of module-level code after the module has
  // loaded, so such mutants survive whatever the tests assert (stryker-js#6144). `related` narrows the run to
  // the unit tests that import the module instead, and per-test coverage to the tests that reach each mutant.
  coverageAnalysis: 'perTest',
  mutate: [
    'lib/validation/error-text.ts',
    'lib/http/conditional.ts',
    'lib/requests/merge-patch.ts',
    'lib/concurrency.ts',
    'lib/json/safe-json.ts',
    'lib/portal/run-credentials.ts',
    'lib/portal/drivers/registry.ts',
  ],
  // The machine is shared: two workers at most.
  concurrency: 2,
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: 'test/output/mutation/unit.html' },
  jsonReporter: { fileName: 'test/output/mutation/unit.json' },
  clearTextReporter: { allowColor: false, logTests: false, reportTests: false },
  thresholds: { high: 95, low: 90, break: 90 },
  // Copies of the project that have nothing to do with the tests.
  ignorePatterns: ['.local', 'cdk.out', 'bench/results', 'test/output', 'coverage'],
  // Apart from the stack's sandboxes (stryker.stack.config.mjs): each run deletes its own when it ends.
  tempDirName: '.stryker-tmp/unit',
};
