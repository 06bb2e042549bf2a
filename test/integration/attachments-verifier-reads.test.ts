import { randomBytes } from 'node:crypto';
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { beforeAll, describe, expect, it } from 'vitest';
import { attachmentService } from '#lib/attachments/attachments';
import { SNIFF_BYTES } from '#lib/attachments/content-policy';
import { dynamoAttachmentStore } from '#lib/attachments/dynamo-attachment-store';
import type { ObjectStorage } from '#lib/attachments/object-storage';
import { s3ObjectStorage } from '#lib/attachments/s3-object-storage';
import { s3 } from '#lib/aws/s3';
import { dynamoRequestStore } from '#lib/requests/dynamo-request-store';
import { dynamoStorageQuotas } from '#lib/tenancy/storage-quotas-service';
import { newTenant, uniqueId } from '#test/support/api';
import { countingReads, s3AsOnAws } from '#test/support/s3-as-on-aws';
import { newRequest, sample, sha256, stored } from './attachments-support.ts';

/**
 * What the upload verifier reads, counted through the object storage it is given: the service runs
 * here against the emulators, on a bucket of its own (the local stack's verifier only hears its own
 * bucket's events, so it does not race this one), and `verifyObject` is called as the S3 event would.
 */
let tenant: Awaited<ReturnType<typeof newTenant>>;
let externalId: string;

beforeAll(async () => {
  tenant = await newTenant('verifier-reads');
  externalId = await newRequest(tenant.apiKey);
  const bucket = uniqueId('verifier-reads')
    .toLowerCase()
    .replace(/[^a-z0-9-]/g, '-');
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  process.env.BUCKET_NAME = bucket;
});

const serviceOn = (objects: ObjectStorage) =>
  attachmentService({
    requests: dynamoRequestStore,
    store: dynamoAttachmentStore,
    objects,
    quotas: dynamoStorageQuotas,
  });

const declare = (service: ReturnType<typeof serviceOn>, bytes: Uint8Array, declaredSize = bytes.length) =>
  service.requestUpload(tenant.clientId, externalId, {
    fileName: 'scan.pdf',
    contentType: 'application/pdf',
    size: declaredSize,
    sha256: sha256(bytes),
  });

describe('a store that vouches for the SHA-256 (S3)', () => {
  const store = s3AsOnAws();
  const service = serviceOn(store.objects);

  it('verifies a 20 MiB upload reading only the first bytes, and nothing once it is available', async () => {
    const bytes = sample.pdf(20 * 1024 * 1024);
    const { record, upload } = await declare(service, bytes);
    expect(await store.putPresigned(upload, bytes)).toBe(200);
    store.resetCount();
    expect(await service.verifyObject(record.objectKey)).toBe('available');
    expect(store.bytesRead()).toBeGreaterThan(0);
    expect(store.bytesRead()).toBeLessThanOrEqual(SNIFF_BYTES);
    const current = await dynamoAttachmentStore.get(tenant.clientId, externalId, record.attachmentId);
    expect(current?.status).toBe('available');

    // A repeated event: already verified, and S3 keeps only bytes of that SHA-256 at the key.
    store.resetCount();
    expect(await service.verifyObject(record.objectKey)).toBe('available');
    expect(store.bytesRead()).toBe(0);
  });

  it('rejects bytes of the declared SHA-256 but another type from the first bytes alone', async () => {
    const bytes = randomBytes(3 * 1024 * 1024);
    const { record, upload } = await declare(service, bytes);
    expect(await store.putPresigned(upload, bytes)).toBe(200);
    store.resetCount();
    expect(await service.verifyObject(record.objectKey)).toBe('rejected');
    expect(store.bytesRead()).toBeLessThanOrEqual(SNIFF_BYTES);
    const raw = await stored(tenant.clientId, externalId, record.attachmentId);
    expect(raw.object).toBe(false);
    expect(raw.record).toMatchObject({
      status: 'rejected',
      rejectionReason: "The uploaded file's content is not a PDF.",
    });
  });

  it('decides a size other than the declared one from the stored size, reading nothing', async () => {
    const bytes = sample.pdf(2 * 1024 * 1024);
    const { record, upload } = await declare(service, bytes, bytes.length + 10);
    // S3 would refuse this body (signed Content-Length); the emulator stores it, as a stray write would.
    expect((await fetch(upload.url, { method: 'PUT', headers: upload.headers, body: bytes })).status).toBe(200);
    store.resetCount();
    expect(await service.verifyObject(record.objectKey)).toBe('rejected');
    expect(store.bytesRead()).toBe(0);
    expect((await stored(tenant.clientId, externalId, record.attachmentId)).record?.rejectionReason).toBe(
      `The uploaded file has ${bytes.length} bytes; ${bytes.length + 10} were declared.`,
    );
  });

  it('refuses bytes other than the declared ones before storing them, as S3 does', async () => {
    const bytes = sample.pdf(10_000);
    const { record, upload } = await declare(service, bytes);
    expect(await store.putPresigned(upload, sample.pdf(10_000))).toBe(400);
    expect((await stored(tenant.clientId, externalId, record.attachmentId)).object).toBe(false);
  });
});

describe('a store that cannot vouch for the SHA-256 (the local emulator)', () => {
  const store = countingReads({ ...s3ObjectStorage, verifiesChecksums: false });
  const service = serviceOn(store.objects);

  it('streams the object once, whole, and hashes it', async () => {
    const bytes = sample.pdf(5 * 1024 * 1024);
    const { record, upload } = await declare(service, bytes);
    expect((await fetch(upload.url, { method: 'PUT', headers: upload.headers, body: bytes })).status).toBe(200);
    expect(await s3ObjectStorage.describe(record.objectKey)).toEqual({ size: bytes.length, sha256: undefined });
    store.resetCount();
    expect(await service.verifyObject(record.objectKey)).toBe('available');
    expect(store.bytesRead()).toBe(bytes.length);
  });

  it('re-verifies an available presigned upload when its object arrives again: the store let any bytes in', async () => {
    const bytes = sample.pdf(100_000);
    const { record, upload } = await declare(service, bytes);
    const putBytes = (body: Uint8Array) => fetch(upload.url, { method: 'PUT', headers: upload.headers, body });
    expect((await putBytes(bytes)).status).toBe(200);
    expect(await service.verifyObject(record.objectKey)).toBe('available');
    expect((await putBytes(sample.pdf(100_000))).status).toBe(200);
    expect(await service.verifyObject(record.objectKey)).toBe('rejected');
  });
});
