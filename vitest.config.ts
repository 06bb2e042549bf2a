import { defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';

/**
 * Three projects, each run alone with `npm run test:<name>` and all three by `npm test`. Every project
 * builds the generated validators first when a fresh clone has none (test/support/compiled-schemas.ts).
 */

/**
 * Handlers a test calls log at warn and above, or what LOG_LEVEL says: as the integration project's do
 * (test/support/stack-env.ts), whose handlers share the stack's process.
 */
const logLevel = { LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' };

/** Modules on their own, no local stack: seconds. Mutation testing runs it too (vitest.unit.config.ts). */
export const unitProject = {
  test: {
    name: 'unit',
    include: ['test/unit/**/*.test.ts', 'lib/**/*.test.ts'],
    globalSetup: ['test/support/compiled-schemas.ts'],
    env: logLevel,
  },
} satisfies TestProjectInlineConfiguration;

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ['default', './test/support/summary-reporter.ts'],
    projects: [
      unitProject,
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          // One local stack (embedded DynamoDB + S3 + gateway) serves every integration test over HTTP.
          globalSetup: ['test/support/compiled-schemas.ts', 'test/support/global-setup.ts'],
          setupFiles: ['test/support/stack-env.ts'],
        },
      },
      {
        // The CDK app synthesized in-process, bundling with esbuild: no stack.
        test: {
          name: 'infra',
          include: ['test/infra/**/*.test.ts'],
          globalSetup: ['test/support/compiled-schemas.ts'],
          env: logLevel,
        },
      },
    ],
  },
});
