import { randomBytes } from 'node:crypto';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  MAX_DESCRIPTION_LENGTH,
  MAX_DOCUMENT_TYPE_LENGTH,
  MAX_PRESIGNED_FILE_BYTES,
} from '#lib/attachments/content-policy';
import { s3 } from '#lib/aws/s3';
import { bucketName } from '#lib/config/resources';
import { keys } from '#lib/object-keys';
import { type ApiResponse, call, newTenant } from '#test/support/api';
import {
  attachmentsOf,
  download,
  eventually,
  expectProblem,
  newRequest,
  sample,
  sha256,
  stored,
} from './attachments-support.ts';

/** The presigned flow: declare, PUT straight to S3, verified by the S3 event handler, then the same metadata. */
let tenant: Awaited<ReturnType<typeof newTenant>>;
let apiKey: string;
let externalId: string;

beforeAll(async () => {
  tenant = await newTenant('presigned');
  apiKey = tenant.apiKey;
  externalId = await newRequest(apiKey);
});

const declareOn = (requestId: string, bytes: Uint8Array, overrides: Record<string, unknown> = {}) =>
  call('POST', attachmentsOf(requestId), {
    apiKey,
    body: {
      fileName: 'ct-scan.pdf',
      contentType: 'application/pdf',
      size: bytes.length,
      sha256: sha256(bytes),
      ...overrides,
    },
  });

const declare = (bytes: Uint8Array, overrides: Record<string, unknown> = {}) => declareOn(externalId, bytes, overrides);

/** A declaration that fails the PresignedUpload schema: 400 with the spec's Validation result. */
const expectInvalid = (res: ApiResponse, errors: string[]) => {
  expect(res.status, res.text).toBe(400);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  expect(res.body).toEqual({ succeeded: false, errors, type: 'none' });
};

const put = (upload: { url: string; headers: Record<string, string> }, bytes: Uint8Array) =>
  fetch(upload.url, { method: 'PUT', headers: upload.headers, body: bytes });

const metadata = (attachmentId: string) => call('GET', `${attachmentsOf(externalId)}/${attachmentId}`, { apiKey });

const settled = (attachmentId: string) =>
  eventually(async () => {
    const res = await metadata(attachmentId);
    return res.body.status !== 'pending' && res;
  });

describe('presigned upload', () => {
  it('round-trips a 20 MiB file byte for byte: pending, PUT to S3, verified, available', async () => {
    const bytes = sample.pdf(20 * 1024 * 1024);
    const declared = await declare(bytes, { documentType: 'Imaging', description: 'CT abdomen' });
    expect(declared.status, declared.text).toBe(201);
    const { upload, ...attachment } = declared.body;
    expect(attachment).toEqual({
      attachmentId: expect.any(String),
      requestExternalId: externalId,
      fileName: 'ct-scan.pdf',
      contentType: 'application/pdf',
      size: bytes.length,
      sha256: sha256(bytes),
      documentType: 'Imaging',
      description: 'CT abdomen',
      status: 'pending',
      uploadMethod: 'presigned',
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      expiresAt: expect.any(String),
    });
    expect(upload).toEqual({
      method: 'PUT',
      url: expect.stringContaining('X-Amz-Signature='),
      headers: {
        'Content-Type': 'application/pdf',
        'x-amz-checksum-sha256': Buffer.from(sha256(bytes), 'hex').toString('base64'),
      },
      expiresAt: expect.any(String),
    });
    const lifetime = Date.parse(upload.expiresAt) - Date.now();
    expect(lifetime).toBeGreaterThan(14 * 60_000);
    expect(lifetime).toBeLessThanOrEqual(15 * 60_000);
    expect(upload.url).toContain('X-Amz-Expires=900');
    expect(upload.url).toContain('X-Amz-SignedHeaders=content-length%3Bcontent-type%3Bhost%3Bx-amz-checksum-sha256');
    expect(upload.url).toContain(
      encodeURIComponent(`${tenant.clientId}/requests/${externalId}/attachments/`).replace(/%2F/g, '/'),
    );
    expect(upload.url).not.toContain('ct-scan');

    // Before the file arrives: listed as pending, not downloadable.
    expect((await metadata(attachment.attachmentId)).body.status).toBe('pending');
    expectProblem(
      await call('GET', `${attachmentsOf(externalId)}/${attachment.attachmentId}/download`, { apiKey }),
      409,
    );

    const uploaded = await put(upload, bytes);
    expect(uploaded.status).toBe(200);
    const done = await settled(attachment.attachmentId);
    expect(done.body).toEqual({
      ...attachment,
      status: 'available',
      expiresAt: undefined,
      updatedAt: expect.any(String),
    });
    expect(done.body).not.toHaveProperty('expiresAt');

    const got = await download(apiKey, externalId, attachment.attachmentId);
    expect(got.status).toBe(303);
    expect(got.bytes?.length).toBe(bytes.length);
    expect(got.bytes?.equals(bytes)).toBe(true);

    const list = await call('GET', attachmentsOf(externalId), { apiKey });
    expect(list.body.attachments.map((a: { attachmentId: string }) => a.attachmentId)).toContain(
      attachment.attachmentId,
    );

    expect((await call('DELETE', `${attachmentsOf(externalId)}/${attachment.attachmentId}`, { apiKey })).status).toBe(
      204,
    );
    const after = await stored(tenant.clientId, externalId, attachment.attachmentId);
    expect(after.object).toBe(false);
    expect(after.record).toBeUndefined();
  });

  it('issues an upload for files of 100 MB and more, up to the limit', async () => {
    const res = await call('POST', attachmentsOf(externalId), {
      apiKey,
      body: {
        fileName: 'study.dcm',
        contentType: 'application/dicom',
        size: MAX_PRESIGNED_FILE_BYTES,
        sha256: 'a'.repeat(64),
      },
    });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({
      size: MAX_PRESIGNED_FILE_BYTES,
      status: 'pending',
      contentType: 'application/dicom',
    });
    expect(MAX_PRESIGNED_FILE_BYTES).toBeGreaterThanOrEqual(100 * 1000 * 1000);
    // Cancelling a pending upload is a DELETE like any other.
    expect((await call('DELETE', `${attachmentsOf(externalId)}/${res.body.attachmentId}`, { apiKey })).status).toBe(
      204,
    );
  });

  it('never makes available an upload whose bytes differ from the declaration: S3 refuses it or the verifier rejects it', async () => {
    const declaredBytes = sample.pdf(100_000);
    const cases = [
      { sent: sample.pdf(100_000), reason: /SHA-256/ },
      { sent: declaredBytes.subarray(0, 99_000), reason: /99000 bytes; 100000 were declared/ },
      { sent: Buffer.concat([declaredBytes, Buffer.from('x')]), reason: /larger than the declared 100000 bytes/ },
    ];
    for (const { sent, reason } of cases) {
      const declared = await declare(declaredBytes);
      const { attachmentId } = declared.body;
      // Real S3 refuses bytes that miss the signed checksum or Content-Length (4xx); s3rver stores them.
      const uploaded = await put(declared.body.upload, sent);
      if (uploaded.ok) {
        expect(uploaded.status).toBe(200);
      } else {
        expect(uploaded.status).toBeGreaterThanOrEqual(400);
        expect(uploaded.status).toBeLessThan(500);
        const refused = await stored(tenant.clientId, externalId, attachmentId);
        expect(refused.object).toBe(false);
        expect((await metadata(attachmentId)).body.status).toBe('pending');
        // What the project guarantees whatever S3 enforces: the same bytes arriving at the key without
        // a checksum to hold them to (the event the verifier would see) are rejected all the same.
        await s3.send(
          new PutObjectCommand({ Bucket: bucketName(), Key: refused.key, Body: sent, ContentType: 'application/pdf' }),
        );
      }
      const done = await settled(attachmentId);
      expect(done.body).toMatchObject({ status: 'rejected', rejectionReason: expect.stringMatching(reason) });
      const raw = await stored(tenant.clientId, externalId, attachmentId);
      expect(raw.object).toBe(false);
      expectProblem(await call('GET', `${attachmentsOf(externalId)}/${attachmentId}/download`, { apiKey }), 409);
      expect((await call('DELETE', `${attachmentsOf(externalId)}/${attachmentId}`, { apiKey })).status).toBe(204);
      expect((await stored(tenant.clientId, externalId, attachmentId)).record).toBeUndefined();
    }
  });

  it('rejects an upload that has the declared size and SHA-256 but not the declared type', async () => {
    const bytes = randomBytes(5000);
    const declared = await declare(bytes);
    await put(declared.body.upload, bytes);
    const done = await settled(declared.body.attachmentId);
    expect(done.body).toMatchObject({
      status: 'rejected',
      rejectionReason: "The uploaded file's content is not a PDF.",
    });
  });

  it('deletes an object that arrives for a cancelled upload or without any attachment', async () => {
    const bytes = sample.pdf(10_000);
    const declared = await declare(bytes);
    expect(
      (await call('DELETE', `${attachmentsOf(externalId)}/${declared.body.attachmentId}`, { apiKey })).status,
    ).toBe(204);
    expect((await put(declared.body.upload, bytes)).status).toBe(200);
    await eventually(async () => !(await stored(tenant.clientId, externalId, declared.body.attachmentId)).object);

    const strayId = '11111111-1111-4111-8111-111111111111';
    await s3.send(
      new PutObjectCommand({
        Bucket: bucketName(),
        Key: keys.attachmentObject(tenant.clientId, externalId, strayId),
        Body: bytes,
      }),
    );
    await eventually(async () => !(await stored(tenant.clientId, externalId, strayId)).object);
    expectProblem(await call('GET', `${attachmentsOf(externalId)}/${strayId}`, { apiKey }), 404);
  });

  it('refuses a declaration that fails its schema with the Validation result, naming each field', async () => {
    const target = await newRequest(apiKey);
    const bytes = sample.pdf();
    const cases: [Record<string, unknown>, string][] = [
      [{ fileName: undefined }, "/: Required error. must have required property 'fileName'."],
      [{ fileName: 42 }, '/fileName: Type error for value "42". Message: must be string.'],
      [{ contentType: undefined }, "/: Required error. must have required property 'contentType'."],
      [{ contentType: ['application/pdf'] }, '/contentType: Type error. must be string.'],
      [{ size: undefined }, "/: Required error. must have required property 'size'."],
      [{ size: '10' }, '/size: Type error for value "10". Message: must be integer.'],
      [{ size: 1.5 }, '/size: Type error for value "1.5". Message: must be integer.'],
      [{ size: 0 }, '/size: Minimum error for value "0". Message: must be >= 1.'],
      [
        { size: MAX_PRESIGNED_FILE_BYTES + 1 },
        `/size: Maximum error for value "${MAX_PRESIGNED_FILE_BYTES + 1}". Message: must be <= ${MAX_PRESIGNED_FILE_BYTES}.`,
      ],
      [{ sha256: undefined }, "/: Required error. must have required property 'sha256'."],
      [{ sha256: 'xyz' }, '/sha256: Pattern error for value "xyz". Message: must match pattern "^[0-9a-fA-F]{64}$".'],
      [
        { sha256: 'g'.repeat(64) },
        `/sha256: Pattern error for value "${'g'.repeat(64)}". Message: must match pattern "^[0-9a-fA-F]{64}$".`,
      ],
      [{ documentType: 7 }, '/documentType: Type error for value "7". Message: must be string,null.'],
      [
        { documentType: 'x'.repeat(MAX_DOCUMENT_TYPE_LENGTH + 1) },
        `/documentType: MaxLength error for value "${'x'.repeat(MAX_DOCUMENT_TYPE_LENGTH + 1)}". Message: must NOT have more than ${MAX_DOCUMENT_TYPE_LENGTH} characters.`,
      ],
      [{ description: false }, '/description: Type error for value "false". Message: must be string,null.'],
      [
        { description: 'x'.repeat(MAX_DESCRIPTION_LENGTH + 1) },
        `/description: MaxLength error. must NOT have more than ${MAX_DESCRIPTION_LENGTH} characters.`,
      ],
      [{ patientName: 'x' }, "/: AdditionalProperties error. must NOT have additional property 'patientName'."],
    ];
    for (const [overrides, text] of cases) expectInvalid(await declareOn(target, bytes, overrides), [text]);

    // Every fault of a body is reported at once.
    expectInvalid(await declareOn(target, bytes, { fileName: undefined, size: -1, sha256: 'x', upload: {} }), [
      "/: Required error. must have required property 'fileName'.",
      "/: AdditionalProperties error. must NOT have additional property 'upload'.",
      '/size: Minimum error for value "-1". Message: must be >= 1.',
      '/sha256: Pattern error for value "x". Message: must match pattern "^[0-9a-fA-F]{64}$".',
    ]);
    for (const body of [[1, 2], 'a.pdf', null]) {
      const res = await call('POST', attachmentsOf(target), { apiKey, body });
      expect(res.status).toBe(400);
      expect(res.body.errors[0]).toMatch(/^\/: Type error.* must be object\.$/);
    }
    expect((await call('GET', attachmentsOf(target), { apiKey })).body).toEqual({ attachments: [] });
  });

  it('accepts a declaration at the schema’s bounds; absent texts may be null', async () => {
    const target = await newRequest(apiKey);
    const bytes = sample.pdf();
    const documentType = 'd'.repeat(MAX_DOCUMENT_TYPE_LENGTH);
    const description = 'line one\n'.padEnd(MAX_DESCRIPTION_LENGTH, 'x');
    const upper = sha256(bytes).toUpperCase();
    const full = await declareOn(target, bytes, { sha256: upper, documentType, description });
    expect(full.status, full.text).toBe(201);
    expect(full.body).toMatchObject({ sha256: sha256(bytes), documentType, description, size: bytes.length });
    const smallest = await declareOn(target, bytes, { size: 1, documentType: null, description: null });
    expect(smallest.status, smallest.text).toBe(201);
    expect(smallest.body.size).toBe(1);
    expect(smallest.body).not.toHaveProperty('documentType');
    expect(smallest.body).not.toHaveProperty('description');
  });

  it('leaves to the domain what a schema cannot say: file names, allowed types, control characters', async () => {
    const bytes = sample.pdf();
    const badName = await declare(bytes, { fileName: '/../' });
    expectProblem(badName, 400);
    expect(badName.body.reason).toBe('file-name');
    const html = await declare(bytes, { contentType: 'text/html', fileName: 'a.html' });
    expectProblem(html, 415);
    expect(html.body.reason).toBe('content-type');
    expectProblem(await declare(bytes, { documentType: 'bad\u0001type' }), 400);
    expectProblem(
      await call('POST', attachmentsOf(externalId), {
        apiKey,
        rawBody: '{"fileName":',
        headers: { 'content-type': 'application/json' },
      }),
      400,
    );
    expectProblem(
      await call('POST', attachmentsOf('no-such-request'), {
        apiKey,
        body: { fileName: 'a.pdf', contentType: 'application/pdf', size: 10, sha256: sha256(bytes) },
      }),
      404,
    );
  });
});
