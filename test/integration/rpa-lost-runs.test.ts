import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, afterEach, expect, it } from 'vitest';
import { rpaRunEntity } from '#lib/entities/rpa';
import { DEMO_CLIENT_ID } from '#local/seed';
import { dropTable } from '#local/table';
import { localStartProcess } from '#test/support/local-start-process';
import { batchPath, rpaOf } from './rpa-support.ts';

/*
 * Runs left hanging when the local stack stops under them: start 5 view-on-page runs on `npm start` (its own
 * process and state directory, the demo tenant and portal account), close the stack 2.5 s later as
 * Ctrl-C does, start it again. The local Step Functions kept its executions in memory, so they are
 * gone: every run is failed `execution_lost` in the table as the stack starts, before anyone reads
 * it, and reads so through the API.
 */
const stateDir = mkdtempSync(join(tmpdir(), 'lost-runs-'));
const tableName = `lost-runs-test-${Date.now()}-${process.pid}`;
const demoKey = 'srk_lostRunsTestDemoKey_0123456789abcdefghijkl';
const DEMO_REQUESTS = ['DEMO-APPROVED', 'DEMO-DENIED', 'DEMO-PENDED', 'DEMO-UNKNOWN', 'DEMO-APPROVED'];
const local = localStartProcess({ stateDir, demoKey, tableName });
const { stop } = local;

/** Up, with the stack's base URL and environment as it wrote them to stack.json. */
const start = async () => {
  await local.start();
  const { baseUrl, env } = JSON.parse(readFileSync(join(stateDir, 'stack.json'), 'utf8')) as {
    baseUrl: string;
    env: Record<string, string>;
  };
  return { baseUrl, env };
};

afterEach(stop);
afterAll(async () => {
  if (process.env.DYNAMODB_ENDPOINT) await dropTable(process.env.DYNAMODB_ENDPOINT, tableName);
  rmSync(stateDir, { recursive: true, force: true });
});

const api = (baseUrl: string, method: string, path: string, body?: unknown) =>
  fetch(`${baseUrl}${path}`, {
    method,
    headers: { 'x-api-key': demoKey, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });

/** The run's item as the table holds it, read with the stack's own endpoint (no API call in between). */
const storedRuns = async (env: Record<string, string>, runs: Array<{ externalId: string; runId: string }>) => {
  const client = DynamoDBDocumentClient.from(
    new DynamoDBClient({
      endpoint: env.AWS_ENDPOINT_URL_DYNAMODB,
      region: env.AWS_REGION,
      credentials: { accessKeyId: env.AWS_ACCESS_KEY_ID!, secretAccessKey: env.AWS_SECRET_ACCESS_KEY! },
    }),
  );
  try {
    return await Promise.all(
      runs.map(async ({ externalId, runId }) => {
        const { Item } = await client.send(
          new GetCommand({
            TableName: env.TABLE_NAME,
            Key: rpaRunEntity.key({ clientId: DEMO_CLIENT_ID, externalId, runId }),
            ConsistentRead: true,
          }),
        );
        return rpaRunEntity.fromItem(Item!);
      }),
    );
  } finally {
    client.destroy();
  }
};

it('fails every run a closed local stack left running as execution_lost when it starts again', async () => {
  const first = await start();
  const began = Date.now();
  const runs = await Promise.all(
    DEMO_REQUESTS.map(async (externalId) => {
      const res = await api(first.baseUrl, 'POST', `${rpaOf(externalId)}/view-on-page`, {
        clientUserId: 'front-desk',
      });
      expect(res.status, await res.clone().text()).toBe(202);
      const { runId, executionId } = (await res.json()) as { runId: string; executionId: string };
      return { externalId, runId, executionId };
    }),
  );
  // And a batch of two, whose execution goes the same way.
  const started = await api(first.baseUrl, 'POST', batchPath, {
    clientUserId: 'front-desk',
    requestExternalIds: ['DEMO-PENDED', 'DEMO-UNKNOWN'],
  });
  expect(started.status, await started.clone().text()).toBe(202);
  const { batchId } = (await started.json()) as { batchId: string };
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, 2_500 - (Date.now() - began))));
  // Still going when the stack closes: one session at a time on the demo account (docs/rpa.md, "No
  // lockouts"), so in 2.5 s one run may have ended and one be running; the others wait `queued` behind
  // its lease, retried seconds later, so none of them can end before the close. The one running may
  // still end (or not) between this read and the close.
  const atClose = await storedRuns(first.env, runs);
  const going = new Set(atClose.filter((run) => run.status === 'queued').map((run) => run.runId));
  expect(going.size).toBeGreaterThanOrEqual(runs.length - 2);
  const batchAtClose = (await (await api(first.baseUrl, 'GET', `${batchPath}/${batchId}`)).json()) as {
    items: Array<{ requestExternalId: string; status: string }>;
  };
  await stop();

  const second = await start();
  const stored = await storedRuns(second.env, runs);
  const left = stored.filter((candidate) => going.has(candidate.runId));
  for (const run of left) expect(run.status).toBe('failed');
  // The lease may free up between the read and the close: then one queued run takes it, starts, and is cut
  // off by the close (its worker records why). Every other one was lost with the stack.
  const lost = left.filter((run) => run.outcome === 'execution_lost');
  expect(lost.length).toBeGreaterThanOrEqual(left.length - 1);
  for (const run of lost) {
    expect(run.steps.at(-1)).toMatchObject({ step: expect.stringMatching(/execution/), detail: 'execution_lost' });
  }
  // A run that had ended keeps its outcome; the one running at the read ended either way, but ended.
  for (const run of stored.filter((candidate) => !going.has(candidate.runId))) {
    const before = atClose.find((candidate) => candidate.runId === run.runId)!;
    if (before.status === 'running') expect(['succeeded', 'failed']).toContain(run.status);
    else expect(run).toEqual(before);
  }
  for (const { externalId, runId, executionId } of runs.filter((run) => going.has(run.runId))) {
    const res = await api(second.baseUrl, 'GET', `${rpaOf(externalId)}/runs/${runId}`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ runId, status: 'failed', outcome: 'execution_lost', executionId });
  }
  // Read, and the table unchanged by the read: the start had recorded it.
  expect(await storedRuns(second.env, runs)).toEqual(stored);

  const progress = (await (await api(second.baseUrl, 'GET', `${batchPath}/${batchId}`)).json()) as {
    status: string;
    finishedAt: string;
    items: Array<{ requestExternalId: string; status: string; outcome: string }>;
  };
  expect(progress).toMatchObject({ status: 'done', finishedAt: expect.any(String) });
  // Its items still going at the close are lost; one that had ended keeps its outcome.
  for (const [i, item] of progress.items.entries()) {
    const before = batchAtClose.items[i]!.status;
    if (before === 'queued') expect(item).toMatchObject({ status: 'failed', outcome: 'execution_lost' });
    else if (before === 'running') expect(['succeeded', 'failed']).toContain(item.status);
    else expect(item.outcome).not.toBe('execution_lost');
  }
  expect(progress.items.filter((item) => item.outcome === 'execution_lost').length).toBeGreaterThan(0);
}, 150_000);
