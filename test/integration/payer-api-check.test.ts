import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { Context } from 'aws-lambda';
import { beforeAll, describe, expect, it } from 'vitest';
import { dynamo } from '#lib/aws/dynamodb';
import { PAYER_RECHECK_EVERY_SECONDS_DEFAULT } from '#lib/config/defaults';
import { tableName } from '#lib/config/resources';
import { recheckEntity } from '#lib/entities/recheck';
import { dynamoRecheckStore } from '#lib/rechecks/dynamo-recheck-store';
import { dynamoRunStore } from '#lib/runs/dynamo-run-store';
import { startRecheckTimer } from '#local/rechecks';
import { SANDBOX_MEMBERS, SANDBOX_PAYER_ID, SANDBOX_USERS } from '#local/sandbox-portal/seed';
import { call } from '#test/support/api';
import {
  claimsOf,
  createConnection,
  createPasRequest,
  decideAtPayer,
  historyOf,
  type PayerApiTenant,
  payerApiTenant,
  registerAtPayer,
  setPayerEndpoint,
  stackPayer,
  submit,
  subscribeToChanges,
} from '#test/support/payer-api';
import { PAYER_CONNECTIONS } from '#test/support/payer-connections';
import {
  createPortalAccount,
  createRequest,
  getRequest,
  locationOf,
  pollUntil,
  settledBatch,
  settledRun,
  startBatch,
} from './rpa-end-to-end-support.ts';
import { rpaOf } from './rpa-support.ts';
import { matchingSignatures, startReceiver } from './webhook-receiver-support.ts';

/*
 * Status checks through the payer's API (docs/payer-api.md): check-auth-status batches whose requests'
 * payer has a PAS endpoint and whose organization has an active connection read the authorization with
 * `Claim/$inquire` from the shared stack's local PAS payer, over HTTP with real client assertions; no
 * browser, lease or login. A batch mixes channels, each request its own; a scheduled re-check goes the
 * same way. The payer's operator decides pended claims as a payer's reviewer would.
 */
const payer = stackPayer();
/** This file's payer in the directory: the shared stack's payer, under an id no other file uses. */
const PAYER_ID = 'PTEST-CHECK';

beforeAll(async () => {
  await setPayerEndpoint(PAYER_ID, payer);
});

const loadHandler = async (module: string) => {
  const url = new URL(`../../functions/${module}.ts`, import.meta.url).href;
  return (await import(/* @vite-ignore */ url)).handler as (event: unknown, context: Context) => Promise<unknown>;
};
/** The DueRechecks state machine the stack's timer runs, here run once on demand (as rechecks.test.ts does). */
const rechecks = startRecheckTimer(loadHandler, 24 * 3600 * 1000);

/** The request's scheduled re-check, if any (read as rechecks.test.ts reads it). */
const scheduleOf = async (clientId: string, externalId: string) => {
  const key = recheckEntity.key({ clientId, externalId });
  const { Item } = await dynamo.send(new GetCommand({ TableName: tableName(), Key: key, ConsistentRead: true }));
  return Item ? recheckEntity.fromItem(Item) : undefined;
};

const recordOf = async (tenant: PayerApiTenant, externalId: string, runId: string) =>
  (await dynamoRunStore.getRun({ clientId: tenant.clientId, externalId, runId }))!;

/** Submits the request and waits for its run; the run, and the Bundle identifier it sent. */
const submitted = async (tenant: PayerApiTenant, externalId: string) => {
  const res = await submit(tenant, externalId);
  expect(res.status, res.text).toBe(202);
  const run = await settledRun(tenant, locationOf(res));
  expect(run.outcome).toBe('submitted');
  const { submission } = await recordOf(tenant, externalId, run.runId);
  return { run, bundleIdentifier: submission!.bundleIdentifier };
};

/** The payer's operator decides the one claim made from this submission. */
const decide = async (bundleIdentifier: string, status: 'approved' | 'denied', number?: string) => {
  const claims = await claimsOf(payer, bundleIdentifier);
  expect(claims.map((claim) => claim.status)).toEqual(['pended']);
  return decideAtPayer(payer, { claimId: claims[0]!.claimId, status, ...(number ? { number } : {}) });
};

/** A check-auth-status batch of these requests, ended. */
const checked = async (tenant: PayerApiTenant, externalIds: string[]) => {
  const started = await startBatch(tenant, externalIds);
  expect(started.status, started.text).toBe(202);
  return settledBatch(tenant, locationOf(started));
};

describe('status checks through the payer’s API', () => {
  it('read a pended claim the payer’s operator decided through $inquire: no browser, history and webhook', async () => {
    const tenant = await payerApiTenant('pas-check-decided', { payer, payerId: PAYER_ID });
    const receiver = await startReceiver();
    const { secret, unsubscribe } = await subscribeToChanges(tenant, receiver.url);
    try {
      const externalId = await createPasRequest(tenant, 'SBX-10003');
      const { run: submitRun, bundleIdentifier } = await submitted(tenant, externalId);
      expect(submitRun.authorization).toEqual({ status: 'pended', number: null, decisionDate: null });
      const pended = (await getRequest(tenant, externalId)).authorization;
      expect(pended).toMatchObject({ status: 'pending', number: null, channel: 'pas' });
      expect(pended.items.map((item: any) => [item.status, item.reviewActionCode, item.reasons[0]?.code])).toEqual([
        ['pending', 'A4', 'SBX-MR'],
        ['pending', 'A4', 'SBX-MR'],
      ]);

      const number = `PTEST-${Date.now()}`;
      expect(await decide(bundleIdentifier, 'approved', number)).toMatchObject({ status: 'approved' });
      const batch = await checked(tenant, [externalId]);
      expect(batch).toMatchObject({ total: 1, done: 1, failed: 0 });
      const [item] = batch.items;
      expect(item).toMatchObject({ status: 'succeeded', outcome: 'status_read' });
      expect(item.authorization).toMatchObject({ status: 'approved', number });

      // The PAS channel: no portal account, no screenshot, no login; the run's record names the connection.
      const run = await settledRun(tenant, `${rpaOf(externalId)}/runs/${item.runId}`);
      expect(run).toMatchObject({ kind: 'check-auth-status', portalAccountId: null, portalId: null, screenshots: [] });
      expect(run.steps.map((step: { step: string }) => step.step)).not.toContain('logged in');
      const record = await recordOf(tenant, externalId, item.runId);
      expect(record).toMatchObject({ channel: 'pas', payerConnectionId: tenant.connection.externalId });
      expect(record.portalAccountId).toBeUndefined();

      const approved = (await getRequest(tenant, externalId)).authorization;
      expect(approved).toMatchObject({ status: 'approved', number, channel: 'pas', reasons: [] });
      expect(approved.decisionDate).toMatch(/^\d{4}-\d\d-\d\d$/);
      expect(approved.items.map((i: any) => [i.sequence, i.status, i.reviewActionCode, i.number])).toEqual([
        [1, 'approved', 'A1', `${number}-1`],
        [2, 'approved', 'A1', `${number}-2`],
      ]);
      const history = await historyOf(tenant, externalId);
      expect(history.map((entry) => [entry.current.status, entry.changedBy])).toEqual([
        ['approved', { kind: 'run', runId: item.runId }],
        ['pending', { kind: 'run', runId: submitRun.runId }],
      ]);

      const deliveries = await receiver.waitFor(2, 30_000);
      const events = deliveries.map((delivery) => JSON.parse(delivery.body));
      expect(events.map((event) => [event.type, event.data.current.status, event.data.runId]).sort()).toEqual([
        ['authorization.status_changed', 'approved', item.runId],
        ['authorization.status_changed', 'pending', submitRun.runId],
      ]);
      const toApproved = deliveries[events.findIndex((event) => event.data.current.status === 'approved')]!;
      expect(JSON.parse(toApproved.body).data).toEqual({
        requestExternalId: externalId,
        previous: { status: 'pending', number: null, decisionDate: null },
        current: { status: 'approved', number, decisionDate: approved.decisionDate },
        runId: item.runId,
        items: [],
        reasonCodes: [],
      });
      expect(matchingSignatures(secret, toApproved)).toHaveLength(1);
    } finally {
      await unsubscribe();
      await receiver.close();
    }
  });

  it('go each its own way in a batch that mixes channels: $inquire for the PAS payer, the browser for the portal', async () => {
    const tenant = await payerApiTenant('pas-check-mixed', { payer, payerId: PAYER_ID });
    await createPortalAccount(tenant, {
      externalId: 'sandbox-front-desk',
      payerIds: [SANDBOX_PAYER_ID],
      username: SANDBOX_USERS[0]!.username,
      password: SANDBOX_USERS[0]!.password,
    });
    const pasRequest = await createPasRequest(tenant, 'SBX-10001');
    const { run: submitRun } = await submitted(tenant, pasRequest);
    const number = submitRun.authorization.number;
    expect(number).toMatch(/^SBXPA-\d{6}$/);
    // The sandbox portal's demo authorization (docs/sandbox-portal.md): its reference is this request's id.
    const portalRequest = 'DEMO-APPROVED';
    await createRequest(tenant, portalRequest, SANDBOX_MEMBERS[0], SANDBOX_PAYER_ID);

    const batch = await checked(tenant, [pasRequest, portalRequest]);
    expect(batch).toMatchObject({ total: 2, done: 2, failed: 0 });
    expect(batch.items.map((item: any) => [item.requestExternalId, item.outcome, item.authorization])).toEqual([
      [pasRequest, 'status_read', { status: 'approved', number, decisionDate: expect.any(String) }],
      [portalRequest, 'status_read', { status: 'approved', number: 'SBX-AUTH-000101', decisionDate: '2026-02-20' }],
    ]);
    const [pasRun, portalRun] = await Promise.all(
      batch.items.map((item: any) => recordOf(tenant, item.requestExternalId, item.runId)),
    );
    expect(pasRun).toMatchObject({ channel: 'pas', payerConnectionId: tenant.connection.externalId, screenshots: [] });
    expect(pasRun!.portalAccountId).toBeUndefined();
    expect(portalRun).toMatchObject({ channel: 'portal', portalAccountId: 'sandbox-front-desk', portalId: 'sandbox' });
    expect(portalRun!.payerConnectionId).toBeUndefined();
    expect(portalRun!.screenshots.length).toBeGreaterThan(0);

    const [viaPas, viaPortal] = await Promise.all([getRequest(tenant, pasRequest), getRequest(tenant, portalRequest)]);
    expect(viaPas.authorization).toMatchObject({ status: 'approved', number, channel: 'pas' });
    expect(viaPas.authorization.items).toHaveLength(2);
    expect(viaPortal.authorization).toMatchObject({ status: 'approved', channel: 'portal', items: [], reasons: [] });
  });

  it('read decisions from a payer that answers in the Parameters shape, on submit and on check', async () => {
    const tenant = await payerApiTenant('pas-check-parameters', {
      payer,
      payerId: PAYER_ID,
      answerShape: 'parameters',
    });
    // The payer registered this client for Parameters answers (its operator page's client list says so).
    const page = await (
      await fetch(`${payer.url}/operator`, { headers: { authorization: `Bearer ${payer.operatorToken}` } })
    ).text();
    expect(page).toContain(`<td>${tenant.payerClientId}</td><td>parameters</td>`);

    const approvedRequest = await createPasRequest(tenant, 'SBX-10001');
    const { run } = await submitted(tenant, approvedRequest);
    expect(run.authorization).toMatchObject({ status: 'approved', number: expect.stringMatching(/^SBXPA-/) });
    expect((await getRequest(tenant, approvedRequest)).authorization.items).toHaveLength(2);

    const pendedRequest = await createPasRequest(tenant, 'SBX-10004');
    const { bundleIdentifier } = await submitted(tenant, pendedRequest);
    expect((await getRequest(tenant, pendedRequest)).authorization.status).toBe('pending');
    await decide(bundleIdentifier, 'denied');
    const batch = await checked(tenant, [pendedRequest]);
    expect(batch.items[0]).toMatchObject({ outcome: 'status_read', authorization: { status: 'denied', number: null } });
    const denied = (await getRequest(tenant, pendedRequest)).authorization;
    expect(denied).toMatchObject({ status: 'denied', channel: 'pas' });
    expect(denied.items.map((item: any) => [item.status, item.reviewActionCode, item.reasons[0]?.code])).toEqual([
      ['denied', 'A3', 'SBX-MN'],
      ['denied', 'A3', 'SBX-MN'],
    ]);
  });

  it('re-check a pended claim when due, through $inquire, and end the re-checks once it is decided', async () => {
    const tenant = await payerApiTenant('pas-check-recheck', { payer, payerId: PAYER_ID });
    const externalId = await createPasRequest(tenant, 'SBX-10003');
    const { bundleIdentifier } = await submitted(tenant, externalId);
    // The submission read a pended claim: a re-check is scheduled on behalf of the run's connection.
    const schedule = (await scheduleOf(tenant.clientId, externalId))!;
    expect(schedule).toMatchObject({
      clientUserId: tenant.clientUserId,
      channel: 'pas',
      payerConnectionId: tenant.connection.externalId,
    });
    expect(schedule.portalAccountId).toBeUndefined();
    // An $inquire costs no login: the first step is the payer API's 15 minutes, not a portal's hour.
    expect((Date.parse(schedule.dueAt) - Date.parse(schedule.since)) / 1000).toBe(PAYER_RECHECK_EVERY_SECONDS_DEFAULT);
    const number = `PTEST-RECHECK-${Date.now()}`;
    await decide(bundleIdentifier, 'approved', number);

    const past = new Date(Date.now() - 60_000).toISOString();
    expect(await dynamoRecheckStore.reschedule(schedule, { checksDone: 0, dueAt: past, now: past })).toBe(true);
    await rechecks.runOnce();
    const decided = await pollUntil(
      () => getRequest(tenant, externalId),
      (request) => request.authorization.status !== 'pending',
      { timeoutMs: 60_000, intervalMs: 250 },
    );
    expect(decided.authorization).toMatchObject({ status: 'approved', number, channel: 'pas' });
    const [entry] = await historyOf(tenant, externalId);
    expect(entry!.changedBy.kind).toBe('run');
    const run = await recordOf(tenant, externalId, entry!.changedBy.runId);
    expect(run).toMatchObject({ kind: 'check-auth-status', channel: 'pas', outcome: 'status_read', screenshots: [] });
    expect(await scheduleOf(tenant.clientId, externalId)).toBeUndefined();
  });

  it('keep the connection that read a pended claim over the oldest, also on a schedule written the old way, until it is disabled', async () => {
    const tenant = await payerApiTenant('pas-check-recheck-kept', { payer, payerId: PAYER_ID });
    // The organization registered twice at the payer: the rules take the oldest connection, the client named the newer.
    const jwksUri = tenant.connection.jwksUri as string;
    const named = (await createConnection(tenant, PAYER_ID, await registerAtPayer(payer, jwksUri)))
      .externalId as string;
    const oldest = tenant.connection.externalId as string;
    const externalId = await createPasRequest(tenant, 'SBX-10003');
    const res = await submit(tenant, externalId, { payerConnectionExternalId: named });
    expect(res.status, res.text).toBe(202);
    expect((await settledRun(tenant, locationOf(res))).authorization.status).toBe('pended');
    const schedule = (await scheduleOf(tenant.clientId, externalId))!;
    expect(schedule).toMatchObject({ channel: 'pas', payerConnectionId: named });

    /** Runs the due re-check; the check-auth-status run it started, once ended. */
    const rechecked = async () => {
      const [previous] = await dynamoRunStore.latestRuns(tenant.clientId, externalId, 1);
      await rechecks.runOnce();
      const [run] = await dynamoRunStore.latestRuns(tenant.clientId, externalId, 1);
      expect(run!.runId, 'a re-check run was started').not.toBe(previous!.runId);
      return pollUntil(
        () => recordOf(tenant, externalId, run!.runId),
        (current) => current.status === 'succeeded' || current.status === 'failed',
        { timeoutMs: 60_000, intervalMs: 250 },
      );
    };
    const past = () => new Date(Date.now() - 60_000).toISOString();
    expect(await dynamoRecheckStore.reschedule(schedule, { checksDone: 0, dueAt: past(), now: past() })).toBe(true);
    expect(await rechecked()).toMatchObject({ kind: 'check-auth-status', channel: 'pas', payerConnectionId: named });

    // The same schedule as items were written before the channel was kept: the connection's id as portalAccountId.
    const current = (await scheduleOf(tenant.clientId, externalId))!;
    const { channel: _channel, payerConnectionId: _id, ...item } = recheckEntity.toItem({ ...current, dueAt: past() });
    await dynamo.send(new PutCommand({ TableName: tableName(), Item: { ...item, portalAccountId: named } }));
    expect(await rechecked()).toMatchObject({ channel: 'pas', payerConnectionId: named, outcome: 'status_read' });
    expect((await getRequest(tenant, externalId)).authorization).toMatchObject({ status: 'pending', channel: 'pas' });

    // Disabled: the rules choose again, the oldest active connection.
    const disabled = await call('PUT', `${PAYER_CONNECTIONS}/${named}`, {
      apiKey: tenant.apiKey,
      body: {
        clientUserId: tenant.clientUserId,
        payerId: PAYER_ID,
        clientId: tenant.payerClientId,
        status: 'disabled',
      },
    });
    expect(disabled.status, disabled.text).toBe(200);
    const again = (await scheduleOf(tenant.clientId, externalId))!;
    expect(
      await dynamoRecheckStore.reschedule(again, { checksDone: again.checksDone, dueAt: past(), now: past() }),
    ).toBe(true);
    expect(await rechecked()).toMatchObject({ channel: 'pas', payerConnectionId: oldest });
  });
});
