import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamoRunStore } from '#lib/runs/dynamo-run-store';
import { DOCUMENTS_DUE_DAYS, REQUESTED_DOCUMENTS } from '#local/pas-payer/documentation-requests';
import { PAS_DOCUMENTS_MEMBER_ID } from '#local/pas-payer/seed';
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
import { getRequest, locationOf, settledBatch, settledRun, startBatch } from './rpa-end-to-end-support.ts';

/*
 * More information requested (docs/payer-api.md): a pended PAS answer that asks for documentation (its
 * CommunicationRequests) shows as authorization.informationRequested and sends one
 * authorization.information_requested event, codes only. Submitted through the API to this file's own
 * local PAS payer (member SBX-10008 pends with a request for documents), over HTTP with real client assertions.
 */
let payer: OwnPayer;
const PAYER_ID = 'PTEST-INFORMATION';
let tenant: PayerApiTenant;

beforeAll(async () => {
  ({ payer, tenant } = await ownPayerAndTenant('pas-information', PAYER_ID, { inProcess: true }));
});
afterAll(() => payer?.close());

const LOINC = 'http://loinc.org';
const DAY_MS = 24 * 3600 * 1000;

const informationEventsOf = async (externalId: string) =>
  (await outboxItemsOf(tenant.clientId))
    .map((item) => item.event as { type: string; data: Record<string, any> })
    .filter(
      (event) => event.type === 'authorization.information_requested' && event.data.requestExternalId === externalId,
    );

/** A status read of the request through $inquire (a check-auth-status batch of one). */
const inquired = async (externalId: string) => {
  const started = await startBatch(tenant, [externalId]);
  expect(started.status, started.text).toBe(202);
  const batch = await settledBatch(tenant, locationOf(started));
  expect(batch.items[0]).toMatchObject({ status: 'succeeded', outcome: 'status_read' });
  return (await getRequest(tenant, externalId)).authorization;
};

describe('a pended PAS answer that asks for more information', () => {
  it('shows what is asked, sends one codes-only event, and a later $inquire of the same request sends none', async () => {
    const externalId = await createPasRequest(tenant, PAS_DOCUMENTS_MEMBER_ID);
    expect((await getRequest(tenant, externalId)).authorization.informationRequested).toBeNull();
    const res = await submit(tenant, externalId);
    expect(res.status, res.text).toBe(202);
    const run = await settledRun(tenant, locationOf(res));
    expect(run.outcome).toBe('submitted');
    const record = await dynamoRunStore.getRun({ clientId: tenant.clientId, externalId, runId: run.runId });
    const sentAt = Date.parse(record!.submission!.sentAt!);
    const dueBy = new Date(sentAt + DOCUMENTS_DUE_DAYS * DAY_MS).toISOString().slice(0, 10);

    const pended = (await getRequest(tenant, externalId)).authorization;
    expect(pended.status).toBe('pending');
    expect(pended.informationRequested).toEqual({
      requestedAt: pended.lastCheckedAt,
      dueBy,
      items: REQUESTED_DOCUMENTS.map((document) => ({
        code: { system: LOINC, code: document.loinc },
        text: document.note,
        sequence: document.sequence,
      })),
    });

    const [event, ...more] = await informationEventsOf(externalId);
    expect(more).toHaveLength(0);
    expect(event!.data).toEqual({
      requestExternalId: externalId,
      dueBy,
      items: REQUESTED_DOCUMENTS.map((document) => ({
        system: LOINC,
        code: document.loinc,
        sequence: document.sequence,
      })),
    });
    // The payer's words stay in the API.
    for (const document of REQUESTED_DOCUMENTS) expect(JSON.stringify(event)).not.toContain(document.note);
    const history = await historyOf(tenant, externalId);
    expect(history).toHaveLength(1);
    expect(history[0]).toMatchObject({
      current: { status: 'pending' },
      informationRequested: pended.informationRequested,
    });

    const read = await inquired(externalId);
    expect(read.lastCheckedAt > pended.lastCheckedAt).toBe(true);
    expect(read.informationRequested).toEqual(pended.informationRequested);
    expect(await informationEventsOf(externalId)).toHaveLength(1);
    expect(await historyOf(tenant, externalId)).toHaveLength(1);

    // Decided: nothing is asked any more, and nothing new is sent about it.
    const [claim] = await claimsOf(payer, record!.submission!.bundleIdentifier);
    await decideAtPayer(payer, { claimId: claim!.claimId, status: 'approved', number: `PTEST-INFO-${Date.now()}` });
    const decided = await inquired(externalId);
    expect(decided).toMatchObject({ status: 'approved', informationRequested: null });
    expect(await informationEventsOf(externalId)).toHaveLength(1);
  });
});
