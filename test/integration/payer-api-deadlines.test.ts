import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamo } from '#lib/aws/dynamodb';
import { tableName } from '#lib/config/resources';
import { decisionDeadlineEntity } from '#lib/entities/decision-deadline';
import { requestEntity } from '#lib/entities/request';
import { dynamoRunStore } from '#lib/runs/dynamo-run-store';
import { enableInvocationContexts } from '#local/invocations';
import { startRecheckTimer } from '#local/rechecks';
import { enforceTableGrants } from '#local/table-grants';
import { call } from '#test/support/api';
import { loadSourceHandler } from '#test/support/in-process-gateway';
import {
  claimsOf,
  createConnection,
  createPasRequest,
  decideAtPayer,
  historyOf,
  ownPayer,
  type PayerApiTenant,
  payerApiTenant,
  setPayerEndpoint,
  submit,
} from '#test/support/payer-api';
import { getRequest, locationOf, settledBatch, settledRun, startBatch } from './rpa-end-to-end-support.ts';
import { startReceiver } from './webhook-receiver-support.ts';

/*
 * Decision deadlines (docs/payer-api.md, "Decision deadlines"): a PAS submission records when the payer
 * owes its decision, 72 hours (urgent) or 7 × 24 hours after it was sent, unless the payer's endpoint is
 * registered as not held to those timeframes. Submitted through the API to this file's own local PAS
 * payer (members SBX-10003 and SBX-10004 pend), over HTTP with real client assertions.
 */
let payer: Awaited<ReturnType<typeof ownPayer>>;
const PAYER_ID = 'PTEST-DEADLINES';
/** The same payer, registered as not covered by the timeframes (a federal-exchange QHP). */
const UNCOVERED_PAYER_ID = 'PTEST-DEADLINES-NONE';
let tenant: PayerApiTenant;

beforeAll(async () => {
  // First: before any AWS SDK request of this process.
  await enableInvocationContexts();
  enforceTableGrants();
  payer = await ownPayer();
  await setPayerEndpoint(PAYER_ID, payer);
  await setPayerEndpoint(UNCOVERED_PAYER_ID, payer, { decisionTimeframes: 'none' });
  tenant = await payerApiTenant('pas-deadlines', { payer, payerId: PAYER_ID });
  await createConnection(tenant, UNCOVERED_PAYER_ID, tenant.payerClientId);
});
afterAll(() => payer?.close());

const HOUR_MS = 3600 * 1000;

/** A request for `memberId` submitted, its run ended: its id and when the run sent the Bundle. */
const submitted = async (memberId: string, overrides: Record<string, unknown> = {}, on = tenant) => {
  const externalId = await createPasRequest(on, memberId, overrides);
  expect((await getRequest(tenant, externalId)).authorization.decisionDueAt).toBeNull();
  const res = await submit(tenant, externalId);
  expect(res.status, res.text).toBe(202);
  const run = await settledRun(tenant, locationOf(res));
  expect(run.outcome).toBe('submitted');
  const record = await dynamoRunStore.getRun({ clientId: tenant.clientId, externalId, runId: run.runId });
  const { bundleIdentifier } = record!.submission!;
  return { externalId, bundleIdentifier, sentAt: Date.parse(record!.submission!.sentAt!) };
};

const authorizationOf = async (externalId: string) => (await getRequest(tenant, externalId)).authorization;

describe('the decision deadline of a PAS submission', () => {
  it('is 7 × 24 hours after it was sent for a standard request, and a later $inquire keeps it', async () => {
    const { externalId, sentAt } = await submitted('SBX-10003', { serviceLevelCode: 'E' });
    const pended = await authorizationOf(externalId);
    expect(pended).toMatchObject({ status: 'pending', channel: 'pas' });
    expect(pended.decisionDueAt).toBe(new Date(sentAt + 7 * 24 * HOUR_MS).toISOString());

    const started = await startBatch(tenant, [externalId]);
    expect(started.status, started.text).toBe(202);
    const batch = await settledBatch(tenant, locationOf(started));
    expect(batch.items[0]).toMatchObject({ status: 'succeeded', outcome: 'status_read' });
    const read = await authorizationOf(externalId);
    expect(read.lastCheckedAt > pended.lastCheckedAt).toBe(true);
    expect(read.decisionDueAt).toBe(pended.decisionDueAt);
  });

  it('is 72 hours after it was sent for an urgent request (level of service U)', async () => {
    const { externalId, sentAt } = await submitted('SBX-10004', { serviceLevelCode: 'U' });
    const pended = await authorizationOf(externalId);
    expect(pended.status).toBe('pending');
    expect(pended.decisionDueAt).toBe(new Date(sentAt + 72 * HOUR_MS).toISOString());
  });

  it('is none (null) when the payer is registered as not held to the timeframes', async () => {
    const uncovered = { ...tenant, payerId: UNCOVERED_PAYER_ID };
    const { externalId } = await submitted('SBX-10003', { serviceLevelCode: 'U' }, uncovered);
    const pended = await authorizationOf(externalId);
    expect(pended).toMatchObject({ status: 'pending', channel: 'pas', decisionDueAt: null });
  });
});

/**
 * The DueRechecks state machine the stack's timer runs (SelectDueRechecks and all), here run once on demand,
 * each task an invocation held to its table grants (local/table-grants.ts) as the stack's are.
 */
const dispatcher = startRecheckTimer(loadSourceHandler, 24 * 3600 * 1000);
afterAll(() => dispatcher.close());

/** The request's deadline under watch, if any. */
const watchOf = async (externalId: string) => {
  const key = decisionDeadlineEntity.key({ clientId: tenant.clientId, externalId });
  const { Item } = await dynamo.send(new GetCommand({ TableName: tableName(), Key: key, ConsistentRead: true }));
  return Item ? decisionDeadlineEntity.fromItem(Item) : undefined;
};

/**
 * The clock past the deadline, for this request alone: its deadline (on the authorization and under watch)
 * moved to a minute ago, as if the 7 days had gone by. The shared stack's other requests keep theirs.
 */
const deadlinePassed = async (externalId: string) => {
  const watch = (await watchOf(externalId))!;
  const passed = new Date(Date.now() - 60_000).toISOString();
  await dynamo.send(
    new UpdateCommand({
      TableName: tableName(),
      Key: requestEntity.key({ clientId: tenant.clientId, externalId }),
      UpdateExpression: 'SET #a.#due = :passed',
      ExpressionAttributeNames: { '#a': 'authorization', '#due': 'decisionDueAt' },
      ExpressionAttributeValues: { ':passed': passed },
    }),
  );
  const moved = { ...watch, decisionDueAt: passed };
  await dynamo.send(new PutCommand({ TableName: tableName(), Item: decisionDeadlineEntity.toItem(moved) }));
  return passed;
};

/** A subscription of the tenant to overdue decisions, delivered to a receiver of this test's. */
const subscribeToOverdue = async () => {
  const receiver = await startReceiver();
  const res = await call('POST', '/api/external/v1.1/Webhooks', {
    apiKey: tenant.apiKey,
    body: { url: receiver.url, events: ['authorization.decision_overdue'] },
  });
  expect(res.status, res.text).toBe(201);
  const close = async () => {
    await call('DELETE', `/api/external/v1.1/Webhooks/${res.body.id}`, { apiKey: tenant.apiKey });
    await receiver.close();
  };
  return { receiver, close };
};

const deadlineEntries = async (externalId: string) =>
  (await historyOf(tenant, externalId)).filter((entry) => entry.changedBy.kind === 'deadline');

describe('a decision deadline that passes', () => {
  it('gives an undecided request one authorization.decision_overdue event and one history entry, once', async () => {
    const { receiver, close } = await subscribeToOverdue();
    try {
      const { externalId } = await submitted('SBX-10004');
      expect(await watchOf(externalId)).toMatchObject({
        decisionDueAt: (await authorizationOf(externalId)).decisionDueAt,
      });
      const passed = await deadlinePassed(externalId);

      await dispatcher.runOnce();
      const [delivery] = await receiver.waitFor(1, 30_000);
      const event = JSON.parse(delivery!.body);
      expect(event).toMatchObject({ type: 'authorization.decision_overdue' });
      expect(event.data).toEqual({ requestExternalId: externalId, decisionDueAt: passed, status: 'pending' });
      const [entry, ...older] = await historyOf(tenant, externalId);
      expect(entry).toMatchObject({
        previous: { status: 'pending', number: null, decisionDate: null },
        current: { status: 'pending', number: null, decisionDate: null },
        changedBy: { kind: 'deadline', decisionDueAt: passed },
      });
      expect(older.map((change) => change.changedBy.kind)).toEqual(['run']);
      expect(await watchOf(externalId)).toBeUndefined();
      // The deadline stays on the request: it passed, it is not removed.
      expect((await authorizationOf(externalId)).decisionDueAt).toBe(passed);

      await dispatcher.runOnce();
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      expect(receiver.received).toHaveLength(1);
      expect(await deadlineEntries(externalId)).toHaveLength(1);
    } finally {
      await close();
    }
  });

  it('is no longer watched once the payer decided the request: nothing fires', async () => {
    const { externalId, bundleIdentifier } = await submitted('SBX-10003');
    const dueAt = (await authorizationOf(externalId)).decisionDueAt;
    expect(await watchOf(externalId)).toMatchObject({ decisionDueAt: dueAt });
    const [claim] = await claimsOf(payer, bundleIdentifier);
    await decideAtPayer(payer, { claimId: claim!.claimId, status: 'approved', number: `PTEST-DUE-${Date.now()}` });
    const started = await startBatch(tenant, [externalId]);
    expect(started.status, started.text).toBe(202);
    await settledBatch(tenant, locationOf(started));

    const decided = await authorizationOf(externalId);
    expect(decided).toMatchObject({ status: 'approved', decisionDueAt: dueAt });
    expect(await watchOf(externalId)).toBeUndefined();
    await dispatcher.runOnce();
    expect(await deadlineEntries(externalId)).toEqual([]);
  });
});
