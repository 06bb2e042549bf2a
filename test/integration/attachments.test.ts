import { beforeAll, describe, expect, it } from 'vitest';
import { MAX_ATTACHMENTS_PER_REQUEST } from '#lib/attachments/attachment-limits';
import {
  MAX_DESCRIPTION_LENGTH,
  MAX_DIRECT_BODY_BYTES,
  MAX_DIRECT_FILE_BYTES,
  MAX_FILE_NAME_LENGTH,
} from '#lib/attachments/content-policy';
import { GATEWAY_LIMITS } from '#lib/http/gateway-responses';
import { call, newTenant } from '#test/support/api';
import { minimalRequest } from '#test/support/fixtures';
import {
  attachmentsOf,
  download,
  expectProblem,
  newRequest,
  sample,
  sha256,
  stored,
  upload,
  uploadParts,
} from './attachments-support.ts';

/** Direct (multipart) uploads, metadata, list, download, delete, refusals, and isolation between clients. */
let tenant: Awaited<ReturnType<typeof newTenant>>;
let apiKey: string;
let externalId: string;

beforeAll(async () => {
  tenant = await newTenant('attachments');
  apiKey = tenant.apiKey;
  externalId = await newRequest(apiKey);
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('direct upload (multipart/form-data)', () => {
  it('round-trips a small PDF byte for byte, with its metadata', async () => {
    const bytes = sample.pdf(50_000);
    const res = await upload(
      apiKey,
      externalId,
      { fileName: 'MRI report.pdf', contentType: 'application/pdf', bytes },
      { documentType: 'Radiology report', description: 'MRI of the left knee, 2025-03-01' },
    );
    expect(res.status, res.text).toBe(201);
    expect(res.body).toEqual({
      attachmentId: expect.stringMatching(UUID),
      requestExternalId: externalId,
      fileName: 'MRI report.pdf',
      contentType: 'application/pdf',
      size: bytes.length,
      sha256: sha256(bytes),
      documentType: 'Radiology report',
      description: 'MRI of the left knee, 2025-03-01',
      status: 'available',
      uploadMethod: 'direct',
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect(res.headers.get('location')).toBe(`${attachmentsOf(externalId)}/${res.body.attachmentId}`);

    const got = await download(apiKey, externalId, res.body.attachmentId);
    expect(got.status).toBe(303);
    expect(got.redirect.headers.get('cache-control')).toBe('no-store');
    expect(got.location).not.toContain('MRI'); // no file name (PHI) in URLs
    expect(got.file?.status).toBe(200);
    expect(got.file?.headers.get('content-type')).toBe('application/pdf');
    expect(got.file?.headers.get('content-disposition')).toBe('attachment');
    expect(got.bytes?.equals(bytes)).toBe(true);
  });

  it(`takes a file of exactly ${MAX_DIRECT_FILE_BYTES} bytes, byte for byte`, async () => {
    const bytes = sample.tiff(MAX_DIRECT_FILE_BYTES);
    const res = await upload(apiKey, externalId, { fileName: 'scan.tiff', contentType: 'image/tiff', bytes });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ size: MAX_DIRECT_FILE_BYTES, sha256: sha256(bytes), status: 'available' });
    const got = await download(apiKey, externalId, res.body.attachmentId);
    expect(got.bytes?.equals(bytes)).toBe(true);
  });

  it('accepts every allowed type, checking its first bytes', async () => {
    const files = [
      { fileName: 'a.png', contentType: 'image/png', bytes: sample.png() },
      { fileName: 'a.jpg', contentType: 'image/jpeg', bytes: sample.jpeg() },
      { fileName: 'a.tif', contentType: 'image/tiff', bytes: sample.tiff() },
      { fileName: 'a.txt', contentType: 'text/plain; charset=utf-8', bytes: sample.text() },
      {
        fileName: 'a.docx',
        contentType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
        bytes: sample.zip(),
      },
      { fileName: 'a.dcm', contentType: 'application/dicom', bytes: sample.dicom() },
    ];
    for (const file of files) {
      const res = await upload(apiKey, externalId, file);
      expect(res.status, `${file.contentType}: ${res.text}`).toBe(201);
      expect(res.body.contentType).toBe(file.contentType.split(';')[0]);
    }
    const text = await upload(apiKey, externalId, files[3]!);
    const got = await download(apiKey, externalId, text.body.attachmentId);
    expect(got.file?.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(got.bytes?.equals(sample.text())).toBe(true);
  });

  it('infers the type from the extension when the part says application/octet-stream', async () => {
    const res = await upload(apiKey, externalId, {
      fileName: 'summary.xlsx',
      contentType: 'application/octet-stream',
      bytes: sample.zip(),
    });
    expect(res.status, res.text).toBe(201);
    expect(res.body.contentType).toBe('application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
  });

  it('infers the type from the extension when the part has no Content-Type; an explicit text/plain stays text/plain', async () => {
    const pdf = await upload(apiKey, externalId, { fileName: 'knee.pdf', bytes: sample.pdf() });
    expect(pdf.status, pdf.text).toBe(201);
    expect(pdf.body).toMatchObject({ fileName: 'knee.pdf', contentType: 'application/pdf' });
    const png = await upload(apiKey, externalId, { fileName: 'x-ray.PNG', bytes: sample.png() });
    expect(png.status, png.text).toBe(201);
    expect(png.body.contentType).toBe('image/png');
    const noExtension = await upload(apiKey, externalId, { fileName: 'notes', bytes: sample.text() });
    expectProblem(noExtension, 415);
    expect(noExtension.body.accepted).toContain('text/plain');

    // Declared text/plain: the declaration decides, not the name, and the content must be text.
    const pdfAsText = await upload(apiKey, externalId, {
      fileName: 'knee.pdf',
      contentType: 'text/plain',
      bytes: sample.pdf(),
    });
    expectProblem(pdfAsText, 415);
    expect(pdfAsText.body.reason).toBe('content');
    const textNamedPdf = await upload(apiKey, externalId, {
      fileName: 'note.pdf',
      contentType: 'text/plain',
      bytes: sample.text(),
    });
    expect(textNamedPdf.status, textNamedPdf.text).toBe(201);
    expect(textNamedPdf.body.contentType).toBe('text/plain');
  });

  it('sanitizes file names: no path, no controls, bounded, with an extension of the type', async () => {
    const cases: Array<[string, string]> = [
      ['../../etc/passwd.pdf', 'passwd.pdf'],
      ['C:\\Users\\dr\\Desktop\\scan.PDF', 'scan.PDF'],
      ['re\u0007port\u202Egpj.pdf', 'reportgpj.pdf'],
      ['  .hidden  notes .pdf', 'hidden notes .pdf'],
      ['a:b*c?.pdf', 'a_b_c_.pdf'],
      ['scan', 'scan.pdf'],
      ['invoice.exe', 'invoice.exe.pdf'],
      [`${'n'.repeat(300)}.pdf`, `${'n'.repeat(MAX_FILE_NAME_LENGTH - 4)}.pdf`],
    ];
    for (const [sent, kept] of cases) {
      const res = await upload(apiKey, externalId, {
        fileName: sent,
        contentType: 'application/pdf',
        bytes: sample.pdf(),
      });
      expect(res.status, res.text).toBe(201);
      expect(res.body.fileName).toBe(kept);
    }
  });
});

describe('list, metadata, delete', () => {
  it('lists oldest first, reads metadata, deletes object and metadata permanently', async () => {
    const id = await newRequest(apiKey);
    const empty = await call('GET', attachmentsOf(id), { apiKey });
    expect(empty.status).toBe(200);
    expect(empty.body).toEqual({ attachments: [] });

    const first = await upload(apiKey, id, {
      fileName: 'one.pdf',
      contentType: 'application/pdf',
      bytes: sample.pdf(),
    });
    const second = await upload(apiKey, id, { fileName: 'two.png', contentType: 'image/png', bytes: sample.png() });
    const list = await call('GET', attachmentsOf(id), { apiKey });
    expect(list.status).toBe(200);
    expect(list.body.attachments).toEqual([first.body, second.body]);

    const one = await call('GET', `${attachmentsOf(id)}/${first.body.attachmentId}`, { apiKey });
    expect(one.status).toBe(200);
    expect(one.body).toEqual(first.body);

    expect((await stored(tenant.clientId, id, first.body.attachmentId)).object).toBe(true);
    const deleted = await call('DELETE', `${attachmentsOf(id)}/${first.body.attachmentId}`, { apiKey });
    expect(deleted.status).toBe(204);
    const after = await stored(tenant.clientId, id, first.body.attachmentId);
    expect(after.object).toBe(false);
    expect(after.record).toBeUndefined();

    expectProblem(await call('GET', `${attachmentsOf(id)}/${first.body.attachmentId}`, { apiKey }), 404);
    expect((await download(apiKey, id, first.body.attachmentId)).status).toBe(404);
    expectProblem(await call('DELETE', `${attachmentsOf(id)}/${first.body.attachmentId}`, { apiKey }), 404);
    expect((await call('GET', attachmentsOf(id), { apiKey })).body.attachments).toEqual([second.body]);
  });
});

describe('refusals: each a 4xx with problem details', () => {
  const pdf = { fileName: 'a.pdf', contentType: 'application/pdf', bytes: sample.pdf() };

  it('a body that is neither multipart/form-data nor JSON → 415', async () => {
    const res = await call('POST', attachmentsOf(externalId), {
      apiKey,
      rawBody: 'hello',
      headers: { 'content-type': 'text/plain' },
    });
    expectProblem(res, 415);
    expect(res.body.accepted).toEqual(['application/json', 'multipart/form-data']);
  });

  it('no file part, a file in another field, or "file" sent as a plain field → 400', async () => {
    expectProblem(await uploadParts(apiKey, externalId, [{ name: 'description', value: 'x' }]), 400);
    expectProblem(await uploadParts(apiKey, externalId, [{ name: 'document', file: pdf }]), 400);
    expectProblem(await uploadParts(apiKey, externalId, [{ name: 'file', value: 'not a file' }]), 400);
  });

  it('two files, an unknown field, a repeated field, an over-long description → 400', async () => {
    expectProblem(
      await uploadParts(apiKey, externalId, [
        { name: 'file', file: pdf },
        { name: 'file', file: pdf },
      ]),
      400,
    );
    expectProblem(await upload(apiKey, externalId, pdf, { patientName: 'x' }), 400);
    expectProblem(
      await uploadParts(apiKey, externalId, [
        { name: 'file', file: pdf },
        { name: 'description', value: 'a' },
        { name: 'description', value: 'b' },
      ]),
      400,
    );
    expectProblem(await upload(apiKey, externalId, pdf, { description: 'x'.repeat(MAX_DESCRIPTION_LENGTH + 1) }), 400);
    expectProblem(await upload(apiKey, externalId, pdf, { documentType: 'bad\u0001type' }), 400);
  });

  it('a malformed multipart body → 400', async () => {
    const noBoundary = await call('POST', attachmentsOf(externalId), {
      apiKey,
      rawBody: 'x',
      headers: { 'content-type': 'multipart/form-data' },
    });
    expectProblem(noBoundary, 400);
    const truncated = await call('POST', attachmentsOf(externalId), {
      apiKey,
      rawBody: '--b\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\n\r\n%PDF-',
      headers: { 'content-type': 'multipart/form-data; boundary=b' },
    });
    expectProblem(truncated, 400);
  });

  it('an empty file → 400', async () => {
    const res = await upload(apiKey, externalId, { ...pdf, bytes: new Uint8Array() });
    expectProblem(res, 400);
    expect(res.body.reason).toBe('empty');
  });

  it(`a file over ${MAX_DIRECT_FILE_BYTES} bytes → 413 naming the limit`, async () => {
    const res = await upload(apiKey, externalId, { ...pdf, bytes: sample.pdf(MAX_DIRECT_FILE_BYTES + 1) });
    expectProblem(res, 413);
    expect(res.body.limitBytes).toBe(MAX_DIRECT_FILE_BYTES);
  });

  it(`a body over ${MAX_DIRECT_BODY_BYTES} bytes → 413 from the endpoint; one whose event would pass 6 MiB → 413 from the gateway`, async () => {
    const justOver = await uploadParts(apiKey, externalId, [
      { name: 'file', file: pdf },
      { name: 'description', value: 'x'.repeat(MAX_DIRECT_BODY_BYTES) },
    ]);
    expectProblem(justOver, 413);
    expect(justOver.body.limitBytes).toBe(MAX_DIRECT_BODY_BYTES);
    const huge = await upload(apiKey, externalId, { ...pdf, bytes: sample.pdf(5 * 1024 * 1024) });
    expectProblem(huge, 413);
    expect(huge.body.detail).toContain(String(GATEWAY_LIMITS.maxLambdaRequestBytes));
  });

  it('a type outside the allow-list → 415 listing the allowed types', async () => {
    for (const contentType of ['text/html', 'application/x-msdownload', 'application/zip', 'image/svg+xml']) {
      const res = await upload(apiKey, externalId, { fileName: 'a.bin', contentType, bytes: sample.zip() });
      expectProblem(res, 415);
      expect(res.body.accepted).toContain('application/pdf');
    }
    const unknownExtension = await upload(apiKey, externalId, {
      fileName: 'a.exe',
      contentType: 'application/octet-stream',
      bytes: sample.zip(),
    });
    expectProblem(unknownExtension, 415);
  });

  it('content that does not match its declared type → 415', async () => {
    const cases = [
      { fileName: 'a.pdf', contentType: 'application/pdf', bytes: sample.png() },
      { fileName: 'a.png', contentType: 'image/png', bytes: sample.pdf() },
      { fileName: 'a.dcm', contentType: 'application/dicom', bytes: sample.pdf() },
      { fileName: 'a.txt', contentType: 'text/plain', bytes: Buffer.from([0x41, 0x00, 0x42]) },
      { fileName: 'a.txt', contentType: 'text/plain', bytes: Buffer.from([0xc3, 0x28, 0x41]) },
    ];
    for (const file of cases) {
      const res = await upload(apiKey, externalId, file);
      expectProblem(res, 415);
      expect(res.body.reason).toBe('content');
    }
  });

  it('a file name that is missing or empty once cleaned → 400', async () => {
    for (const fileName of [undefined, '', '../../', '\u0000\u0001', '...', 'x'.repeat(1025)]) {
      const res = await upload(apiKey, externalId, { ...pdf, fileName });
      expectProblem(res, 400);
    }
  });

  it('a sha256 field that does not match the bytes received → 400', async () => {
    expectProblem(await upload(apiKey, externalId, pdf, { sha256: sha256(sample.pdf()) }), 400);
    expectProblem(await upload(apiKey, externalId, pdf, { sha256: 'abc' }), 400);
    const ok = await upload(apiKey, externalId, pdf, { sha256: sha256(pdf.bytes).toUpperCase() });
    expect(ok.status, ok.text).toBe(201);
  });

  it('an unknown request → 404; unknown attachment → 404; malformed ids → 400', async () => {
    const res = await upload(apiKey, 'no-such-request', pdf);
    expectProblem(res, 404);
    expect(res.body.detail).toContain('Request no-such-request');
    expectProblem(await call('GET', attachmentsOf('no-such-request'), { apiKey }), 404);
    const unknown = '00000000-0000-4000-8000-000000000000';
    expectProblem(await call('GET', `${attachmentsOf(externalId)}/${unknown}`, { apiKey }), 404);
    expectProblem(await call('GET', `${attachmentsOf(externalId)}/${unknown}/download`, { apiKey }), 404);
    expectProblem(await call('DELETE', `${attachmentsOf(externalId)}/${unknown}`, { apiKey }), 404);
    for (const [method, path] of [
      ['GET', `${attachmentsOf(externalId)}/not-a-uuid`],
      ['GET', `${attachmentsOf(externalId)}/not-a-uuid/download`],
      ['DELETE', `${attachmentsOf(externalId)}/not-a-uuid`],
      ['GET', attachmentsOf('bad#id')],
      ['GET', attachmentsOf('x'.repeat(65))],
    ] as const) {
      const bad = await call(method, path, { apiKey });
      expectProblem(bad, 400);
      expect(bad.body.parameter).toMatch(/attachmentId|requestExternalId/);
    }
    const badUpload = await upload(apiKey, '-leading', pdf);
    expectProblem(badUpload, 400);
    expect(badUpload.body.parameter).toBe('requestExternalId');
  });

  it(`a request already holding ${MAX_ATTACHMENTS_PER_REQUEST} attachments → 409`, async () => {
    const full = await newRequest(apiKey);
    const declaration = { fileName: 'a.pdf', contentType: 'application/pdf', size: 10, sha256: sha256(sample.pdf()) };
    for (let i = 0; i < MAX_ATTACHMENTS_PER_REQUEST; i++) {
      const res = await call('POST', attachmentsOf(full), { apiKey, body: declaration });
      expect(res.status, res.text).toBe(201);
    }
    expectProblem(await call('POST', attachmentsOf(full), { apiKey, body: declaration }), 409);
    expectProblem(await upload(apiKey, full, pdf), 409);
    const list = await call('GET', attachmentsOf(full), { apiKey });
    expect(list.body.attachments).toHaveLength(MAX_ATTACHMENTS_PER_REQUEST);
    expect(Buffer.byteLength(list.text)).toBeLessThan(100 * 1024);
  });

  it('no API key → 401', async () => {
    expectProblem(await call('GET', attachmentsOf(externalId)), 401);
  });
});

describe('isolation between clients', () => {
  it("another client's request and attachments are 404 for every operation, and stay intact", async () => {
    const other = await newTenant('attachments-other');
    const mine = await upload(apiKey, externalId, {
      fileName: 'x.pdf',
      contentType: 'application/pdf',
      bytes: sample.pdf(),
    });
    const id = mine.body.attachmentId;
    const theirs = other.apiKey;

    expectProblem(await call('GET', attachmentsOf(externalId), { apiKey: theirs }), 404);
    expectProblem(await call('GET', `${attachmentsOf(externalId)}/${id}`, { apiKey: theirs }), 404);
    expect((await download(theirs, externalId, id)).status).toBe(404);
    expectProblem(await call('DELETE', `${attachmentsOf(externalId)}/${id}`, { apiKey: theirs }), 404);
    expectProblem(
      await upload(theirs, externalId, { fileName: 'y.pdf', contentType: 'application/pdf', bytes: sample.pdf() }),
      404,
    );
    expectProblem(
      await call('POST', attachmentsOf(externalId), {
        apiKey: theirs,
        body: { fileName: 'y.pdf', contentType: 'application/pdf', size: 10, sha256: sha256(sample.pdf()) },
      }),
      404,
    );

    // The same externalId under the other client is another request, with its own (empty) attachments.
    const sameId = await call('POST', '/api/external/v1.1/Requests', {
      apiKey: theirs,
      body: minimalRequest(externalId),
    });
    expect(sameId.status).toBe(201);
    expect((await call('GET', attachmentsOf(externalId), { apiKey: theirs })).body).toEqual({ attachments: [] });
    expectProblem(await call('GET', `${attachmentsOf(externalId)}/${id}`, { apiKey: theirs }), 404);

    const still = await call('GET', `${attachmentsOf(externalId)}/${id}`, { apiKey });
    expect(still.body).toEqual(mine.body);
    expect((await stored(tenant.clientId, externalId, id)).key.startsWith(`${tenant.clientId}/`)).toBe(true);
  });
});
