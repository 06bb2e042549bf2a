import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamoRunStore } from '#lib/runs/dynamo-run-store';
import {
  createConnection,
  createPasRequest,
  ownPayer,
  type PayerApiTenant,
  payerApiTenant,
  setPayerEndpoint,
  submit,
} from '#test/support/payer-api';
import { getRequest, locationOf, settledBatch, settledRun, startBatch } from './rpa-end-to-end-support.ts';

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
  payer = await ownPayer();
  await setPayerEndpoint(PAYER_ID, payer);
  await setPayerEndpoint(UNCOVERED_PAYER_ID, payer, 'none');
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
  return { externalId, sentAt: Date.parse(record!.submission!.sentAt!) };
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
