import { defineConfig } from 'vitest/config';

/**
 * The unit tests alone, without the local stack (vitest.config.ts starts it for every run): what mutation
 * testing runs (stryker.config.mjs), once for the baseline and again for every mutant. Only files that need
 * nothing from the stack: function-bundles.test.ts and xray-tracer.test.ts read the stack's environment.
 */
export default defineConfig({
  test: {
    include: ['test/unit/**/*.test.ts', 'lib/**/*.test.ts'],
    exclude: ['test/unit/function-bundles.test.ts', 'test/unit/xray-tracer.test.ts'],
  },
});
