import type { Bundle, Claim, ClaimItem, ClaimSupportingInfo } from '@medplum/fhirtypes';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RpaRunRecord } from '#lib/entities/rpa';
import { uuidv7 } from '#lib/ids';
import { payerTasks } from '#lib/payer-api/payer-task-service';
import { dynamoRunStore } from '#lib/runs/dynamo-run-store';
import { REQUESTED_DOCUMENTS } from '#local/pas-payer/documentation-requests';
import { PAS_DOCUMENTS_MEMBER_ID } from '#local/pas-payer/seed';
import { call } from '#test/support/api';
import {
  createPasRequest,
  type OwnPayer,
  ownPayerAndTenant,
  type PayerApiTenant,
  pasRequestBody,
  payerClaims,
  submit,
} from '#test/support/payer-api';
import { sample, upload } from './attachments-support.ts';
import { getRequest, locationOf, settledRun } from './rpa-end-to-end-support.ts';

/*
 * Claim updates and cancels through the payer's API (docs/payer-api.md, "Updates and cancels"): a request
 * the payer holds a claim of, changed and submitted again, goes as a PAS Claim update of that claim (never
 * a second claim), which the local payer applies to the claim it holds; the answer to a request for more
 * information goes the same way with the named attachments; a denied request is refused an update; a
 * cancel run ends the authorization `cancelled`. This file's own payer, over HTTP with real assertions.
 */
let payer: OwnPayer;
const PAYER_ID = 'PTEST-UPDATES';
let tenant: PayerApiTenant;

beforeAll(async () => {
  ({ payer, tenant } = await ownPayerAndTenant('pas-updates', PAYER_ID, { inProcess: true }));
});
afterAll(() => payer?.close());

const PAS = 'http://hl7.org/fhir/us/davinci-pas/StructureDefinition/';

const recordOf = async (externalId: string, runId: string) =>
  (await dynamoRunStore.getRun({ clientId: tenant.clientId, externalId, runId }))!;

/** Submits the request and waits for its run: the run's record. */
const submitted = async (externalId: string, body: Record<string, unknown> = {}) => {
  const res = await submit(tenant, externalId, body);
  expect(res.status, res.text).toBe(202);
  const run = await settledRun(tenant, locationOf(res));
  expect(run.outcome).toBe('submitted');
  return recordOf(externalId, run.runId);
};

const replace = async (externalId: string, memberId: string, overrides: Record<string, unknown>) => {
  const res = await call('PUT', `/api/external/v1.1/Requests/${encodeURIComponent(externalId)}`, {
    apiKey: tenant.apiKey,
    body: pasRequestBody(externalId, memberId, PAYER_ID, overrides),
  });
  expect(res.status, res.text).toBe(200);
};

const flagsOf = (entry: ClaimItem | ClaimSupportingInfo) => ({
  sequence: entry.sequence,
  changed: entry.extension?.find((extension) => extension.url === `${PAS}extension-infoChanged`)?.valueCode ?? null,
  cancelled: entry.modifierExtension?.some((extension) => extension.valueBoolean === true) ?? false,
  certificationType:
    entry.extension?.find((extension) => extension.url === `${PAS}extension-certificationType`)?.valueCodeableConcept
      ?.coding?.[0]?.code ?? null,
});

const claimsOfMember = async (memberId: string) =>
  (await payerClaims(payer)).filter((claim) =>
    claim.identifiers.some((identifier) => payer.heldClaim(identifier)?.memberId === memberId),
  );

describe('a request the payer holds a claim of, changed and submitted again', () => {
  it('goes as a Claim update of that claim: one claim at the payer, the changes flagged', async () => {
    const memberId = 'SBX-10003';
    const externalId = await createPasRequest(tenant, memberId);
    const first = await submitted(externalId);
    const firstId = first.submission!.bundleIdentifier;
    expect(first.submission).toMatchObject({ claim: { resourceType: 'Claim' } });
    // Procedure 72148 asked for more, 72149 no longer, 72150 added.
    await replace(externalId, memberId, {
      procedures: [
        { qualifierCode: 'HC', code: '72148', quantity: 3 },
        { qualifierCode: 'HC', code: '72150', quantity: 1 },
      ],
    });
    const update = await submitted(externalId);
    const updateId = update.submission!.bundleIdentifier;
    expect(update.submission).toMatchObject({ action: 'update', relatedClaimIdentifier: firstId });
    expect(update.steps.map((step) => step.step)).toContain('sending the update of the claim to the payer');

    expect(payer.countsOf(firstId)).toEqual({ claims: 1, submissions: 1 });
    expect(payer.countsOf(updateId)).toEqual({ claims: 0, submissions: 1 });
    const held = payer.heldClaim(updateId)!;
    expect(held).toBe(payer.heldClaim(firstId));
    const [claim] = held.request.entry!.map((entry) => entry.resource) as [Claim];
    expect(claim.meta?.profile).toEqual([`${PAS}profile-claim-update`]);
    expect(claim.related?.[0]?.claim?.identifier?.value).toBe(firstId);
    const replaced = (held.request as Bundle).entry!.find(
      (entry) => entry.fullUrl === claim.related![0]!.claim!.reference,
    );
    expect(replaced?.resource).toMatchObject({ resourceType: 'Claim', identifier: [{ value: firstId }] });
    expect(claim.item!.map(flagsOf)).toEqual([
      { sequence: 1, changed: 'changed', cancelled: false, certificationType: 'I' },
      { sequence: 2, changed: 'changed', cancelled: true, certificationType: '3' },
      { sequence: 3, changed: 'added', cancelled: false, certificationType: 'I' },
    ]);
    expect(claim.supportingInfo!.every((entry) => flagsOf(entry).changed === null)).toBe(true);

    const authorization = (await getRequest(tenant, externalId)).authorization;
    expect(authorization.status).toBe('pending');
    expect(authorization.items.map((item: any) => [item.sequence, item.status])).toEqual([
      [1, 'pending'],
      [2, 'cancelled'],
      [3, 'pending'],
    ]);
    expect(await claimsOfMember(memberId)).toHaveLength(1);
  });

  it('answers a request for more information with the named attachments: informationRequested clears', async () => {
    const externalId = await createPasRequest(tenant, PAS_DOCUMENTS_MEMBER_ID);
    const first = await submitted(externalId);
    expect((await getRequest(tenant, externalId)).authorization.informationRequested).not.toBeNull();
    const attachmentIds: string[] = [];
    for (const document of REQUESTED_DOCUMENTS) {
      const res = await upload(
        tenant.apiKey,
        externalId,
        { fileName: 'documents.pdf', contentType: 'application/pdf', bytes: sample.pdf() },
        { documentType: document.loinc },
      );
      expect(res.status, res.text).toBe(201);
      attachmentIds.push(res.body.attachmentId);
    }
    const update = await submitted(externalId, { attachmentIds });
    expect(update.submission).toMatchObject({
      action: 'update',
      relatedClaimIdentifier: first.submission!.bundleIdentifier,
      attachmentIds,
    });
    const authorization = (await getRequest(tenant, externalId)).authorization;
    expect(authorization).toMatchObject({ status: 'pending', informationRequested: null });
    const claim = payer.heldClaim(update.submission!.bundleIdentifier)!.claim;
    const added = claim.supportingInfo!.filter((entry) => flagsOf(entry).changed === 'added');
    expect(added).toHaveLength(REQUESTED_DOCUMENTS.length);
  });

  it('waits for a submission under way (409 submission_in_progress): no second claim', async () => {
    const externalId = await createPasRequest(tenant, 'SBX-10003');
    const first = await submit(tenant, externalId);
    expect(first.status, first.text).toBe(202);
    const second = await submit(tenant, externalId);
    expect(second.status, second.text).toBe(409);
    expect(second.body).toMatchObject({ reason: 'submission_in_progress', runId: first.body.runId });
    expect((await settledRun(tenant, locationOf(first))).outcome).toBe('submitted');
    expect((await dynamoRunStore.latestRuns(tenant.clientId, externalId, 10)).map((run) => run.runId)).toEqual([
      first.body.runId,
    ]);
  });

  it('refuses attachments the request does not have available (422 attachment_not_available)', async () => {
    const externalId = await createPasRequest(tenant, 'SBX-10003');
    const res = await submit(tenant, externalId, { attachmentIds: ['no-such-attachment'] });
    expect(res.status, res.text).toBe(422);
    expect(res.body).toMatchObject({ reason: 'attachment_not_available', attachmentIds: ['no-such-attachment'] });
    expect(await dynamoRunStore.latestRuns(tenant.clientId, externalId, 10)).toEqual([]);
  });

  it('is refused when the payer denied it (422 authorization_denied): nothing is sent', async () => {
    const externalId = await createPasRequest(tenant, 'SBX-10002');
    const first = await submitted(externalId);
    expect((await getRequest(tenant, externalId)).authorization.status).toBe('denied');
    const res = await submit(tenant, externalId);
    expect(res.status, res.text).toBe(422);
    expect(res.body).toMatchObject({ reason: 'authorization_denied', requestExternalId: externalId });
    const runs = await dynamoRunStore.latestRuns(tenant.clientId, externalId, 10);
    expect(runs.map((run) => run.runId)).toEqual([first.runId]);
  });
});

/** A `submit` run queued as the cancel route queues it, and its task run in this process. */
const cancelRun = async (externalId: string, relatedClaimIdentifier: string) => {
  const at = new Date().toISOString();
  const run: RpaRunRecord = {
    clientId: tenant.clientId,
    externalId,
    runId: uuidv7(),
    kind: 'submit',
    clientUserId: tenant.clientUserId,
    organizationId: tenant.organizationId,
    channel: 'pas',
    payerConnectionId: tenant.connection.externalId,
    submission: { bundleIdentifier: crypto.randomUUID(), sentAt: null, action: 'cancel', relatedClaimIdentifier },
    status: 'queued',
    steps: [{ at, step: 'queued' }],
    enteredValues: {},
    screenshots: [],
    version: 1,
    createdAt: at,
    updatedAt: at,
  };
  await dynamoRunStore.createRun(run);
  return payerTasks.submit({ clientId: run.clientId, requestExternalId: run.externalId, runId: run.runId });
};

describe('a cancel', () => {
  it('of a pended claim ends the authorization cancelled when the payer confirms it; a later submit is a new claim', async () => {
    const memberId = 'SBX-10003';
    const externalId = await createPasRequest(tenant, memberId);
    const first = await submitted(externalId);
    const firstId = first.submission!.bundleIdentifier;
    expect((await getRequest(tenant, externalId)).authorization.decisionDueAt).not.toBeNull();
    const result = await cancelRun(externalId, firstId);
    const steps = (await recordOf(externalId, result.runId)).steps;
    expect(result, JSON.stringify(steps)).toMatchObject({ status: 'succeeded', outcome: 'submitted' });
    const authorization = (await getRequest(tenant, externalId)).authorization;
    expect(authorization).toMatchObject({ status: 'cancelled', decisionDueAt: null });
    const held = payer.heldClaim(firstId)!;
    expect(held.verdict).toBe('cancelled');
    expect(flagsOf(held.claim as unknown as ClaimItem).certificationType).toBe('3');

    const again = await submitted(externalId);
    expect(again.submission!.action).toBeUndefined();
    expect(payer.countsOf(again.submission!.bundleIdentifier).claims).toBe(1);
  });

  it('of an approved claim goes through POST …/cancel: the payer cancels its one claim', async () => {
    const externalId = await createPasRequest(tenant, 'SBX-10001');
    const first = await submitted(externalId);
    expect((await getRequest(tenant, externalId)).authorization.status).toBe('approved');
    const res = await call('POST', `/api/external/v1.1/Requests/${encodeURIComponent(externalId)}/cancel`, {
      apiKey: tenant.apiKey,
      body: { clientUserId: tenant.clientUserId },
    });
    expect(res.status, res.text).toBe(202);
    const run = await settledRun(tenant, locationOf(res));
    expect(run.outcome).toBe('submitted');
    const record = await recordOf(externalId, run.runId);
    expect(record.steps.map((step) => step.step)).toContain('sending the cancel of the claim to the payer');
    expect((await getRequest(tenant, externalId)).authorization.status).toBe('cancelled');
    const firstId = first.submission!.bundleIdentifier;
    expect(payer.heldClaim(record.submission!.bundleIdentifier)).toBe(payer.heldClaim(firstId));
    expect(payer.heldClaim(firstId)!.verdict).toBe('cancelled');
    expect(payer.countsOf(firstId).claims).toBe(1);
  });
});
