import type { TestProject } from 'vitest/node';
import { dropTable, type LocalStack, startLocalStack } from '#local/stack';

let stack: LocalStack | undefined;
let ownTable: { endpoint: string; tableName: string } | undefined;

export const setup = async (project: TestProject) => {
  // Handlers run in this process; keep their info logs out of the test report (LOG_LEVEL=info shows them).
  process.env.LOG_LEVEL ??= 'warn';
  // In memory, on a free port: tests never touch a developer's .local/ state. DYNAMODB_ENDPOINT runs the
  // same tests against another DynamoDB (DynamoDB Local, a real table), in a table of their own.
  // The table is dropped at teardown, so repeated runs leave nothing behind on that DynamoDB.
  const dynamoEndpoint = process.env.DYNAMODB_ENDPOINT;
  if (dynamoEndpoint) ownTable = { endpoint: dynamoEndpoint, tableName: `service-review-test-${Date.now()}` };
  stack = await startLocalStack({
    port: 0,
    ...(ownTable ? { dynamoEndpoint: ownTable.endpoint, tableName: ownTable.tableName } : {}),
  });
  project.provide('baseUrl', stack.baseUrl);
  project.provide('stackEnv', stack.env);
};

export const teardown = async () => {
  await stack?.close();
  if (ownTable) await dropTable(ownTable.endpoint, ownTable.tableName);
};

declare module 'vitest' {
  export interface ProvidedContext {
    baseUrl: string;
    stackEnv: Record<string, string>;
  }
}
