// @ts-check
/**
 * Mutation testing of the core modules that run only inside the local stack (docs/mutation-testing.md):
 * organization scope, reached through the gateway's handlers, and origin pinning, in a real Chromium (the
 * browser worker runs it in the stack too; its own tests drive it directly).
 * The vitest runner cannot serve them: it activates a mutant in the test files' workers, never in the
 * process where the stack's handlers run. The command runner sets the mutant in the environment of a whole
 * `vitest run` instead, so the stack (the integration project's globalSetup) starts with it: slow, one process a
 * mutant, hence only these two files and their own integration tests.
 *
 * @type {import('@stryker-mutator/api/core').PartialStrykerOptions}
 */
export default {
  testRunner: 'command',
  commandRunner: {
    command:
      'npx vitest run --project integration --bail 1 test/integration/organization-scope.test.ts test/integration/rpa-origin-pinning.test.ts test/integration/rpa-portal-context.test.ts',
  },
  mutate: ['lib/tenancy/scope.ts', 'lib/portal/drivers/portal-context.ts'],
  // One stack and one Chromium at a time on a shared machine.
  concurrency: 1,
  // A run takes 20 to 40 s depending on the machine's load; only a hang should count as a timeout.
  timeoutMS: 60_000,
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: 'test/output/mutation/stack.html' },
  jsonReporter: { fileName: 'test/output/mutation/stack.json' },
  clearTextReporter: { allowColor: false, logTests: false, reportTests: false },
  thresholds: { high: 95, low: 90, break: 90 },
  ignorePatterns: ['.local', 'cdk.out', 'bench/results', 'test/output', 'coverage'],
  tempDirName: '.stryker-tmp/stack',
};
