import type { TestProject } from 'vitest/node';
import { type LocalStack, startLocalStack } from '#local/stack';

let stack: LocalStack | undefined;

export const setup = async (project: TestProject) => {
  // Handlers run in this process; keep their info logs out of the test report (LOG_LEVEL=info shows them).
  process.env.LOG_LEVEL ??= 'warn';
  // In memory, on a free port: tests never touch a developer's .local/ state.
  stack = await startLocalStack({ port: 0 });
  project.provide('baseUrl', stack.baseUrl);
  project.provide('stackEnv', stack.env);
};

export const teardown = async () => {
  await stack?.close();
};

declare module 'vitest' {
  export interface ProvidedContext {
    baseUrl: string;
    stackEnv: Record<string, string>;
  }
}
