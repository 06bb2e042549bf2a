import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { RpaRunRecord } from '#lib/entities/rpa';
import { type LocalStack, startLocalStack } from '#local/stack';
import { dropTable } from '#local/table';
import { rpaOf } from './rpa-support.ts';

/*
 * An execution that times out as a whole ends its runs in the table, with nobody reading them: a
 * local stack of this file's own (in this process) whose executions time out after 4 s, whose
 * sandbox portal never answers a login, and whose browser function runs one invocation at a time
 * (its reserved concurrency on AWS). The first run's worker waits on the portal; the second never
 * gets a worker (throttled, retried). Both executions time out, and the stand-in hands their end to
 * RecordExecutionEnded, as EventBridge would.
 */
const stateDir = mkdtempSync(join(tmpdir(), 'execution-timeout-'));
const tableName = `execution-timeout-test-${Date.now()}-${process.pid}`;
const demoKey = 'srk_executionTimeoutTestKey_0123456789abcdefghi';
let stack: LocalStack;
let runStore: typeof import('#lib/runs/dynamo-run-store').dynamoRunStore;
let demo: { clientId: string };

beforeAll(async () => {
  stack = await startLocalStack({
    port: 0,
    stateDir,
    ...(process.env.DYNAMODB_ENDPOINT ? { dynamoEndpoint: process.env.DYNAMODB_ENDPOINT, tableName } : {}),
    sandboxPortal: { hangPaths: ['/login'] },
    stepFunctions: { definitionOptions: { executionTimeoutSeconds: 4 }, browserConcurrency: 1 },
  });
  // Modules with SDK clients only now, with this stack's endpoints in the environment.
  const { seedDemo } = await import('#local/seed');
  demo = await seedDemo(stateDir, { DEMO_API_KEY: demoKey, DEMO_CLIENT_USER_ID: 'front-desk' });
  ({ dynamoRunStore: runStore } = await import('#lib/runs/dynamo-run-store'));
}, 60_000);
afterAll(async () => {
  await stack?.close();
  if (process.env.DYNAMODB_ENDPOINT) await dropTable(process.env.DYNAMODB_ENDPOINT, tableName);
  rmSync(stateDir, { recursive: true, force: true });
});

const api = (method: string, path: string, body?: unknown) =>
  fetch(`${stack.baseUrl}${path}`, {
    method,
    headers: { 'x-api-key': demoKey, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });

const ended = (run: RpaRunRecord | undefined) => run?.status === 'succeeded' || run?.status === 'failed';

it('ends its runs execution_timed_out in the table, the one that never got a worker too', async () => {
  const runs: Array<{ externalId: string; runId: string }> = [];
  for (const externalId of ['DEMO-APPROVED', 'DEMO-DENIED']) {
    const res = await api('POST', `${rpaOf(externalId)}/view-on-page`, { clientUserId: 'front-desk' });
    expect(res.status, await res.clone().text()).toBe(202);
    runs.push({ externalId, runId: ((await res.json()) as { runId: string }).runId });
  }
  const refs = runs.map((run) => ({ clientId: demo.clientId, ...run }));
  let stored: Array<RpaRunRecord | undefined> = [];
  for (const deadline = Date.now() + 30_000; Date.now() < deadline; ) {
    stored = await Promise.all(refs.map((ref) => runStore.getRun(ref)));
    if (stored.every(ended)) break;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const [waitedOnPortal, neverStarted] = stored;
  for (const run of stored) expect(run).toMatchObject({ status: 'failed', outcome: 'execution_timed_out' });
  expect(waitedOnPortal!.steps.map((step) => step.step)).toContain('started');
  expect(neverStarted!.steps.map((step) => step.step)).not.toContain('started');
  expect(neverStarted!.steps.at(-1)).toMatchObject({ detail: 'execution_timed_out' });
  // The API reads what the table holds.
  for (const { externalId, runId } of runs) {
    const res = await api('GET', `${rpaOf(externalId)}/runs/${runId}`);
    expect(await res.json()).toMatchObject({ runId, status: 'failed', outcome: 'execution_timed_out' });
  }
}, 60_000);
