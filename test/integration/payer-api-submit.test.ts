import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RpaRunRecord } from '#lib/entities/rpa';
import { uuidv7 } from '#lib/ids';
import { payerTasks } from '#lib/payer-api/payer-task-service';
import { dynamoRunStore } from '#lib/runs/dynamo-run-store';
import { DENIAL_NOTE } from '#local/pas-payer/claim-response';
import { uniqueId } from '#test/support/api';
import {
  claimsOf,
  createPasRequest,
  decideAtPayer,
  historyOf,
  type OwnPayer,
  ownPayerAndTenant,
  type PayerApiTenant,
  submit,
  subscribeToChanges,
} from '#test/support/payer-api';
import { outboxItemsOf } from './events-support.ts';
import { getRequest, locationOf, settledRun } from './rpa-end-to-end-support.ts';
import { matchingSignatures, startReceiver } from './webhook-receiver-support.ts';

/*
 * Submitting through the payer's API (POST …/Requests/{externalId}/submit, docs/payer-api.md): the run's
 * SubmitToPayer execution on the shared stack sends the PAS Bundle to a local PAS payer over HTTP, with
 * the tenant's real client assertions, and records what it answered. The payer is this file's own
 * (local/pas-payer/server.ts, in this process), so that what it counts per Bundle identifier, claims made
 * and submissions received, can be read: a retried or reconciled submission must make one claim.
 */
let payer: OwnPayer;
const PAYER_ID = 'PTEST-SUBMIT';
let tenant: PayerApiTenant;

beforeAll(async () => {
  ({ payer, tenant } = await ownPayerAndTenant('pas-submit', PAYER_ID));
});
afterAll(() => payer?.close());

const recordOf = async (externalId: string, runId: string) =>
  (await dynamoRunStore.getRun({ clientId: tenant.clientId, externalId, runId }))!;

/** A request for `memberId` submitted and its run ended: the run, its record and its Bundle identifier. */
const submitted = async (memberId: string) => {
  const externalId = await createPasRequest(tenant, memberId);
  const res = await submit(tenant, externalId);
  expect(res.status, res.text).toBe(202);
  const run = await settledRun(tenant, locationOf(res));
  const record = await recordOf(externalId, run.runId);
  return { externalId, res, run, record, bundleIdentifier: record.submission!.bundleIdentifier };
};

const stepsOf = (run: { steps: Array<{ step: string; detail?: string }> }) =>
  run.steps.map(({ step, detail }) => (detail === undefined ? step : `${step}: ${detail}`));

const itemsOf = (authorization: { items: any[] }) =>
  authorization.items.map((item) => [
    item.sequence,
    item.status,
    item.reviewActionCode,
    item.reasons.map((r: any) => r.code),
  ]);

describe('a submission the payer decides at once', () => {
  it('is approved: 202 and Location, the run submitted, the authorization per item, history and webhook', async () => {
    const receiver = await startReceiver();
    const { secret, unsubscribe } = await subscribeToChanges(tenant, receiver.url);
    try {
      const { externalId, res, run, record, bundleIdentifier } = await submitted('SBX-10001');
      expect(res.body).toEqual({ runId: run.runId, status: 'queued' });
      expect(locationOf(res)).toBe(`/api/external/v1/ServiceReviews/requests/${externalId}/rpa/runs/${run.runId}`);
      expect(run).toMatchObject({ kind: 'submit', status: 'succeeded', outcome: 'submitted', portalAccountId: null });
      expect(stepsOf(run)).toEqual([
        'queued',
        `payer connection selected: ${tenant.connection.externalId}`,
        'started: attempt 1',
        'sending the request to the payer',
        "the payer's API answered the submission; request updated: submitted",
      ]);
      expect(record).toMatchObject({ channel: 'pas', payerConnectionId: tenant.connection.externalId });
      expect(payer.countsOf(bundleIdentifier)).toEqual({ claims: 1, submissions: 1 });

      const { authorization } = await getRequest(tenant, externalId);
      const number = authorization.number as string;
      expect(number).toMatch(/^SBXPA-\d{6}$/);
      expect(run.authorization).toEqual({ status: 'approved', number, decisionDate: authorization.decisionDate });
      expect(authorization).toMatchObject({ status: 'approved', channel: 'pas', reasons: [] });
      expect(authorization.decisionDate).toBe(new Date().toISOString().slice(0, 10));
      const cpt = 'http://www.ama-assn.org/go/cpt';
      expect(authorization.items).toEqual(
        [
          ['72148', 1],
          ['72149', 2],
        ].map(([code, quantity], i) => ({
          sequence: i + 1,
          serviceCode: { system: cpt, code },
          status: 'approved',
          reviewActionCode: 'A1',
          number: `${number}-${i + 1}`,
          authorizedPeriod: { start: '2026-03-02', end: '2026-03-06' },
          authorizedQuantity: { value: quantity, unit: 'Units' },
          reasons: [],
        })),
      );
      const [entry, ...older] = await historyOf(tenant, externalId);
      expect(older).toEqual([]);
      expect(entry).toMatchObject({
        previous: { status: 'not_submitted' },
        current: { status: 'approved', number, decisionDate: authorization.decisionDate },
        changedBy: { kind: 'run', runId: run.runId },
      });

      const [delivery] = await receiver.waitFor(1, 30_000);
      expect(JSON.parse(delivery!.body)).toMatchObject({
        type: 'authorization.status_changed',
        data: { requestExternalId: externalId, current: { status: 'approved', number }, runId: run.runId },
      });
      expect(matchingSignatures(secret, delivery!)).toHaveLength(1);
    } finally {
      await unsubscribe();
      await receiver.close();
    }
  });

  it('is denied with the payer’s reason per item, or approved in part item by item', async () => {
    const [denied, partial] = await Promise.all([submitted('SBX-10002'), submitted('SBX-10005')]);
    for (const { run } of [denied, partial]) expect(run.outcome).toBe('submitted');

    const deniedAuthorization = (await getRequest(tenant, denied.externalId)).authorization;
    expect(deniedAuthorization).toMatchObject({ status: 'denied', number: null, channel: 'pas' });
    expect(itemsOf(deniedAuthorization)).toEqual([
      [1, 'denied', 'A3', ['SBX-MN']],
      [2, 'denied', 'A3', ['SBX-MN']],
    ]);
    expect(deniedAuthorization.items[0].reasons[0]).toEqual({
      system: 'https://codesystem.x12.org/external/886',
      code: 'SBX-MN',
      text: expect.stringContaining('Medical necessity'),
    });

    const partialAuthorization = (await getRequest(tenant, partial.externalId)).authorization;
    expect(partialAuthorization).toMatchObject({ status: 'partially_approved', channel: 'pas' });
    expect(itemsOf(partialAuthorization)).toEqual([
      [1, 'approved', 'A1', []],
      [2, 'denied', 'A3', ['SBX-MN']],
    ]);
    expect(partialAuthorization.items.map((item: any) => item.number)).toEqual([
      `${partialAuthorization.number}-1`,
      null,
    ]);
    // The approved item keeps what was granted beside the denied one's reason.
    expect(partialAuthorization.items[0]).toMatchObject({
      authorizedPeriod: { start: '2026-03-02', end: '2026-03-06' },
      authorizedQuantity: { value: 1, unit: 'Units' },
    });
  });

  it('keeps why in the history (codes and text) and tells it in the event (codes only, never the text)', async () => {
    const [denied, partial] = await Promise.all([submitted('SBX-10002'), submitted('SBX-10005')]);
    const outbox = await outboxItemsOf(tenant.clientId);
    const NOTE = { system: null, code: 'note' };
    for (const [{ externalId }, statuses, whole] of [
      [denied, ['denied', 'denied'], [NOTE]],
      [partial, ['approved', 'denied'], []],
    ] as const) {
      const { authorization } = await getRequest(tenant, externalId);
      const reason = authorization.items[1].reasons[0];
      expect(reason).toMatchObject({ code: 'SBX-MN', text: expect.stringContaining('Medical necessity') });
      const [entry] = await historyOf(tenant, externalId);
      expect(entry!.current.status).toBe(authorization.status);
      expect(entry!.items).toEqual(
        authorization.items.map(({ sequence, status, reasons }: any) => ({ sequence, status, reasons })),
      );
      // A denial in whole is explained for the whole too: the payer's process note, with its text.
      expect(entry!.reasons).toEqual(whole.map((reason) => ({ ...reason, text: DENIAL_NOTE })));
      expect(entry!.reasons).toEqual(authorization.reasons);

      const stored = outbox.filter(
        (item: any) =>
          item.event.type === 'authorization.status_changed' && item.event.data.requestExternalId === externalId,
      );
      expect(stored).toHaveLength(1);
      const { data } = stored[0]!.event as any;
      expect(data.items).toEqual(
        statuses.map((status, i) => ({
          sequence: i + 1,
          status,
          reasonCodes: status === 'denied' ? [{ system: reason.system, code: 'SBX-MN' }] : [],
        })),
      );
      expect(data.reasonCodes).toEqual(whole);
      // The payer's words stay in the API: no part of the stored event carries them.
      expect(JSON.stringify(stored[0])).not.toContain(reason.text);
      expect(JSON.stringify(stored[0])).not.toContain(DENIAL_NOTE.slice(0, 40));
      expect(JSON.stringify(stored[0])).not.toContain('"text"');
    }
  });
});

describe('a submission the payer refuses or cannot take now', () => {
  it('ends payer_refused for an unknown member, its steps naming the request’s field and the payer’s code', async () => {
    const { externalId, run, bundleIdentifier } = await submitted('SBX-UNKNOWN-1');
    expect(run).toMatchObject({ status: 'failed', outcome: 'payer_refused', authorization: null });
    const refusals = run.steps.filter(
      (step: { step: string }) => step.step === 'the payer refused a field of the request',
    );
    // X12 901 reject reason 75 (Subscriber/Insured Not Found), at the Coverage's subscriberId: the member id.
    expect(refusals.map((step: { detail: string }) => step.detail)).toEqual(['75 /patient/memberId']);
    expect((await getRequest(tenant, externalId)).authorization).toMatchObject({
      status: 'not_submitted',
      channel: null,
    });
    expect(payer.countsOf(bundleIdentifier)).toEqual({ claims: 0, submissions: 1 });
  });

  it('waits after a 429 (its Retry-After) or a 503 and sends the same Bundle again: one claim', async () => {
    const WAIT = "the payer's API did not answer; the attempt will be retried";
    const outcomes = await Promise.all([submitted('SBX-10006'), submitted('SBX-10007')]);
    const waits = outcomes.map(({ run, record, bundleIdentifier }) => {
      expect(run).toMatchObject({ status: 'succeeded', outcome: 'submitted', authorization: { status: 'approved' } });
      const steps: Array<{ step: string; detail?: string }> = run.steps;
      const at = (step: string, from = 0) => steps.findIndex((entry, i) => i >= from && entry.step === step);
      const firstSend = at('sending the request to the payer');
      const waited = at(WAIT);
      // Sent, refused for now, waited, then attempt 2 sends the same Bundle again: one wait, two sends.
      expect(firstSend).toBeGreaterThan(-1);
      expect(waited).toBeGreaterThan(firstSend);
      expect(at('sending the request to the payer', waited)).toBeGreaterThan(at('started', waited));
      expect(steps.filter((entry) => entry.step === WAIT)).toHaveLength(1);
      expect(steps.filter((entry) => entry.step === 'sending the request to the payer')).toHaveLength(2);
      expect(steps[at('started', waited)]!.detail).toBe('attempt 2');
      expect(record.payerAttempts).toBe(1);
      expect(payer.countsOf(bundleIdentifier)).toEqual({ claims: 1, submissions: 2 });
      return steps[waited]!.detail;
    });
    // The 429's Retry-After: 1 is the wait; the 503 gave none: our back-off, 1 to 5 s for a first retry.
    expect(waits[0]).toBe('in 1 s');
    expect(waits[1]).toMatch(/^in [1-5] s$/);
  });
});

/**
 * A submit run as an attempt that crashed after sending leaves it: marked sent with `bundleIdentifier`,
 * no answer recorded (submit-pas-claim.ts writes `sentAt` before it sends).
 */
const crashedRun = (externalId: string, bundleIdentifier: string): RpaRunRecord => {
  const at = new Date().toISOString();
  return {
    clientId: tenant.clientId,
    externalId,
    runId: uuidv7(),
    kind: 'submit',
    clientUserId: tenant.clientUserId,
    organizationId: tenant.organizationId,
    channel: 'pas',
    payerConnectionId: tenant.connection.externalId,
    submission: { bundleIdentifier, sentAt: at },
    status: 'running',
    steps: [{ at, step: 'queued' }],
    enteredValues: {},
    screenshots: [],
    version: 1,
    createdAt: at,
    updatedAt: at,
  };
};

/** The payer-API task of SubmitToPayer, in this process, on the stack's table and token function. */
const submitTask = async (run: RpaRunRecord) => {
  await dynamoRunStore.createRun(run);
  return payerTasks.submit({ clientId: run.clientId, requestExternalId: run.externalId, runId: run.runId });
};

describe('a crash between sending and recording', () => {
  it('is reconciled by $inquire: the payer’s decision is recorded and nothing is sent again', async () => {
    const { externalId, bundleIdentifier } = await submitted('SBX-10003');
    expect((await getRequest(tenant, externalId)).authorization.status).toBe('pending');
    const [claim] = await claimsOf(payer, bundleIdentifier);
    const number = `PTEST-CRASH-${Date.now()}`;
    await decideAtPayer(payer, { claimId: claim!.claimId, status: 'approved', number });
    expect(payer.countsOf(bundleIdentifier)).toEqual({ claims: 1, submissions: 1 });

    const crashed = crashedRun(externalId, bundleIdentifier);
    const result = await submitTask(crashed);
    expect(result).toMatchObject({ runId: crashed.runId, status: 'succeeded', outcome: 'submitted', waitSeconds: 0 });

    const reconciled = await recordOf(externalId, crashed.runId);
    expect(stepsOf(reconciled)).toContain('asking the payer whether an earlier attempt reached it');
    expect(stepsOf(reconciled)).not.toContain('sending the request to the payer');
    expect(reconciled.authorization).toMatchObject({ status: 'approved', number });
    expect((await getRequest(tenant, externalId)).authorization).toMatchObject({ status: 'approved', number });
    expect(payer.countsOf(bundleIdentifier)).toEqual({ claims: 1, submissions: 1 });
  });

  it('sends the Bundle when $inquire finds that it never reached the payer', async () => {
    const externalId = await createPasRequest(tenant, 'SBX-10001');
    const bundleIdentifier = crypto.randomUUID();
    const crashed = crashedRun(externalId, bundleIdentifier);
    const result = await submitTask(crashed);
    expect(result).toMatchObject({ status: 'succeeded', outcome: 'submitted' });
    const steps = stepsOf(await recordOf(externalId, crashed.runId));
    const asked = steps.indexOf('asking the payer whether an earlier attempt reached it');
    expect(asked).toBeGreaterThan(-1);
    expect(steps.indexOf('sending the request to the payer')).toBeGreaterThan(asked);
    expect(payer.countsOf(bundleIdentifier)).toEqual({ claims: 1, submissions: 1 });
    expect((await getRequest(tenant, externalId)).authorization.status).toBe('approved');
  });
});

describe('an Idempotency-Key', () => {
  it('makes one submission of two calls with one body, and refuses another body (422)', async () => {
    const externalId = await createPasRequest(tenant, 'SBX-10001');
    const key = uniqueId('idem');
    const first = await submit(tenant, externalId, {}, { 'Idempotency-Key': key });
    expect(first.status, first.text).toBe(202);
    const replay = await submit(tenant, externalId, {}, { 'Idempotency-Key': key });
    expect(replay.status).toBe(202);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body.runId).toBe(first.body.runId);
    expect(locationOf(replay)).toBe(locationOf(first));
    const other = await submit(tenant, externalId, { dryRun: false }, { 'Idempotency-Key': key });
    expect(other.status).toBe(422);
    expect(other.body.detail).toMatch(/already used for a different request/);

    await settledRun(tenant, locationOf(first));
    const runs = await dynamoRunStore.latestRuns(tenant.clientId, externalId, 10);
    expect(runs.map((run) => run.runId)).toEqual([first.body.runId]);
    expect(payer.countsOf(runs[0]!.submission!.bundleIdentifier)).toEqual({ claims: 1, submissions: 1 });
  });
});
