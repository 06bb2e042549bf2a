import type { TestProject } from 'vitest/node';
import { type LocalStack, startLocalStack } from '#local/stack';

let stack: LocalStack | undefined;

export const setup = async (project: TestProject) => {
  // Handlers run in this process; keep their info logs out of the test report (LOG_LEVEL=info shows them).
  process.env.LOG_LEVEL ??= 'warn';
  // In memory, on a free port: tests never touch a developer's .local/ state. DYNAMODB_ENDPOINT runs the
  // same tests against another DynamoDB (DynamoDB Local, a real table), in a table of their own.
  const dynamoEndpoint = process.env.DYNAMODB_ENDPOINT;
  stack = await startLocalStack({
    port: 0,
    ...(dynamoEndpoint ? { dynamoEndpoint, tableName: `service-review-test-${Date.now()}` } : {}),
  });
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
