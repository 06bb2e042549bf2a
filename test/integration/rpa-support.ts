import { expect } from 'vitest';
import type { RpaRunRecord } from '#lib/entities/rpa';
import { uuidv7 } from '#lib/ids';
import { keys } from '#lib/object-keys';
import { dynamoRunStore } from '#lib/runs/dynamo-run-store';
import { s3ScreenshotStorage } from '#lib/runs/s3-screenshot-storage';
import { call, uniqueId } from '#test/support/api';
import { validRequest } from '#test/support/fixtures';

/** Helpers shared by the automation tests: paths, requests to automate, runs written as the worker would. */
export const serviceReviews = '/api/external/v1/ServiceReviews/requests';
export const rpaOf = (externalId: string) => `${serviceReviews}/${encodeURIComponent(externalId)}/rpa`;
export const batchPath = `${serviceReviews}/rpa/batch/check-auth-status`;

export const newRequest = async (apiKey: string, patient: Record<string, unknown> = {}) => {
  const externalId = uniqueId('rpa');
  const body = validRequest(externalId);
  const res = await call('POST', '/api/external/v1.1/Requests', {
    apiKey,
    body: { ...body, patient: { ...body.patient, ...patient } },
  });
  expect(res.status, res.text).toBe(201);
  return externalId;
};

/**
 * A sandbox portal account of the tenant's organization, so its requests can be automated (a start
 * chooses the account then: docs/rpa.md). The first one is the organization's only active account.
 */
export const newPortalAccount = async (
  tenant: { apiKey: string; clientUserId: string },
  account: { externalId?: string; payerIds?: string[]; username?: string; password?: string } = {},
) => {
  const externalId = account.externalId ?? uniqueId('acct');
  const res = await call('POST', '/api/external/v1.1/Portals/accounts', {
    apiKey: tenant.apiKey,
    body: {
      clientUserId: tenant.clientUserId,
      portalId: 'sandbox',
      externalId,
      payerIds: account.payerIds ?? ['SANDBOX'],
      username: account.username ?? 'nobody',
      password: account.password ?? 'not-a-real-password',
    },
  });
  expect(res.status, res.text).toBe(201);
  return externalId;
};

/** A PNG signature and some bytes: enough for S3 and for a test to recognise. */
export const png = (marker: string) =>
  Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from(marker)]);

/** A run stored as the worker leaves it, with one screenshot in the bucket. */
export const storedRun = async (
  tenant: { clientId: string; organizationId: string; clientUserId: string },
  externalId: string,
  change: Partial<RpaRunRecord> = {},
  createdAt = new Date(),
): Promise<RpaRunRecord> => {
  const runId = uuidv7(createdAt.getTime());
  const objectKey = keys.rpaScreenshotObject(tenant.clientId, runId, 1);
  await s3ScreenshotStorage.put(objectKey, png(runId));
  const at = createdAt.toISOString();
  const run: RpaRunRecord = {
    clientId: tenant.clientId,
    externalId,
    runId,
    kind: 'view-on-page',
    clientUserId: tenant.clientUserId,
    organizationId: tenant.organizationId,
    portalAccountId: 'acct-1',
    portalId: 'sandbox',
    status: 'succeeded',
    outcome: 'form_filled',
    steps: [
      { at, step: 'queued' },
      { at, step: 'logged in' },
      { at, step: 'form filled', detail: '3 fields' },
    ],
    enteredValues: {
      memberId: { value: 'MBR-0001', readBack: true },
      patientLastName: { value: 'Example', readBack: false },
    },
    screenshots: [{ objectKey, label: 'the filled form, before submitting', capturedAt: at }],
    version: 1,
    createdAt: at,
    updatedAt: at,
    ...change,
  };
  await dynamoRunStore.createRun(run);
  return run;
};
