import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { handler } from '#functions/rpa/record-execution-ended';
import { checkAuthStatusStateMachineArn, viewOnPageStateMachineArn } from '#lib/config/resources';
import type { RpaBatchRecord, RpaRunRecord } from '#lib/entities/rpa';
import { dynamoRunStore } from '#lib/runs/dynamo-run-store';
import { InvalidTaskInput } from '#lib/runs/errors';
import { LOST_AFTER_MS } from '#lib/runs/run-limits';
import { call, newTenant } from '#test/support/api';
import { batchPath, newRequest, rpaOf, storedRun } from './rpa-support.ts';

/*
 * RecordExecutionEnded on the real table: the event EventBridge delivers when an execution of the
 * automation's state machines ends TIMED_OUT, ABORTED or FAILED (the shape of AWS's "Step Functions
 * Execution Status Change" event), and what it leaves on the runs and batches it names.
 */
let tenant: Awaited<ReturnType<typeof newTenant>>;
beforeAll(async () => {
  tenant = await newTenant('execution-ended');
});

/** The event as EventBridge delivers it (docs.aws.amazon.com/step-functions/latest/dg/cw-events.html). */
const statusChange = (stateMachineArn: string, name: string, status: string, input: Record<string, unknown>) => ({
  version: '0',
  id: randomUUID(),
  'detail-type': 'Step Functions Execution Status Change',
  source: 'aws.states',
  account: '000000000000',
  time: new Date().toISOString(),
  region: 'us-east-1',
  resources: [`${stateMachineArn.replace(':stateMachine:', ':execution:')}:${name}`],
  detail: {
    executionArn: `${stateMachineArn.replace(':stateMachine:', ':execution:')}:${name}`,
    stateMachineArn,
    name,
    status,
    startDate: Date.now() - 300_000,
    stopDate: Date.now(),
    input: JSON.stringify(input),
    output: null,
    inputDetails: { included: true },
    outputDetails: null,
    ...(status === 'FAILED' ? { error: 'States.Runtime', cause: 'a cause that is never read' } : {}),
  },
});

const runningRun = async (change: Partial<RpaRunRecord> = {}) => {
  const externalId = await newRequest(tenant.apiKey);
  return storedRun(tenant, externalId, {
    status: 'running',
    outcome: undefined,
    steps: [{ at: new Date().toISOString(), step: 'started', detail: 'attempt 1' }],
    ...change,
  });
};

const viewOnPageEnded = (run: RpaRunRecord, status: string) =>
  statusChange(viewOnPageStateMachineArn(), run.runId, status, {
    clientId: run.clientId,
    requestExternalId: run.externalId,
    runId: run.runId,
  });

const reread = (run: RpaRunRecord) => dynamoRunStore.getRun(run);

describe('a view-on-page execution that ended', () => {
  it.each([
    ['TIMED_OUT', 'execution_timed_out'],
    ['ABORTED', 'execution_aborted'],
    ['FAILED', 'execution_lost'],
  ])('%s fails the run it left unended with %s, once', async (status, outcome) => {
    const run = await runningRun();
    expect(await handler(viewOnPageEnded(run, status))).toEqual({ ended: 1 });
    const stored = await reread(run);
    expect(stored).toMatchObject({ status: 'failed', outcome, version: run.version + 1 });
    expect(stored?.steps.at(-1)).toMatchObject({ detail: outcome });
    expect(JSON.stringify(stored)).not.toContain('a cause that is never read');
    // EventBridge delivers at least once: a second delivery changes nothing.
    expect(await handler(viewOnPageEnded(run, status))).toEqual({ ended: 0 });
    expect(await reread(run)).toEqual(stored);
  });

  it('leaves a run that ended as it ended (the usual FAILED: RecordRunFailure recorded it first)', async () => {
    const run = await runningRun({ status: 'failed', outcome: 'wrong_password' });
    expect(await handler(viewOnPageEnded(run, 'FAILED'))).toEqual({ ended: 0 });
    expect(await reread(run)).toEqual(run);
  });
});

describe('a batch execution that ended', () => {
  it('fails the runs it left unended, keeps those that ended, and closes the batch', async () => {
    const batchId = randomUUID();
    const ended = await runningRun({ kind: 'check-auth-status', batchId, status: 'succeeded', outcome: 'status_read' });
    const running = await runningRun({ kind: 'check-auth-status', batchId });
    const queued = await runningRun({ kind: 'check-auth-status', batchId, status: 'queued', steps: [] });
    const at = new Date().toISOString();
    const batch: RpaBatchRecord = {
      clientId: tenant.clientId,
      batchId,
      clientUserId: tenant.clientUserId,
      organizationId: tenant.organizationId,
      items: [ended, running, queued].map((run) => ({ requestExternalId: run.externalId, runId: run.runId })),
      status: 'running',
      version: 1,
      createdAt: at,
      updatedAt: at,
    };
    await dynamoRunStore.createBatch(batch);
    const event = statusChange(checkAuthStatusStateMachineArn(), batchId, 'TIMED_OUT', {
      clientId: tenant.clientId,
      batchId,
      items: batch.items,
    });
    expect(await handler(event)).toEqual({ ended: 2 });
    expect(await reread(ended)).toEqual(ended);
    for (const run of [running, queued]) {
      expect(await reread(run)).toMatchObject({ status: 'failed', outcome: 'execution_timed_out' });
    }
    const closed = await dynamoRunStore.getBatch(tenant.clientId, batchId);
    expect(closed).toMatchObject({ status: 'done', finishedAt: expect.any(String), version: 2 });
    expect(await handler(event)).toEqual({ ended: 0 });
    expect(await dynamoRunStore.getBatch(tenant.clientId, batchId)).toEqual(closed);
  });
});

describe('events that are not ours', () => {
  it('drops them without touching a run: another state machine, a status that is no end, no input', async () => {
    const run = await runningRun();
    const ids = { clientId: run.clientId, requestExternalId: run.externalId, runId: run.runId };
    const otherMachine = viewOnPageStateMachineArn().replace(/[^:]+$/, 'SomeoneElsesMachine');
    const { detail, ...rest } = viewOnPageEnded(run, 'TIMED_OUT');
    for (const event of [
      statusChange(otherMachine, run.runId, 'TIMED_OUT', ids),
      viewOnPageEnded(run, 'SUCCEEDED'),
      viewOnPageEnded(run, 'RUNNING'),
      { ...rest, detail: { ...detail, input: null, inputDetails: { included: false } } },
      { ...rest, detail: { ...detail, input: '{"clientId":' } },
      { ...rest, detail: null },
      null,
    ]) {
      expect(await handler(event)).toEqual({ ended: 0 });
    }
    expect(await reread(run)).toEqual(run);
  });

  it('refuses an execution of ours whose input does not name the execution (it would be a bug: retried, then dead-lettered)', async () => {
    const run = await runningRun();
    const other = await runningRun();
    const event = statusChange(viewOnPageStateMachineArn(), run.runId, 'TIMED_OUT', {
      clientId: other.clientId,
      requestExternalId: other.externalId,
      runId: other.runId,
    });
    await expect(handler(event)).rejects.toThrow(InvalidTaskInput);
    expect(await reread(run)).toEqual(run);
    expect(await reread(other)).toEqual(other);
  });
});

describe('a run or batch read through the API whose execution does not exist (the local stack after a restart)', () => {
  /** An execution of the shared stack's local Step Functions that was never started (or was forgotten). */
  const missingExecution = (machineArn: string, name: string) =>
    `${machineArn.replace(':stateMachine:', ':execution:')}:${name}`;
  const longAgo = () => new Date(Date.now() - LOST_AFTER_MS - 5_000);

  it('fails the run execution_lost when GET reads it, in the table too', async () => {
    const externalId = await newRequest(tenant.apiKey);
    const run = await storedRun(tenant, externalId, { status: 'running', outcome: undefined }, longAgo());
    const executionArn = missingExecution(viewOnPageStateMachineArn(), run.runId);
    await dynamoRunStore.updateRun({ ...run, executionArn, version: 2 });
    const res = await call('GET', `${rpaOf(externalId)}/runs/${run.runId}`, { apiKey: tenant.apiKey });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ status: 'failed', outcome: 'execution_lost', executionId: executionArn });
    expect(await reread(run)).toMatchObject({ status: 'failed', outcome: 'execution_lost', version: 3 });
  });

  it('leaves a run just started as it is (DescribeExecution may not see it yet), and one whose execution cannot be described', async () => {
    const recent = await storedRun(tenant, await newRequest(tenant.apiKey), { status: 'queued', outcome: undefined });
    await dynamoRunStore.updateRun({
      ...recent,
      executionArn: missingExecution(viewOnPageStateMachineArn(), recent.runId),
      version: 2,
    });
    const unreadable = await storedRun(
      tenant,
      await newRequest(tenant.apiKey),
      { status: 'running', outcome: undefined },
      longAgo(),
    );
    // Not an ARN Step Functions accepts: InvalidArn, not ExecutionDoesNotExist.
    await dynamoRunStore.updateRun({ ...unreadable, executionArn: 'arn:aws:lambda:nowhere', version: 2 });
    for (const run of [recent, unreadable]) {
      const res = await call('GET', `${rpaOf(run.externalId)}/runs/${run.runId}`, { apiKey: tenant.apiKey });
      expect(res.status, res.text).toBe(200);
      expect(res.body).toMatchObject({ status: run.status, outcome: null });
      expect(await reread(run)).toMatchObject({ status: run.status, version: 2 });
    }
  });

  it('closes the batch and fails its unended runs execution_lost when its progress is read', async () => {
    const batchId = randomUUID();
    const createdAt = longAgo();
    const ended = await runningRun({ kind: 'check-auth-status', batchId, status: 'succeeded', outcome: 'status_read' });
    const running = await runningRun({ kind: 'check-auth-status', batchId });
    const at = createdAt.toISOString();
    await dynamoRunStore.createBatch({
      clientId: tenant.clientId,
      batchId,
      clientUserId: tenant.clientUserId,
      organizationId: tenant.organizationId,
      items: [ended, running].map((run) => ({ requestExternalId: run.externalId, runId: run.runId })),
      status: 'running',
      executionArn: missingExecution(checkAuthStatusStateMachineArn(), batchId),
      version: 1,
      createdAt: at,
      updatedAt: at,
    });
    const res = await call('GET', `${batchPath}/${batchId}`, { apiKey: tenant.apiKey });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      status: 'done',
      done: 2,
      failed: 1,
      finishedAt: expect.any(String),
      items: [
        { runId: ended.runId, status: 'succeeded', outcome: 'status_read' },
        { runId: running.runId, status: 'failed', outcome: 'execution_lost' },
      ],
    });
    expect(await dynamoRunStore.getBatch(tenant.clientId, batchId)).toMatchObject({ status: 'done', version: 2 });
    expect(await reread(running)).toMatchObject({ status: 'failed', outcome: 'execution_lost' });
    expect(await reread(ended)).toEqual(ended);
  });
});
