import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'lib/**/*.test.ts'],
    // One local stack (embedded DynamoDB + S3 + gateway) serves every integration test over HTTP.
    globalSetup: ['test/support/global-setup.ts'],
    setupFiles: ['test/support/stack-env.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ['default', './test/support/summary-reporter.ts'],
  },
});
