import { inject } from 'vitest';

/**
 * Setup file of the projects that run without the local stack (unit, infra). In `npm test` the integration
 * project's global setup starts the stack in vitest's own process and sets its variables there
 * (AWS_LAMBDA_MAX_CONCURRENCY, LOG_LEVEL=debug, the emulators' endpoints, resource names); every worker forked
 * after that inherits them. Back to the environment vitest was started with (vitest.config.ts), so a unit test
 * sees the same variables in `npm test` as in `npm run test:unit`, and cannot lean on the stack's.
 */
const launch = inject('launchEnvironment');
for (const name of Object.keys(process.env)) if (!(name in launch)) delete process.env[name];
Object.assign(process.env, launch);

declare module 'vitest' {
  export interface ProvidedContext {
    /** vitest.config.ts: the variables vitest was started with, LOG_LEVEL as these projects log. */
    launchEnvironment: Record<string, string>;
  }
}
