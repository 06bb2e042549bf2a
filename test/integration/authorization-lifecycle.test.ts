import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamo } from '#lib/aws/dynamodb';
import { tableName } from '#lib/config/resources';
import { decisionDeadlineEntity } from '#lib/entities/decision-deadline';
import { type AuthorizationStatus, requestEntity } from '#lib/entities/request';
import { LIFECYCLE, pairsOf } from '#lib/requests/authorization-lifecycle';
import { dynamoRunStore } from '#lib/runs/dynamo-run-store';
import { PAS_DOCUMENTS_MEMBER_ID, PAS_PARTIAL_MEMBER_ID } from '#local/pas-payer/seed';
import { startRecheckTimer } from '#local/rechecks';
import { SANDBOX_MEMBERS } from '#local/sandbox-portal/seed';
import { call } from '#test/support/api';
import { loadSourceHandler } from '#test/support/in-process-gateway';
import {
  claimsOf,
  createPasRequest,
  decideAtPayer,
  historyOf,
  type OwnPayer,
  ownPayerAndTenant,
  type PayerApiTenant,
  submit,
} from '#test/support/payer-api';
import { outboxItemsOf } from './events-support.ts';
import { locationOf, settledBatch, settledRun, startBatch } from './rpa-end-to-end-support.ts';

/*
 * The lifecycle's table (lib/requests/authorization-lifecycle.ts, docs/authorization-lifecycle.md) against what
 * really happens: requests submitted through the API to this file's own local PAS payer (real HTTP, real client
 * assertions), decided by its operator and read again with $inquire. Every history entry they leave is a
 * transition the table lists for the PAS channel and for what made it (the run's kind: a submission or a status
 * read, a cancel; a deadline that passed), and every event written with it is one that row says it
 * sends.
 */
let payer: OwnPayer;
const PAYER_ID = 'PTEST-LIFECYCLE';
let tenant: PayerApiTenant;

beforeAll(async () => {
  ({ payer, tenant } = await ownPayerAndTenant('pas-lifecycle', PAYER_ID, { inProcess: true }));
});
afterAll(() => payer?.close());

const [approvedMember, deniedMember, pendedMember] = SANDBOX_MEMBERS.map((member) => member.memberId);

/** What made a change a run wrote: its kind, and a submit run's action (an update or a cancel of a claim sent). */
const triggerOfRun = (run: { kind: string; submission?: { action?: string } }) => {
  if (run.kind !== 'submit') return 'status-read' as const;
  const action = run.submission?.action;
  return action === 'update'
    ? ('claim-update' as const)
    : action === 'cancel'
      ? ('cancel' as const)
      : ('submission' as const);
};

/** The DueRechecks state machine the stack's timer runs, run once on demand (as payer-api-deadlines.test.ts does). */
const dispatcher = startRecheckTimer(loadSourceHandler, 24 * 3600 * 1000);
afterAll(() => dispatcher.close());

/** The clock past this request's decision deadline alone: on the authorization and under watch, a minute ago. */
const deadlinePassed = async (externalId: string) => {
  const key = decisionDeadlineEntity.key({ clientId: tenant.clientId, externalId });
  const { Item } = await dynamo.send(new GetCommand({ TableName: tableName(), Key: key, ConsistentRead: true }));
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
  const moved = { ...decisionDeadlineEntity.fromItem(Item!), decisionDueAt: passed };
  await dynamo.send(new PutCommand({ TableName: tableName(), Item: decisionDeadlineEntity.toItem(moved) }));
  await dispatcher.runOnce();
};

/** Submits the request (its run settled); the Bundle identifier the payer got. */
const submitted = async (externalId: string) => {
  const res = await submit(tenant, externalId);
  expect(res.status, res.text).toBe(202);
  const run = await settledRun(tenant, locationOf(res));
  expect(run.outcome).toBe('submitted');
  const record = await dynamoRunStore.getRun({ clientId: tenant.clientId, externalId, runId: run.runId });
  return record!.submission!.bundleIdentifier;
};

/** The payer's operator decides the pended claim, then a check-auth-status batch reads it with $inquire. */
const decidedAndRead = async (externalId: string, bundleIdentifier: string, status: 'approved' | 'denied') => {
  const [claim] = await claimsOf(payer, bundleIdentifier);
  await decideAtPayer(payer, { claimId: claim!.claimId, status, number: `PTEST-LC-${Date.now()}` });
  const started = await startBatch(tenant, [externalId]);
  expect(started.status, started.text).toBe(202);
  const batch = await settledBatch(tenant, locationOf(started));
  expect(batch.items[0]).toMatchObject({ status: 'succeeded', outcome: 'status_read' });
};

/** POST …/cancel, its run settled: the payer confirmed it. */
const cancelled = async (externalId: string) => {
  const res = await call('POST', `/api/external/v1.1/Requests/${encodeURIComponent(externalId)}/cancel`, {
    apiKey: tenant.apiKey,
    body: { clientUserId: tenant.clientUserId },
  });
  expect(res.status, res.text).toBe(202);
  expect((await settledRun(tenant, locationOf(res))).outcome).toBe('submitted');
};

/** The request's changes, oldest first: from, to, what made them, and the events written with each. */
const turnsOf = async (externalId: string) => {
  const events = (await outboxItemsOf(tenant.clientId))
    .map((item) => item.event as { type: string; occurredAt: string; data: { requestExternalId?: string } })
    .filter((event) => event.data.requestExternalId === externalId && event.type.startsWith('authorization.'));
  const history = (await historyOf(tenant, externalId)).reverse();
  return Promise.all(
    history.map(async (entry) => {
      const { runId } = entry.changedBy;
      const run = runId && (await dynamoRunStore.getRun({ clientId: tenant.clientId, externalId, runId }));
      return {
        from: entry.previous.status as AuthorizationStatus,
        to: entry.current.status as AuthorizationStatus,
        by: run ? triggerOfRun(run) : ('deadline' as const),
        events: events.filter((event) => event.occurredAt === entry.changedAt).map((event) => event.type),
      };
    }),
  );
};

/** The events the table's rows say a turn sends (no row: the table does not list it). */
const listedEventsOf = (turn: Awaited<ReturnType<typeof turnsOf>>[number]) =>
  LIFECYCLE.filter(
    (row) =>
      row.channels.includes('pas') &&
      row.by.includes(turn.by) &&
      pairsOf(row).some(([from, to]) => from === turn.from && to === turn.to),
  ).map((row) => row.emits);

describe('the lifecycle through the PAS channel, against the local payer', () => {
  it('every change of a submission, a passed deadline and a status read is one the table lists, with the events it says', async () => {
    const flows = {
      approved: await createPasRequest(tenant, approvedMember!),
      denied: await createPasRequest(tenant, deniedMember!),
      partial: await createPasRequest(tenant, PAS_PARTIAL_MEMBER_ID),
      pended: await createPasRequest(tenant, pendedMember!),
      documents: await createPasRequest(tenant, PAS_DOCUMENTS_MEMBER_ID),
      cancelledPended: await createPasRequest(tenant, pendedMember!),
      cancelledApproved: await createPasRequest(tenant, approvedMember!),
    };
    for (const externalId of [flows.approved, flows.denied, flows.partial]) await submitted(externalId);
    const pendedClaim = await submitted(flows.pended);
    await deadlinePassed(flows.pended);
    await decidedAndRead(flows.pended, pendedClaim, 'denied');
    await decidedAndRead(flows.documents, await submitted(flows.documents), 'approved');
    for (const externalId of [flows.cancelledPended, flows.cancelledApproved]) {
      await submitted(externalId);
      await cancelled(externalId);
    }

    const seen = new Map<string, Awaited<ReturnType<typeof turnsOf>>>();
    for (const [flow, externalId] of Object.entries(flows)) seen.set(flow, await turnsOf(externalId));
    expect(Object.fromEntries([...seen].map(([flow, turns]) => [flow, turns.map((t) => `${t.from}>${t.to}`)]))).toEqual(
      {
        approved: ['not_submitted>approved'],
        denied: ['not_submitted>denied'],
        partial: ['not_submitted>partially_approved'],
        pended: ['not_submitted>pending', 'pending>pending', 'pending>denied'],
        documents: ['not_submitted>pending', 'pending>approved'],
        cancelledPended: ['not_submitted>pending', 'pending>cancelled'],
        cancelledApproved: ['not_submitted>approved', 'approved>cancelled'],
      },
    );
    for (const [flow, turns] of seen) {
      for (const turn of turns) {
        const listed = listedEventsOf(turn);
        expect(listed, `${flow}: ${turn.from} > ${turn.to} by ${turn.by}`).not.toEqual([]);
        for (const type of turn.events)
          expect(listed, `${flow}: ${turn.from} > ${turn.to} sent ${type}`).toContain(type);
      }
    }
    expect(seen.get('pended')![1]).toEqual({
      from: 'pending',
      to: 'pending',
      by: 'deadline',
      events: ['authorization.decision_overdue'],
    });
    expect(seen.get('cancelledPended')![1]!.by).toBe('cancel');
    expect(seen.get('cancelledApproved')![1]!.by).toBe('cancel');
    // The pended answer that asks for documents sends both events, as the table's rows for it say.
    expect(seen.get('documents')![0]!.events.sort()).toEqual([
      'authorization.information_requested',
      'authorization.status_changed',
    ]);
  });
});
