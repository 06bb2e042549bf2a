import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { sandboxSeed } from '#local/sandbox-portal/seed';
import { type LocalStack, startLocalStack } from '#local/stack';
import { dropTable } from '#local/table';
import { SUITE_CLIENT_LIMITS } from './limits.ts';
import { TEST_PORTAL_USERS } from './portal-users.ts';

let stack: LocalStack | undefined;
let ownTable: { endpoint: string; tableName: string } | undefined;
let stopCapture: (() => void) | undefined;

/** Seconds a browser task of the test stack may take: a portal that never answers ends the run after this. */
const TASK_TIMEOUT_SECONDS = 25;

const LEVELS: Record<string, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/**
 * Tees everything this process writes to `file`: the handlers' logs at every level, the emulators' and the
 * local Step Functions' errors, and the test files' output that vitest relays. The end-to-end tests scan it
 * for secrets. Handler log lines below `reportLevel` stay out of the report, as before. Returns the undo.
 */
const captureOutput = (file: string, reportLevel: string) => {
  const threshold = LEVELS[reportLevel.toLowerCase()] ?? LEVELS.info!;
  const undo = [process.stdout, process.stderr].map((stream) => {
    const write = stream.write;
    stream.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      try {
        appendFileSync(file, chunk);
      } catch {
        // The report matters more than the copy.
      }
      const level = typeof chunk === 'string' ? /^\{"level":"(\w+)"/.exec(chunk)?.[1] : undefined;
      if (level && (LEVELS[level] ?? threshold) < threshold) {
        (rest.find((arg) => typeof arg === 'function') as (() => void) | undefined)?.();
        return true;
      }
      return (write as (...args: unknown[]) => boolean).call(stream, chunk, ...rest);
    }) as typeof stream.write;
    return () => {
      stream.write = write;
    };
  });
  return () => {
    for (const restore of undo) restore();
  };
};

export const setup = async (project: TestProject) => {
  // Handlers run in this process and log at every level into the captured output; the report (and the test
  // files' own processes, test/support/stack-env.ts) show warn and above, or what LOG_LEVEL says.
  const reportLevel = process.env.LOG_LEVEL ?? 'warn';
  process.env.LOG_LEVEL = 'debug';
  // In memory, on a free port: tests never touch a developer's .local/ state. DYNAMODB_ENDPOINT runs the
  // same tests against another DynamoDB (DynamoDB Local, a real table), in a table of their own.
  // The table is dropped at teardown, so repeated runs leave nothing behind on that DynamoDB.
  const dynamoEndpoint = process.env.DYNAMODB_ENDPOINT;
  // The tests revoke keys, expire them and change their scope, and expect the next request to see it:
  // the shared stack's gateway asks the authorizer every time (authorizer-cache.test.ts covers the cache).
  process.env.LOCAL_AUTHORIZER_CACHE_TTL = '0';
  // The functions held to table partitions on AWS are held to them here too (local/table-grants.ts): a store call
  // their grants miss fails a test rather than a deployment. LOCAL_TABLE_GRANTS=off runs the suite without.
  process.env.LOCAL_TABLE_GRANTS ??= 'enforce';
  if (dynamoEndpoint) ownTable = { endpoint: dynamoEndpoint, tableName: `service-review-test-${Date.now()}` };
  stack = await startLocalStack({
    port: 0,
    ...(ownTable ? { dynamoEndpoint: ownTable.endpoint, tableName: ownTable.tableName } : {}),
    // The suite's default clients send far more than the deployed default allows a client (limits.ts).
    defaultLimits: SUITE_CLIENT_LIMITS,
    sandboxPortal: { seed: { ...sandboxSeed, users: [...sandboxSeed.users, ...Object.values(TEST_PORTAL_USERS)] } },
    // The end-to-end tests wait for a portal that never answers (SBX-99999): its task times out after this
    // rather than after 120 s. Every other browser task of these tests takes a few seconds.
    stepFunctions: { definitionOptions: { taskTimeoutSeconds: TASK_TIMEOUT_SECONDS } },
  });
  const outputFile = join(stack.env.LOCAL_STATE_DIR!, 'output.log');
  stopCapture = captureOutput(outputFile, reportLevel);
  project.provide('baseUrl', stack.baseUrl);
  project.provide('stackEnv', stack.env);
  project.provide('stackOutputFile', outputFile);
  project.provide('logLevel', reportLevel);
  project.provide('taskTimeoutSeconds', TASK_TIMEOUT_SECONDS);
};

export const teardown = async () => {
  // The captured output lives in the stack's scratch directory, which closing it removes.
  stopCapture?.();
  await stack?.close();
  if (ownTable) await dropTable(ownTable.endpoint, ownTable.tableName);
};

declare module 'vitest' {
  export interface ProvidedContext {
    baseUrl: string;
    stackEnv: Record<string, string>;
    /** Everything the stack's process wrote (its handlers' logs at every level): for the secrets scans. */
    stackOutputFile: string;
    /** The level the test files' own processes log at. */
    logLevel: string;
    /** The local Step Functions' Task timeout. */
    taskTimeoutSeconds: number;
  }
}
