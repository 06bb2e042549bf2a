import { beforeAll, describe, expect, it } from 'vitest';
import {
  MAX_ATTACHMENTS_PER_REQUEST,
  UPLOAD_GRACE_SECONDS,
  UPLOAD_URL_SECONDS,
} from '#lib/attachments/attachment-limits';
import { SWEEP_INTERVAL_SECONDS } from '#lib/attachments/attachment-slots';
import type { AttachmentStore } from '#lib/attachments/attachment-store';
import { attachmentService } from '#lib/attachments/attachments';
import { dynamoAttachmentStore } from '#lib/attachments/dynamo-attachment-store';
import { s3ObjectStorage } from '#lib/attachments/s3-object-storage';
import { dynamoRequestStore } from '#lib/requests/dynamo-request-store';
import { dynamoStorageQuotas } from '#lib/tenancy/storage-quotas-service';
import { newTenant } from '#test/support/api';
import { newRequest, sample, sha256 } from './attachments-support.ts';

/**
 * What an upload reads before it writes: the slots item answers the limit, so the request's records
 * are queried only to sweep left-overs, at most every SWEEP_INTERVAL_SECONDS, and when the request is
 * at its limit. The service runs against the emulators with a clock of the test's own and a store
 * that counts the queries of a request's records.
 */
let tenant: Awaited<ReturnType<typeof newTenant>>;

beforeAll(async () => {
  tenant = await newTenant('attachment-sweep');
});

const setUp = () => {
  let at = Date.now();
  let queries = 0;
  const store: AttachmentStore = {
    ...dynamoAttachmentStore,
    listByRequest: (clientId, externalId) => {
      queries += 1;
      return dynamoAttachmentStore.listByRequest(clientId, externalId);
    },
  };
  const service = attachmentService({
    requests: dynamoRequestStore,
    store,
    objects: s3ObjectStorage,
    quotas: dynamoStorageQuotas,
    now: () => new Date(at),
  });
  const bytes = sample.pdf(1024);
  return {
    service,
    declare: (externalId: string) =>
      service.requestUpload(tenant.clientId, externalId, {
        fileName: 'scan.pdf',
        contentType: 'application/pdf',
        size: bytes.length,
        sha256: sha256(bytes),
      }),
    advance: (seconds: number) => {
      at += seconds * 1000;
    },
    now: () => new Date(at).toISOString(),
    queries: () => queries,
    resetQueries: () => {
      queries = 0;
    },
  };
};

describe('the query of a request’s records before an upload', () => {
  it('is left out while the request was swept within the interval; left-overs go at the next sweep', async () => {
    const externalId = await newRequest(tenant.apiKey);
    const run = setUp();
    // The first upload sets the request's slots up (it has none: refused, swept, reconciled) and records the sweep.
    const { record: leftOver } = await run.declare(externalId);
    run.resetQueries();
    for (let i = 0; i < 5; i++) await run.declare(externalId);
    expect(run.queries()).toBe(0);

    // The first upload's URL expires unused: invisible, then swept with the next sweep.
    run.advance(UPLOAD_URL_SECONDS + UPLOAD_GRACE_SECONDS + 1);
    await run.declare(externalId);
    expect(run.queries()).toBe(1);
    expect(await dynamoAttachmentStore.get(tenant.clientId, externalId, leftOver.attachmentId)).toBeUndefined();

    run.resetQueries();
    run.advance(SWEEP_INTERVAL_SECONDS - 1);
    await run.declare(externalId);
    expect(run.queries()).toBe(0);
    run.advance(1);
    await run.declare(externalId);
    expect(run.queries()).toBe(1);
  });

  it('runs when the request is at its limit: its left-overs are swept before a refusal stands', async () => {
    const externalId = await newRequest(tenant.apiKey);
    const run = setUp();
    for (let done = 0; done < MAX_ATTACHMENTS_PER_REQUEST; done += 10) {
      await Promise.all(Array.from({ length: 10 }, () => run.declare(externalId)));
    }
    run.advance(UPLOAD_URL_SECONDS + UPLOAD_GRACE_SECONDS + 1);
    // Swept just now, as far as the slots item knows: only the refusal makes this upload sweep.
    await dynamoAttachmentStore.markSwept(tenant.clientId, externalId, run.now());
    run.resetQueries();
    const { record } = await run.declare(externalId);
    expect(run.queries()).toBeGreaterThan(0);
    const left = await dynamoAttachmentStore.listByRequest(tenant.clientId, externalId);
    expect(left.map((r) => r.attachmentId)).toEqual([record.attachmentId]);
    const slots = await dynamoAttachmentStore.getSlots(tenant.clientId, externalId);
    expect(Object.keys(slots!.slots)).toEqual([record.attachmentId]);
  });
});
