import { defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';

/**
 * Three projects, each run alone with `npm run test:<name>` and all three by `npm test`. Every project
 * builds the generated validators first when a fresh clone has none (test/support/compiled-schemas.ts).
 */

/**
 * The environment vitest was started with, before the integration project's global setup starts the local
 * stack in this process and sets the stack's variables here. The projects without the stack go back to it
 * (test/support/launch-environment.ts); their handlers log at warn and above, or what LOG_LEVEL says, as the
 * integration project's do (test/support/stack-env.ts).
 */
const launchEnvironment = {
  ...Object.fromEntries(
    Object.entries(process.env).filter((entry): entry is [string, string] => entry[1] !== undefined),
  ),
  LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
};

/** Setup of a project without the local stack. */
const withoutStack = { setupFiles: ['test/support/launch-environment.ts'], provide: { launchEnvironment } };

/** Modules on their own, no local stack: seconds. Mutation testing runs it too (vitest.unit.config.ts). */
export const unitProject = {
  test: {
    name: 'unit',
    include: ['test/unit/**/*.test.ts', 'lib/**/*.test.ts'],
    globalSetup: ['test/support/compiled-schemas.ts'],
    ...withoutStack,
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
          ...withoutStack,
        },
      },
    ],
  },
});
