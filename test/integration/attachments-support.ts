import { createHash, randomBytes } from 'node:crypto';
import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { expect } from 'vitest';
import { dynamoAttachmentStore } from '#lib/attachments/dynamo-attachment-store';
import { s3 } from '#lib/aws/s3';
import { bucketName } from '#lib/config/resources';
import { keys } from '#lib/object-keys';
import { type ApiResponse, baseUrl, call, expectConforming, uniqueId } from '#test/support/api';
import { minimalRequest } from '#test/support/fixtures';

/** Helpers shared by the attachment tests: requests to attach to, multipart bodies, raw storage checks. */
const v11 = '/api/external/v1.1';
export const attachmentsOf = (externalId: string) => `${v11}/Requests/${encodeURIComponent(externalId)}/Attachments`;

export const newRequest = async (apiKey: string) => {
  const externalId = uniqueId('att');
  const res = await call('POST', `${v11}/Requests`, {
    apiKey,
    body: minimalRequest(externalId),
  });
  expect(res.status, res.text).toBe(201);
  return externalId;
};

export const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** Random bytes behind a real signature, so content checks pass and any corruption shows. */
export const sample = {
  pdf: (size = 4096) => withPrefix(Buffer.from('%PDF-1.7\n'), size),
  png: (size = 2048) => withPrefix(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), size),
  jpeg: (size = 2048) => withPrefix(Buffer.from([0xff, 0xd8, 0xff, 0xe0]), size),
  tiff: (size = 2048) => withPrefix(Buffer.from('II*\x00', 'latin1'), size),
  zip: (size = 2048) => withPrefix(Buffer.from('PK\x03\x04', 'latin1'), size),
  dicom: (size = 2048) => withPrefix(Buffer.concat([Buffer.alloc(128), Buffer.from('DICM')]), size),
  text: () => Buffer.from('Clinical note: patient reports improvement.\nLigne accentuée: é ü.\n', 'utf8'),
};
const withPrefix = (prefix: Buffer, size: number) => Buffer.concat([prefix, randomBytes(size - prefix.length)]);

export interface Part {
  name: string;
  value?: string;
  file?: { fileName?: string; contentType?: string; bytes: Uint8Array };
}

/** A multipart/form-data body built by hand, so tests control every byte (odd file names included). */
export const multipart = (parts: Part[]) => {
  const boundary = `----attachments-test-${randomBytes(8).toString('hex')}`;
  const chunks: Buffer[] = [];
  for (const part of parts) {
    let disposition = `form-data; name="${part.name}"`;
    const fileName = part.file?.fileName;
    // Control characters cannot appear in a header: clients send such names RFC 5987-encoded.
    if (fileName !== undefined && Array.from(fileName).some((c) => c.charCodeAt(0) < 0x20)) {
      disposition += `; filename*=UTF-8''${encodeURIComponent(fileName)}`;
    } else if (fileName !== undefined) disposition += `; filename="${fileName}"`;
    const headers = [`Content-Disposition: ${disposition}`];
    if (part.file?.contentType) headers.push(`Content-Type: ${part.file.contentType}`);
    chunks.push(Buffer.from(`--${boundary}\r\n${headers.join('\r\n')}\r\n\r\n`, 'utf8'));
    chunks.push(part.file ? Buffer.from(part.file.bytes) : Buffer.from(part.value ?? '', 'utf8'));
    chunks.push(Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
};

export const upload = (
  apiKey: string,
  externalId: string,
  file: { fileName?: string; contentType?: string; bytes: Uint8Array },
  fields: Record<string, string> = {},
) =>
  uploadParts(apiKey, externalId, [
    { name: 'file', file },
    ...Object.entries(fields).map(([name, value]) => ({ name, value })),
  ]);

export const uploadParts = (apiKey: string, externalId: string, parts: Part[]) => {
  const { body, contentType } = multipart(parts);
  return call('POST', attachmentsOf(externalId), { apiKey, rawBody: body, headers: { 'content-type': contentType } });
};

/** GET …/download without following, then the redirect's target, as a client does. */
export const download = async (apiKey: string, externalId: string, attachmentId: string) => {
  const redirect = await fetch(`${baseUrl}${attachmentsOf(externalId)}/${attachmentId}/download`, {
    headers: { 'x-api-key': apiKey },
    redirect: 'manual',
  });
  await expectConforming('GET', `${attachmentsOf(externalId)}/${attachmentId}/download`, redirect);
  const location = redirect.headers.get('location');
  const file = location ? await fetch(location) : undefined;
  return {
    status: redirect.status,
    location,
    redirect,
    file,
    bytes: file ? Buffer.from(await file.arrayBuffer()) : undefined,
  };
};

export const expectProblem = (res: ApiResponse, status: number) => {
  expect(res.status, res.text).toBe(status);
  expect(res.headers.get('content-type')).toContain('application/problem+json');
  expect(res.body).toMatchObject({ status, title: expect.any(String), detail: expect.any(String) });
};

/** Polls until `check` returns something truthy (the S3 event handler runs asynchronously). */
export const eventually = async <T>(
  check: () => Promise<T>,
  timeoutMs = 15_000,
): Promise<Exclude<T, false | null | undefined>> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as Exclude<T, false | null | undefined>;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
};

/** Raw storage, bypassing the API: is there an object / a record for this attachment? */
export const stored = async (clientId: string, externalId: string, attachmentId: string) => {
  const key = keys.attachmentObject(clientId, externalId, attachmentId);
  const object = await s3
    .send(new HeadObjectCommand({ Bucket: bucketName(), Key: key }))
    .then(() => true)
    .catch((error: Error) => {
      if (error.name === 'NotFound' || error.name === 'NoSuchKey') return false;
      throw error;
    });
  const record = await dynamoAttachmentStore.get(clientId, externalId, attachmentId);
  return { key, object, record };
};
