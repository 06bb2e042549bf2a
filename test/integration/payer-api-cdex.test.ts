import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamoAttachmentStore } from '#lib/attachments/dynamo-attachment-store';
import { s3ObjectStorage } from '#lib/attachments/s3-object-storage';
import type { RpaRunRecord } from '#lib/entities/rpa';
import { uuidv7 } from '#lib/ids';
import { type CdexAttachment, loincCodeOf } from '#lib/payer-api/cdex/attachment-content';
import { submitAttachmentsByCdex } from '#lib/payer-api/cdex/submit-attachments';
import { requestPayerToken } from '#lib/payer-api/lambda-token-source';
import { postFhirOperation } from '#lib/payer-api/pas-transport';
import { attachmentsWithData } from '#lib/payer-api/payer-attachments';
import { payerGateway } from '#lib/payer-api/payer-gateway';
import { type PayerTaskContext, payerTaskContextOf } from '#lib/payer-api/payer-task-context';
import { dynamoPayerConnectionStore } from '#lib/payer-connections/dynamo-payer-connection-store';
import { dynamoPayerEndpointStore } from '#lib/payer-endpoints/dynamo-payer-endpoint-store';
import { dynamoRequestStore } from '#lib/requests/dynamo-request-store';
import { dynamoRunStore } from '#lib/runs/dynamo-run-store';
import { PAS_DOCUMENTS_MEMBER_ID } from '#local/pas-payer/seed';
import {
  createPasRequest,
  type OwnPayer,
  ownPayerAndTenant,
  type PayerApiTenant,
  submit,
} from '#test/support/payer-api';
import { sample, sha256, upload } from './attachments-support.ts';
import { getRequest, locationOf, settledBatch, settledRun, startBatch } from './rpa-end-to-end-support.ts';

/*
 * CDex $submit-attachment (docs/payer-api.md, "CDex attachments"): the documents a pended PAS answer asks
 * for, sent to this file's own local PAS payer by submitAttachmentsByCdex over HTTP with a real token
 * (the payer token function, a real client assertion). The payer files them on the claim and stops asking
 * for their codes: the next $inquire shows nothing requested any more.
 */
let payer: OwnPayer;
const PAYER_ID = 'PTEST-CDEX';
let tenant: PayerApiTenant;
let ctx: PayerTaskContext;

beforeAll(async () => {
  ({ payer, tenant } = await ownPayerAndTenant('pas-cdex', PAYER_ID, {
    flags: { attachmentSubmission: 'cdex' },
    inProcess: true,
  }));
  ctx = payerTaskContextOf({
    runs: dynamoRunStore,
    requests: dynamoRequestStore,
    connectionOf: (clientId, externalId) => dynamoPayerConnectionStore.get(clientId, externalId),
    markAttention: async () => {},
    endpointOf: (payerId) => dynamoPayerEndpointStore.get(payerId),
    attachmentsOf: attachmentsWithData(dynamoAttachmentStore, s3ObjectStorage),
    call: payerGateway({ token: requestPayerToken, post: postFhirOperation }),
  });
});
afterAll(() => payer?.close());

/** A request of the member the payer pends with a request for documents, submitted; its settled run. */
const pendedWithRequest = async () => {
  const externalId = await createPasRequest(tenant, PAS_DOCUMENTS_MEMBER_ID);
  const res = await submit(tenant, externalId);
  expect(res.status, res.text).toBe(202);
  const settled = await settledRun(tenant, locationOf(res));
  expect(settled.outcome).toBe('submitted');
  const run = (await dynamoRunStore.getRun({ clientId: tenant.clientId, externalId, runId: settled.runId }))!;
  expect((await getRequest(tenant, externalId)).authorization.informationRequested.items).toHaveLength(2);
  return { externalId, run, claimIdentifier: run.submission!.bundleIdentifier };
};

/** The documents, uploaded through the API with their LOINC code as documentType, as CDex sends them. */
const uploaded = async (externalId: string, documents: { documentType: string; bytes: Buffer }[]) => {
  for (const { documentType, bytes } of documents) {
    const res = await upload(tenant.apiKey, externalId, { fileName: 'doc.pdf', bytes }, { documentType });
    expect(res.status, res.text).toBe(201);
  }
  const records = await dynamoAttachmentStore.listByRequest(tenant.clientId, externalId);
  const withData = await ctx.attachmentsOf(tenant.clientId, externalId);
  return withData.map(
    (attachment): CdexAttachment => ({
      ...attachment,
      code: loincCodeOf(records.find((record) => record.attachmentId === attachment.attachmentId)?.documentType),
    }),
  );
};

/** A submit run still running (the run an answer to the request for information goes in). */
const runningRun = async (settled: RpaRunRecord): Promise<RpaRunRecord> => {
  const at = new Date().toISOString();
  const run: RpaRunRecord = { ...settled, runId: uuidv7(), status: 'running', steps: [], version: 1, createdAt: at };
  delete run.outcome;
  await dynamoRunStore.createRun({ ...run, updatedAt: at });
  return run;
};

const send = async (externalId: string, run: RpaRunRecord, attachments: CdexAttachment[], claimIdentifier: string) =>
  submitAttachmentsByCdex(ctx, {
    ref: { clientId: tenant.clientId, externalId, runId: run.runId },
    run,
    request: (await dynamoRequestStore.get(tenant.clientId, externalId))!,
    endpoint: (await dynamoPayerEndpointStore.get(PAYER_ID))!,
    payerId: PAYER_ID,
    attachments,
    claimIdentifier,
  });

const inquired = async (externalId: string) => {
  const started = await startBatch(tenant, [externalId]);
  expect(started.status, started.text).toBe(202);
  const batch = await settledBatch(tenant, locationOf(started));
  expect(batch.items[0]).toMatchObject({ status: 'succeeded', outcome: 'status_read' });
  return (await getRequest(tenant, externalId)).authorization;
};

describe('documents sent by CDex $submit-attachment to the local PAS payer', () => {
  it('are filed on the claim, once each, and the payer no longer asks for their codes', async () => {
    expect((await dynamoPayerEndpointStore.get(PAYER_ID))?.attachmentSubmission).toBe('cdex');
    const { externalId, run: settled, claimIdentifier } = await pendedWithRequest();
    const plan = sample.pdf();
    const notes = sample.pdf(2048);
    const attachments = await uploaded(externalId, [
      { documentType: '18776-5', bytes: plan },
      { documentType: '11506-3', bytes: notes },
    ]);

    const run = await runningRun(settled);
    expect(await send(externalId, run, attachments, claimIdentifier)).toBe('sent');
    const documents = payer.documentsOfClaim(claimIdentifier);
    expect(documents.map(({ receivedAt: _, ...document }) => document)).toEqual(
      expect.arrayContaining([
        // The plan of care was asked for item 1; the progress notes for the whole request.
        { code: '18776-5', lineItems: [1], contentType: 'application/pdf', size: plan.length, sha256: sha256(plan) },
        { code: '11506-3', lineItems: [], contentType: 'application/pdf', size: notes.length, sha256: sha256(notes) },
      ]),
    );
    expect(documents).toHaveLength(2);
    const steps = (await dynamoRunStore.getRun({ clientId: tenant.clientId, externalId, runId: run.runId }))!.steps;
    expect(steps.map((step) => step.step)).toEqual([
      'sending the documents to the payer (CDex $submit-attachment)',
      'the payer took the documents',
    ]);

    // Sent again (a retry): the payer keeps each document once.
    expect(await send(externalId, run, attachments, claimIdentifier)).toBe('sent');
    expect(payer.documentsOfClaim(claimIdentifier)).toHaveLength(2);

    // The answer's requests for those codes are gone; the claim is still pended until the payer decides.
    const read = await inquired(externalId);
    expect(read).toMatchObject({ status: 'pending', informationRequested: null });
  });

  it('sends nothing for a run that ended, and a claim the payer does not know is refused with its OperationOutcome', async () => {
    const { externalId, run: settled, claimIdentifier } = await pendedWithRequest();
    const attachments = await uploaded(externalId, [{ documentType: '18776-5', bytes: sample.pdf() }]);

    expect(await send(externalId, settled, attachments, claimIdentifier)).toEqual({ kind: 'run_ended' });
    expect(payer.documentsOfClaim(claimIdentifier)).toEqual([]);

    const run = await runningRun(settled);
    const refused = await send(externalId, run, attachments, `${claimIdentifier}-unknown`);
    expect(refused).toMatchObject({
      kind: 'answer',
      status: 422,
      body: { resourceType: 'OperationOutcome', issue: [{ severity: 'error', code: 'not-found' }] },
    });
    expect(payer.documentsOfClaim(claimIdentifier)).toEqual([]);
    const still = await inquired(externalId);
    expect(still.informationRequested.items).toHaveLength(2);
  });

  it('answer the request for more information when the client submits naming them: no claim update is sent', async () => {
    const { externalId, claimIdentifier } = await pendedWithRequest();
    const attachments = await uploaded(externalId, [
      { documentType: '18776-5', bytes: sample.pdf() },
      { documentType: '11506-3', bytes: sample.pdf(1024) },
    ]);
    const attachmentIds = attachments.map((attachment) => attachment.attachmentId);
    const res = await submit(tenant, externalId, { attachmentIds });
    expect(res.status, res.text).toBe(202);
    const settled = await settledRun(tenant, locationOf(res));
    expect(settled.outcome).toBe('submitted');
    const run = (await dynamoRunStore.getRun({ clientId: tenant.clientId, externalId, runId: settled.runId }))!;
    expect(run.submission).toMatchObject({ action: 'update', relatedClaimIdentifier: claimIdentifier, sentAt: null });
    expect(run.steps.map((step) => step.step)).toContain('the payer took the documents');
    // The documents are on the claim the payer holds; no update of it was sent.
    expect(
      payer
        .documentsOfClaim(claimIdentifier)
        .map((document) => document.code)
        .sort(),
    ).toEqual(['11506-3', '18776-5']);
    expect(payer.submissionsWithIdentifier(run.submission!.bundleIdentifier)).toBe(0);
    // The claim read after the documents: still pended, nothing asked any more.
    expect((await getRequest(tenant, externalId)).authorization).toMatchObject({
      status: 'pending',
      informationRequested: null,
    });
  });
});
