import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { Context } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { dynamo } from '#lib/aws/dynamodb';
import { tableName } from '#lib/config/resources';
import type { RecheckThrough, ScheduledRecheck } from '#lib/entities/recheck';
import { recheckEntity } from '#lib/entities/recheck';
import { uuidv7 } from '#lib/ids';
import { dynamoPortalAccountStore } from '#lib/portal-accounts/dynamo-portal-account-store';
import { dynamoRecheckStore } from '#lib/rechecks/dynamo-recheck-store';
import { MAX_RECHECK_INTERVAL_SECONDS, secondsAfter } from '#lib/rechecks/recheck-policy';
import { recheckSettingsOf } from '#lib/rechecks/recheck-settings';
import { setAuthorization } from '#lib/requests/authorization-changes';
import { dynamoRequestStore } from '#lib/requests/dynamo-request-store';
import { dynamoRunStore } from '#lib/runs/dynamo-run-store';
import { dynamoTenantStore } from '#lib/tenancy/dynamo-tenant-store';
import { startRecheckTimer } from '#local/rechecks';
import {
  SANDBOX_DEMO_MEMBERS,
  SANDBOX_MEMBERS,
  SANDBOX_PAYER_ID,
  SANDBOX_SERVICE_FROM_DATE,
  SANDBOX_USERS,
} from '#local/sandbox-portal/seed';
import { call, uniqueId } from '#test/support/api';
import { captureProcessOutput } from '#test/support/output-capture';
import {
  automationTenant,
  createPortalAccount,
  createRequest,
  getRequest,
  locationOf,
  pollUntil,
  sandboxOperator,
  settledBatch,
  startBatch,
  type Tenant,
} from './rpa-end-to-end-support.ts';
import { batchPath } from './rpa-support.ts';
import { startReceiver } from './webhook-receiver-support.ts';

/*
 * Scheduled re-checks (docs/rechecks.md) against the shared local stack: status reads in real Chromium
 * on the sandbox portal schedule them; the DueRechecks state machine (the same definition and handlers
 * the stack's timer runs, here run once in this process) starts the due ones as batches. A test makes its
 * own requests due by moving their schedule into the past: everyone else's stays an hour out, untouched.
 */
const HOUR = 3600;
const memberOf = (memberId: string) => SANDBOX_MEMBERS.find((member) => member.memberId === memberId)!;

const loadHandler = async (module: string) => {
  const url = new URL(`../../functions/${module}.ts`, import.meta.url).href;
  return (await import(/* @vite-ignore */ url)).handler as (event: unknown, context: Context) => Promise<unknown>;
};
const rechecks = startRecheckTimer(loadHandler, 24 * HOUR * 1000);

const scheduleOf = async (tenant: Tenant, externalId: string) => {
  const { Item } = await dynamo.send(
    new GetCommand({
      TableName: tableName(),
      Key: recheckEntity.key({ clientId: tenant.clientId, externalId }),
      ConsistentRead: true,
    }),
  );
  return Item ? recheckEntity.fromItem(Item) : undefined;
};

/** Makes a request's re-check due a minute ago, with `over` changed (when it became undecided, checks done). */
const makeDue = async (schedule: ScheduledRecheck, over: Partial<ScheduledRecheck> = {}) => {
  const past = new Date(Date.now() - 60_000).toISOString();
  const changed = { ...schedule, ...over };
  expect(await dynamoRecheckStore.reschedule(changed, { checksDone: changed.checksDone, dueAt: past, now: past })).toBe(
    true,
  );
  return (await scheduleOf({ clientId: schedule.clientId } as Tenant, schedule.externalId))!;
};

/** A tenant whose DEMO requests were read once: pended, not found, approved. */
const readOnce = async (label: string) => {
  const tenant = await automationTenant(label);
  const ids = ['DEMO-PENDED', 'DEMO-UNKNOWN', 'DEMO-APPROVED'] as const;
  for (const id of ids) await createRequest(tenant, id, memberOf(SANDBOX_DEMO_MEMBERS[id]), SANDBOX_PAYER_ID);
  const started = await startBatch(tenant, [...ids]);
  expect(started.status, started.text).toBe(202);
  await settledBatch(tenant, locationOf(started));
  return tenant;
};

const secondsBetween = (from: string, to: string) => (Date.parse(to) - Date.parse(from)) / 1000;

describe('scheduled re-checks', () => {
  it('start when a status read finds the authorization undecided, on the reading run’s behalf', async () => {
    const tenant = await readOnce('rechecks-scheduled');
    for (const id of ['DEMO-PENDED', 'DEMO-UNKNOWN']) {
      const { authorization } = await getRequest(tenant, id);
      const schedule = await scheduleOf(tenant, id);
      expect(schedule, id).toMatchObject({
        clientId: tenant.clientId,
        externalId: id,
        since: authorization.lastCheckedAt,
        checksDone: 0,
        clientUserId: tenant.clientUserId,
        organizationId: tenant.organizationId,
        channel: 'portal',
        portalAccountId: 'sandbox-front-desk',
      });
      expect(schedule!.payerConnectionId).toBeUndefined();
      // The stack's RECHECK_EVERY_SECONDS is the default: the first re-check an hour after the read.
      expect(secondsBetween(schedule!.since, schedule!.dueAt)).toBe(HOUR);
    }
    expect(await scheduleOf(tenant, 'DEMO-APPROVED')).toBeUndefined();
  });

  it('re-check what is due as a batch of the same client user, and wait twice as long for the next', async () => {
    const tenant = await readOnce('rechecks-due');
    const before = await getRequest(tenant, 'DEMO-PENDED');
    const due = await makeDue((await scheduleOf(tenant, 'DEMO-PENDED'))!);
    const notYet = (await scheduleOf(tenant, 'DEMO-UNKNOWN'))!;

    await rechecks.runOnce();

    const moved = (await scheduleOf(tenant, 'DEMO-PENDED'))!;
    expect(moved).toMatchObject({ checksDone: 1, since: due.since, version: due.version + 1 });
    expect(secondsBetween(moved.updatedAt, moved.dueAt)).toBe(2 * HOUR);
    expect(await scheduleOf(tenant, 'DEMO-UNKNOWN')).toEqual(notYet);
    // The batch reads the portal again in real Chromium: the request's lastCheckedAt moves on.
    const after = await pollUntil(
      () => getRequest(tenant, 'DEMO-PENDED'),
      (request) => request.authorization.lastCheckedAt > before.authorization.lastCheckedAt,
      { timeoutMs: 90_000, intervalMs: 500 },
    );
    expect(after.authorization).toMatchObject({ status: 'pending', number: null, decisionDate: null });
    expect(after.authorization.lastCheckedAt > moved.updatedAt).toBe(true);
    // Still pended: the schedule stands as the dispatcher left it (the read changed nothing).
    expect(await scheduleOf(tenant, 'DEMO-PENDED')).toEqual(moved);
  });

  it('pause a client’s re-checks while it has them off, for a day at a time, starting nothing', async () => {
    const tenant = await readOnce('rechecks-off');
    await tenant.admin.setRecheckSettings(tenant.clientId, { rechecks: 'off' });
    const before = await getRequest(tenant, 'DEMO-PENDED');
    const due = await makeDue((await scheduleOf(tenant, 'DEMO-PENDED'))!);

    await rechecks.runOnce();

    const paused = (await scheduleOf(tenant, 'DEMO-PENDED'))!;
    expect(paused.checksDone).toBe(due.checksDone);
    expect(secondsBetween(paused.updatedAt, paused.dueAt)).toBe(MAX_RECHECK_INTERVAL_SECONDS);
    expect((await getRequest(tenant, 'DEMO-PENDED')).authorization).toEqual(before.authorization);

    // On again with its own interval: the next re-check waits that interval times two (one done).
    await tenant.admin.setRecheckSettings(tenant.clientId, { recheckIntervalSeconds: 600 });
    await makeDue(paused, { checksDone: 1 });
    await rechecks.runOnce();
    const resumed = (await scheduleOf(tenant, 'DEMO-PENDED'))!;
    expect(resumed.checksDone).toBe(2);
    expect(secondsBetween(resumed.updatedAt, resumed.dueAt)).toBe(4 * 600);
  });

  it('end 30 days after the authorization became undecided, and when the request is decided', async () => {
    const tenant = await readOnce('rechecks-ended');
    const pended = (await scheduleOf(tenant, 'DEMO-PENDED'))!;
    await makeDue(pended, { since: secondsAfter(new Date().toISOString(), -31 * 24 * HOUR) });
    // A schedule left behind for a request already decided (not undecided when read) ends too.
    const approved = { ...pended, externalId: 'DEMO-APPROVED', version: 1 };
    await dynamo.send(
      new PutCommand({
        TableName: tableName(),
        Item: recheckEntity.toItem({ ...approved, dueAt: new Date(Date.now() - 60_000).toISOString() }),
      }),
    );
    const before = await getRequest(tenant, 'DEMO-PENDED');

    await rechecks.runOnce();

    expect(await scheduleOf(tenant, 'DEMO-PENDED')).toBeUndefined();
    expect(await scheduleOf(tenant, 'DEMO-APPROVED')).toBeUndefined();
    expect((await getRequest(tenant, 'DEMO-PENDED')).authorization).toEqual(before.authorization);
  });

  it('deliver the payer’s later decision: the re-check reads it, the schedule ends, the webhook is told', async () => {
    const tenant = await automationTenant('rechecks-decided');
    const receiver = await startReceiver();
    try {
      const subscribed = await call('POST', '/api/external/v1.1/Webhooks', {
        apiKey: tenant.apiKey,
        body: { url: receiver.url, events: ['authorization.status_changed'] },
      });
      expect(subscribed.status, subscribed.text).toBe(201);
      // A pended authorization of this test's own on the shared portal (the operator's, docs/sandbox-portal.md).
      const externalId = uniqueId('RECHECK-DECIDED');
      const operator = sandboxOperator;
      const member = memberOf('SBX-10003');
      const pended = await operator('/operator/authorizations', {
        memberId: member.memberId,
        reference: externalId,
        fromDate: SANDBOX_SERVICE_FROM_DATE,
      });
      expect(pended.status).toBe(303);
      await createRequest(tenant, externalId, member, SANDBOX_PAYER_ID);
      const started = await startBatch(tenant, [externalId]);
      await settledBatch(tenant, locationOf(started));
      const [toPending] = await receiver.waitFor(1, 30_000);
      expect(JSON.parse(toPending!.body).data.current.status).toBe('pending');

      const decided = await operator('/operator/decisions', {
        memberId: member.memberId,
        reference: externalId,
        status: 'approved',
        number: 'SBX-RECHECK-1',
        decisionDate: '2026-11-20',
      });
      expect(decided.status).toBe(303);
      await makeDue((await scheduleOf(tenant, externalId))!);
      await rechecks.runOnce();

      const [, toApproved] = await receiver.waitFor(2, 90_000);
      const event = JSON.parse(toApproved!.body);
      expect(event).toMatchObject({
        type: 'authorization.status_changed',
        data: {
          requestExternalId: externalId,
          previous: { status: 'pending', number: null, decisionDate: null },
          current: { status: 'approved', number: 'SBX-RECHECK-1', decisionDate: '2026-11-20' },
          runId: expect.any(String),
        },
      });
      expect(toApproved!.headers['webhook-signature']).toMatch(/^v1,/);
      expect((await getRequest(tenant, externalId)).authorization).toMatchObject({
        status: 'approved',
        number: 'SBX-RECHECK-1',
      });
      // Decided: the change's own transaction ended the re-checks.
      expect(await scheduleOf(tenant, externalId)).toBeUndefined();
    } finally {
      await receiver.close();
    }
  });
});

/** Another account of the tenant's organization on the sandbox portal, for these payers (the TOTP user's). */
const anotherAccount = (tenant: Tenant, externalId: string, payerIds: string[]) =>
  createPortalAccount(tenant, {
    externalId,
    payerIds,
    username: SANDBOX_USERS[1]!.username,
    password: SANDBOX_USERS[1]!.password,
    totpSecret: SANDBOX_USERS[1]!.totpSecret,
  });

const recheckSettings = recheckSettingsOf(dynamoTenantStore);

/**
 * The request's authorization read undecided by a run through `through`, written as the worker writes a
 * read (setAuthorization, with the run's re-check context): its re-check is scheduled in that transaction.
 */
const readUndecided = async (tenant: Tenant, externalId: string, through: RecheckThrough) => {
  const at = new Date().toISOString();
  const status = externalId === 'DEMO-UNKNOWN' ? 'not_found' : 'pending';
  const next = { status, number: null, decisionDate: null, lastCheckedAt: at, channel: through.channel } as const;
  const onBehalfOf = { clientUserId: tenant.clientUserId, organizationId: tenant.organizationId, ...through };
  const ref = { clientId: tenant.clientId, externalId };
  const changedBy = { kind: 'run' as const, runId: uuidv7() };
  expect(
    await setAuthorization(dynamoRequestStore, ref, next, changedBy, at, { settingsOf: recheckSettings, onBehalfOf }),
  ).toBe(true);
  return (await scheduleOf(tenant, externalId))!;
};

/** The request's runs, newest first. */
const runsOf = (tenant: Tenant, externalId: string) => dynamoRunStore.latestRuns(tenant.clientId, externalId, 10);

const setAccountStatus = async (tenant: Tenant, externalId: string, status: 'active' | 'disabled') => {
  const account = (await dynamoPortalAccountStore.get(tenant.clientId, externalId))!;
  await dynamoPortalAccountStore.update({ ...account, status, version: account.version + 1 }, account.version);
};

describe('a re-check keeps the portal account that read the status', () => {
  it('runs through the account the client named, for a request without a payer in an organization of several', async () => {
    const tenant = await automationTenant('rechecks-named');
    await anotherAccount(tenant, 'sandbox-totp-desk', ['ANOTHER-PAYER']);
    // No patient.PayerId, several active accounts: only a named account can check it.
    await createRequest(tenant, 'DEMO-PENDED', memberOf(SANDBOX_DEMO_MEMBERS['DEMO-PENDED']), null);
    const started = await call('POST', batchPath, {
      apiKey: tenant.apiKey,
      body: {
        clientUserId: tenant.clientUserId,
        portalAccountExternalId: 'sandbox-totp-desk',
        requestExternalIds: ['DEMO-PENDED'],
      },
    });
    expect(started.status, started.text).toBe(202);
    await settledBatch(tenant, locationOf(started));
    const before = await getRequest(tenant, 'DEMO-PENDED');
    expect(before.authorization.status).toBe('pending');
    const schedule = (await scheduleOf(tenant, 'DEMO-PENDED'))!;
    expect(schedule).toMatchObject({ channel: 'portal', portalAccountId: 'sandbox-totp-desk' });

    await makeDue(schedule);
    await rechecks.runOnce();

    const [recheck, first] = await runsOf(tenant, 'DEMO-PENDED');
    expect(first, 'the client’s own run, then the re-check’s').toBeDefined();
    expect(recheck).toMatchObject({
      kind: 'check-auth-status',
      channel: 'portal',
      portalAccountId: 'sandbox-totp-desk',
    });
    expect(recheck!.batchId).not.toBe(first!.batchId);
    // The re-check reads the portal again in real Chromium, through that account.
    const after = await pollUntil(
      () => getRequest(tenant, 'DEMO-PENDED'),
      (request) => request.authorization.lastCheckedAt > before.authorization.lastCheckedAt,
      { timeoutMs: 90_000, intervalMs: 500 },
    );
    expect(after.authorization.status).toBe('pending');
    expect(
      await dynamoRunStore.getRun({ clientId: tenant.clientId, externalId: 'DEMO-PENDED', runId: recheck!.runId }),
    ).toMatchObject({ status: 'succeeded', outcome: 'status_read' });
  });

  it('keeps it over the account the rules would choose, and chooses by the rules once it is deleted', async () => {
    const tenant = await automationTenant('rechecks-deleted');
    // Both serve the payer; the rules would take the oldest, sandbox-front-desk.
    await anotherAccount(tenant, 'sandbox-second', [SANDBOX_PAYER_ID]);
    await createRequest(tenant, 'DEMO-PENDED', memberOf(SANDBOX_DEMO_MEMBERS['DEMO-PENDED']), SANDBOX_PAYER_ID);
    const schedule = await readUndecided(tenant, 'DEMO-PENDED', {
      channel: 'portal',
      portalAccountId: 'sandbox-second',
    });

    await makeDue(schedule);
    await rechecks.runOnce();
    const [kept] = await runsOf(tenant, 'DEMO-PENDED');
    expect(kept).toMatchObject({ kind: 'check-auth-status', portalAccountId: 'sandbox-second' });

    const deleted = await call('DELETE', '/api/external/v1.1/Portals/accounts/sandbox-second', {
      apiKey: tenant.apiKey,
    });
    expect(deleted.status, deleted.text).toBe(204);
    await makeDue((await scheduleOf(tenant, 'DEMO-PENDED'))!);
    await rechecks.runOnce();
    const [chosen] = await runsOf(tenant, 'DEMO-PENDED');
    expect(chosen!.runId).not.toBe(kept!.runId);
    expect(chosen).toMatchObject({ kind: 'check-auth-status', portalAccountId: 'sandbox-front-desk' });
  });

  it('starts the rest of a group when one request cannot be started, and logs that one with its reason', async () => {
    const tenant = await automationTenant('rechecks-partial');
    await anotherAccount(tenant, 'sandbox-second', [SANDBOX_PAYER_ID]);
    await anotherAccount(tenant, 'sandbox-third', ['ANOTHER-PAYER']);
    await createRequest(tenant, 'DEMO-PENDED', memberOf(SANDBOX_DEMO_MEMBERS['DEMO-PENDED']), SANDBOX_PAYER_ID);
    await createRequest(tenant, 'DEMO-UNKNOWN', memberOf(SANDBOX_DEMO_MEMBERS['DEMO-UNKNOWN']), null);
    // Both read through sandbox-second: one group.
    const through = { channel: 'portal', portalAccountId: 'sandbox-second' } as const;
    const pended = await makeDue(await readUndecided(tenant, 'DEMO-PENDED', through));
    const unknown = await makeDue(await readUndecided(tenant, 'DEMO-UNKNOWN', through));
    // Disabled: the rules choose again. The pended request's payer is served by sandbox-front-desk; the
    // other names no payer, and two accounts are active: none can be chosen for it.
    await setAccountStatus(tenant, 'sandbox-second', 'disabled');

    const output = captureProcessOutput();
    try {
      await rechecks.runOnce();
    } finally {
      output.restore();
    }

    const [started] = await runsOf(tenant, 'DEMO-PENDED');
    expect(started).toMatchObject({ kind: 'check-auth-status', portalAccountId: 'sandbox-front-desk' });
    expect(await runsOf(tenant, 'DEMO-UNKNOWN')).toEqual([]);
    const refusals = output
      .text()
      .split('\n')
      .filter((line) => line.includes('"Re-check refused"') && line.includes(tenant.clientId))
      .map((line) => JSON.parse(line));
    expect(refusals).toEqual([
      expect.objectContaining({
        level: 'warn',
        clientId: tenant.clientId,
        requestExternalId: 'DEMO-UNKNOWN',
        reason: 'no_payer_and_several_accounts',
      }),
    ]);
    // Both schedules moved on a step, the refused one as the started one.
    expect(await scheduleOf(tenant, 'DEMO-PENDED')).toMatchObject({ checksDone: pended.checksDone + 1 });
    expect(await scheduleOf(tenant, 'DEMO-UNKNOWN')).toMatchObject({ checksDone: unknown.checksDone + 1 });
  });
});
