import { createHash } from 'node:crypto';
import createClient, { type Middleware } from 'openapi-fetch';
import { beforeAll, describe, expect, it } from 'vitest';
import { SANDBOX_PAYER_ID, SANDBOX_SERVICE_FROM_DATE, SANDBOX_USERS } from '#local/sandbox-portal/seed';
import { baseUrl, expectConforming, newTenant, uniqueId } from '#test/support/api';
import type { components, paths } from '../../client/schema.d.ts';
import { pollUntil } from './rpa-end-to-end-support.ts';

/*
 * The README's flows as an integrator writes them: types generated from the served OpenAPI document
 * (`npm run client`: client/schema.d.ts, openapi-typescript) and openapi-fetch, against the local stack. No casts,
 * no `any`, no non-null assertions: `npm run typecheck` compiles this file, so a document that types a body or a
 * response wrongly (or loosely) fails before a test runs, and the tests below check that the types tell the truth.
 */
type Schemas = components['schemas'];
type Tenant = Awaited<ReturnType<typeof newTenant>>;

/** Every answer the client reads is also checked against the served document, as `call` does. */
const conforming: Middleware = {
  onResponse: async ({ request, response }) => {
    await expectConforming(request.method, new URL(request.url).pathname, response);
  },
};

/**
 * The JSON media types only (`application/json`, `…+json`): the scraper session also answers a browser with a
 * page, which a JSON client never asks for.
 */
type Json = `${string}/${string}json`;
const anonymousClient = () => {
  const client = createClient<paths, Json>({ baseUrl });
  client.use(conforming);
  return client;
};
const clientOf = (apiKey: string) => {
  const client = createClient<paths, Json>({ baseUrl, headers: { 'x-api-key': apiKey } });
  client.use(conforming);
  return client;
};

/** A request for a sandbox portal member, typed by the document (enums, required members, providers). */
const requestBody = (externalId: string): Schemas['Request'] => ({
  externalId,
  requestTypeCode: 'HS',
  certificationTypeCode: 'I',
  serviceTypeCode: '2',
  placeOfServiceCode: '22',
  admissionTypeCode: '2',
  fromDate: SANDBOX_SERVICE_FROM_DATE,
  toDate: '2026-03-06',
  quantity: 1,
  quantityTypeCode: 'VS',
  patient: {
    memberId: 'SBX-10001',
    firstName: 'Avery',
    lastName: 'Sandbox',
    birthDate: '1975-04-12',
    genderCode: 'U',
    Payer: 'Sandbox Health Plan',
    PayerId: SANDBOX_PAYER_ID,
  },
  requestingProvider: { roleCode: '1P', npi: '1234567893', firstName: 'Jane', lastName: 'Doe' },
  renderingProviders: [{ roleCode: 'FA', organizationName: 'Example Imaging & Co' }],
  diagnoses: [{ qualifierCode: 'ABK', code: 'M54.5' }],
  procedures: [{ qualifierCode: 'HC', code: '72148', quantity: 1 }],
});

/** A 400 is either the spec's Validation result or problem details (RFC 9457): `succeeded` tells them apart. */
const validationResultOf = (error: Schemas['ValidationResult'] | Schemas['ProblemDetails']) => {
  if (!('succeeded' in error)) throw new Error(`problem details, not a Validation result: ${error.detail}`);
  return error;
};
const problemOf = (error: Schemas['ValidationResult'] | Schemas['ProblemDetails']) => {
  if ('succeeded' in error) throw new Error(`a Validation result, not problem details: ${error.errors.join('; ')}`);
  return error;
};

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const pdf = (size: number) => {
  const bytes = new Uint8Array(size).map((_, i) => (i * 7919) % 251);
  bytes.set(new TextEncoder().encode('%PDF-1.7\n'));
  return bytes;
};

let tenant: Tenant;
beforeAll(async () => {
  tenant = await newTenant('generated-client');
});

describe('requests through the generated client', () => {
  it('creates, reads, replaces and merge-patches a request', async () => {
    const client = clientOf(tenant.apiKey);
    const externalId = uniqueId('CLIENT-REQ');
    const created = await client.POST('/api/external/v1.1/Requests', { body: requestBody(externalId) });
    expect(created.response.status).toBe(201);
    if (!created.data) throw new Error(`create failed: ${created.response.status}`);
    expect(created.data).toMatchObject({ externalId, version: 1, authorization: { status: 'not_submitted' } });
    expect(created.response.headers.get('location')).toBe(`/api/external/v1.1/Requests/${externalId}`);

    const read = await client.GET('/api/external/v1.1/Requests/{externalId}', {
      params: { path: { externalId } },
    });
    expect(read.data).toEqual(created.data);

    const replaced = await client.PUT('/api/external/v1.1/Requests/{externalId}', {
      params: { path: { externalId }, header: { 'If-Match': '"1"' } },
      body: { ...requestBody(externalId), serviceLevelCode: 'U', providerNotes: ['Replaced'] },
    });
    expect(replaced.response.status).toBe(200);
    expect(replaced.data).toMatchObject({ version: 2, serviceLevelCode: 'U', providerNotes: ['Replaced'] });

    // RFC 7396: members given are set, `null` removes one, the rest stays.
    const sent: string[] = [];
    const contentTypes: Middleware = {
      onRequest: ({ request }) => {
        sent.push(request.headers.get('content-type') ?? '');
      },
    };
    const patched = await client.PATCH('/api/external/v1/Requests/{appointmentId}', {
      params: { path: { appointmentId: externalId }, header: { 'If-Match': '"2"' } },
      headers: { 'content-type': 'application/merge-patch+json' },
      body: { quantity: 3, quantityTypeCode: 'DY', serviceLevelCode: null },
      middleware: [contentTypes],
    });
    expect(sent).toEqual(['application/merge-patch+json']);
    expect(patched.response.status).toBe(200);
    if (!patched.data) throw new Error(`merge patch failed: ${patched.response.status}`);
    expect(patched.data).toMatchObject({
      version: 3,
      quantity: 3,
      quantityTypeCode: 'DY',
      providerNotes: ['Replaced'],
    });
    expect(patched.data.serviceLevelCode).toBeUndefined();
    expect(patched.data.patient?.memberId).toBe('SBX-10001');
  });

  it('narrows a 400 to a Validation result or problem details, and a 404 to problem details', async () => {
    const client = clientOf(tenant.apiKey);
    const externalId = uniqueId('CLIENT-BAD');
    // Types allow it; the NPI's check digit is wrong: the Validation result says so.
    const invalid = await client.POST('/api/external/v1.1/Requests', {
      body: { ...requestBody(externalId), requestingProvider: { roleCode: '1P', npi: '1234567890' } },
    });
    expect(invalid.response.status).toBe(400);
    expect(invalid.response.headers.get('content-type')).toMatch(/^application\/json/);
    if (!invalid.error) throw new Error('an invalid NPI was accepted');
    const validation = validationResultOf(invalid.error);
    expect(validation.succeeded).toBe(false);
    expect(validation.type).toBe('none');
    expect(validation.errors).toEqual([expect.stringMatching(/^\/requestingProvider\/npi: /)]);

    // Malformed JSON: problem details, with the position and never the body.
    const malformed = await client.POST('/api/external/v1.1/Requests', {
      body: requestBody(externalId),
      bodySerializer: (body) => JSON.stringify(body).slice(0, 40),
    });
    expect(malformed.response.status).toBe(400);
    expect(malformed.response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    if (!malformed.error) throw new Error('malformed JSON was accepted');
    const problem = problemOf(malformed.error);
    expect(problem).toMatchObject({ type: 'about:blank', status: 400, title: 'Bad Request' });
    expect(problem.detail).not.toContain(externalId);

    const missing = await client.GET('/api/external/v1.1/Requests/{externalId}', {
      params: { path: { externalId } },
    });
    expect(missing.response.status).toBe(404);
    if (!missing.error) throw new Error('a missing request was found');
    const notFound = problemOf(missing.error);
    expect(notFound.status).toBe(404);
    expect(notFound.detail).toBe(`Request ${externalId} was not found.`);
    expect(notFound.requestId).toEqual(expect.any(String));
  });
});

describe('attachments through the generated client', () => {
  const attachmentsPath = '/api/external/v1.1/Requests/{externalId}/Attachments';
  const attachmentPath = '/api/external/v1.1/Requests/{externalId}/Attachments/{attachmentId}';

  const newRequest = async (client: ReturnType<typeof clientOf>) => {
    const externalId = uniqueId('CLIENT-ATT');
    const { response } = await client.POST('/api/external/v1.1/Requests', { body: requestBody(externalId) });
    expect(response.status).toBe(201);
    return externalId;
  };

  /** GET …/download: 303 to a presigned URL (not followed), then the bytes there. */
  const download = async (client: ReturnType<typeof clientOf>, externalId: string, attachmentId: string) => {
    const { response } = await client.GET(`${attachmentPath}/download`, {
      params: { path: { externalId, attachmentId } },
      redirect: 'manual',
    });
    expect(response.status).toBe(303);
    const location = response.headers.get('location');
    if (!location) throw new Error('303 without a Location');
    const file = await fetch(location);
    expect(file.status).toBe(200);
    return new Uint8Array(await file.arrayBuffer());
  };

  it('uploads a file as multipart/form-data (a Blob in FormData) and downloads the same bytes', async () => {
    const client = clientOf(tenant.apiKey);
    const externalId = await newRequest(client);
    const bytes = pdf(64 * 1024);
    const uploaded = await client.POST(attachmentsPath, {
      params: { path: { externalId } },
      body: {
        file: new File([bytes], 'mri-report.pdf', { type: 'application/pdf' }),
        documentType: 'Imaging',
        description: 'MRI report',
        sha256: sha256(bytes),
      },
      bodySerializer: (body) => {
        const form = new FormData();
        for (const [name, value] of Object.entries(body ?? {})) {
          if (value instanceof Blob || typeof value === 'string') form.append(name, value);
        }
        return form;
      },
    });
    expect(uploaded.response.status).toBe(201);
    if (!uploaded.data) throw new Error(`upload failed: ${uploaded.response.status}`);
    const { attachmentId } = uploaded.data;
    expect(uploaded.data).toMatchObject({
      requestExternalId: externalId,
      fileName: 'mri-report.pdf',
      contentType: 'application/pdf',
      size: bytes.length,
      sha256: sha256(bytes),
      documentType: 'Imaging',
      description: 'MRI report',
      status: 'available',
      uploadMethod: 'direct',
    });

    const metadata = await client.GET(attachmentPath, { params: { path: { externalId, attachmentId } } });
    expect(metadata.data).toEqual(uploaded.data);
    const list = await client.GET(attachmentsPath, { params: { path: { externalId } } });
    expect(list.data?.attachments.map((attachment) => attachment.attachmentId)).toEqual([attachmentId]);
    expect(sha256(await download(client, externalId, attachmentId))).toBe(sha256(bytes));

    const deleted = await client.DELETE(attachmentPath, { params: { path: { externalId, attachmentId } } });
    expect(deleted.response.status).toBe(204);
    const gone = await client.GET(attachmentPath, { params: { path: { externalId, attachmentId } } });
    expect(gone.response.status).toBe(404);
  });

  it('asks for a presigned upload, PUTs the bytes to its URL, reads the metadata and downloads', async () => {
    const client = clientOf(tenant.apiKey);
    const externalId = await newRequest(client);
    const bytes = pdf(256 * 1024);
    const asked = await client.POST(attachmentsPath, {
      params: { path: { externalId } },
      body: { fileName: 'ct-scan.pdf', contentType: 'application/pdf', size: bytes.length, sha256: sha256(bytes) },
    });
    expect(asked.response.status).toBe(201);
    if (!asked.data?.upload) throw new Error(`no presigned upload: ${asked.response.status}`);
    const { attachmentId, upload } = asked.data;
    expect(asked.data.status).toBe('pending');
    expect(upload.method).toBe('PUT');
    expect(Date.parse(upload.expiresAt)).toBeGreaterThan(Date.now());

    const put = await fetch(upload.url, { method: upload.method, headers: upload.headers, body: bytes });
    expect(put.status).toBe(200);
    const settled = await pollUntil(
      () => client.GET(attachmentPath, { params: { path: { externalId, attachmentId } } }),
      ({ data }) => data?.status !== 'pending',
      { timeoutMs: 15_000, intervalMs: 100 },
    );
    expect(settled.data).toMatchObject({
      attachmentId,
      status: 'available',
      uploadMethod: 'presigned',
      size: bytes.length,
      sha256: sha256(bytes),
    });
    expect(settled.data?.upload).toBeUndefined();
    expect(sha256(await download(client, externalId, attachmentId))).toBe(sha256(bytes));
  });
});

describe('portal accounts through the generated client', () => {
  it('creates, reads, lists, filters, replaces and deletes an account', async () => {
    const client = clientOf(tenant.apiKey);
    const externalId = uniqueId('client-acct');
    const created = await client.POST('/api/external/v1.1/Portals/accounts', {
      body: {
        externalId,
        clientUserId: tenant.clientUserId,
        portalId: 'sandbox',
        payerIds: ['SBX01'],
        displayName: 'Front desk (typed client)',
        username: 'frontdesk@clinic.example',
        password: 'Portal-Pa55word!',
      },
    });
    expect(created.response.status).toBe(201);
    expect(created.response.headers.get('etag')).toBe('"1"');
    if (!created.data) throw new Error(`create failed: ${created.response.status}`);
    const account = created.data;
    expect(account).toMatchObject({ externalId, status: 'active', passwordSet: true, totpSecretSet: false });
    expect(account).not.toHaveProperty('password');
    // Never logged in yet; once it has, `lastLogin.at` is when.
    expect(account.lastLogin).toBeNull();
    expect(account.attention).toBeNull();
    expect(Date.parse(account.createdAt)).toBeLessThanOrEqual(Date.now());

    const read = await client.GET('/api/external/v1.1/Portals/accounts/{externalId}', {
      params: { path: { externalId } },
    });
    expect(read.data).toEqual(account);

    // The list route's path segment is the client user (API Gateway names one variable per level).
    const listed = await client.GET('/api/external/v1.1/Portals/accounts/{externalId}/list', {
      params: { path: { externalId: tenant.clientUserId }, query: { pageSize: 100 } },
    });
    expect(listed.response.status).toBe(200);
    expect(listed.data?.items.map((item) => item.externalId)).toContain(externalId);

    const filtered = await client.POST('/api/external/v1.1/Portals/accounts/filter', {
      body: { clientUserId: tenant.clientUserId, search: 'typed client', payerId: 'SBX01' },
    });
    expect(filtered.data?.items.map((item) => item.externalId)).toEqual([externalId]);
    expect(filtered.data?.nextCursor).toBeNull();

    const replaced = await client.PUT('/api/external/v1.1/Portals/accounts/{externalId}', {
      params: { path: { externalId }, header: { 'If-Match': '"1"' } },
      body: {
        clientUserId: account.clientUserId,
        portalId: account.portalId,
        payerIds: [...account.payerIds, 'SBX02'],
        displayName: account.displayName,
        username: account.username,
        status: 'disabled',
      },
    });
    expect(replaced.response.status).toBe(200);
    expect(replaced.data).toMatchObject({ version: 2, status: 'disabled', payerIds: ['SBX01', 'SBX02'] });

    const stale = await client.DELETE('/api/external/v1.1/Portals/accounts/{externalId}', {
      params: { path: { externalId }, header: { 'If-Match': '"1"' } },
    });
    expect(stale.response.status).toBe(412);
    const deleted = await client.DELETE('/api/external/v1.1/Portals/accounts/{externalId}', {
      params: { path: { externalId }, header: { 'If-Match': '"2"' } },
    });
    expect(deleted.response.status).toBe(204);
    const gone = await client.GET('/api/external/v1.1/Portals/accounts/{externalId}', {
      params: { path: { externalId } },
    });
    expect(gone.response.status).toBe(404);
  });
});

describe('automation through the generated client', () => {
  const serviceReviews = '/api/external/v1/ServiceReviews/requests';
  const terminal = (status: Schemas['Run']['status'] | undefined) => status === 'succeeded' || status === 'failed';

  it('issues a scraper token, fills the portal form (view-on-page) and reads a status (check-auth-status)', async () => {
    // A tenant of its own with the sandbox portal's plain user as its account for the SANDBOX payer.
    const automation = await newTenant('generated-client-rpa');
    const client = clientOf(automation.apiKey);
    const [plainUser] = SANDBOX_USERS;
    const account = await client.POST('/api/external/v1.1/Portals/accounts', {
      body: {
        externalId: 'sandbox-front-desk',
        clientUserId: automation.clientUserId,
        portalId: 'sandbox',
        payerIds: [SANDBOX_PAYER_ID],
        username: plainUser.username,
        password: plainUser.password,
      },
    });
    expect(account.response.status).toBe(201);
    const requestExternalId = 'DEMO-APPROVED';
    const request = await client.POST('/api/external/v1.1/Requests', { body: requestBody(requestExternalId) });
    expect(request.response.status).toBe(201);
    const { clientUserId } = automation;

    const access = await client.POST(`${serviceReviews}/{requestExternalId}/rpa`, {
      params: { path: { requestExternalId } },
      body: { clientUserId },
    });
    if (!access.data) throw new Error(`no scraper token: ${access.response.status}`);
    const { accessToken, scraperUri } = access.data;
    expect(scraperUri).toBe(`${baseUrl}${serviceReviews}/${requestExternalId}/rpa/session`);

    const started = await client.POST(`${serviceReviews}/{requestExternalId}/rpa/view-on-page`, {
      params: { path: { requestExternalId } },
      body: { clientUserId },
    });
    expect(started.response.status).toBe(202);
    if (!started.data) throw new Error(`view-on-page not started: ${started.response.status}`);
    const { runId } = started.data;
    expect(started.data.status).toBe('queued');
    expect(started.response.headers.get('location')).toBe(`${serviceReviews}/${requestExternalId}/rpa/runs/${runId}`);

    const settled = await pollUntil(
      () =>
        client.GET(`${serviceReviews}/{requestExternalId}/rpa/runs/{runId}`, {
          params: { path: { requestExternalId, runId } },
        }),
      ({ data }) => terminal(data?.status),
      { timeoutMs: 90_000 },
    );
    if (!settled.data) throw new Error(`run not read: ${settled.response.status}`);
    const run = settled.data;
    expect(run).toMatchObject({ runId, kind: 'view-on-page', status: 'succeeded', outcome: 'form_filled' });
    expect(run.portalAccountId).toBe('sandbox-front-desk');
    expect(run.enteredValues.reference).toEqual({ value: requestExternalId, readBack: true });
    expect(run.enteredValues['patient.memberId']?.value).toBe('SBX-10001');
    expect(run.steps.map((step) => step.step)).toContain('queued');
    expect(run.screenshots.length).toBeGreaterThan(0);

    // The run signed in with the account: its last login says how it went, and when.
    const used = await client.GET('/api/external/v1.1/Portals/accounts/{externalId}', {
      params: { path: { externalId: 'sandbox-front-desk' } },
    });
    if (!used.data?.lastLogin) throw new Error(`no last login: ${used.response.status}`);
    expect(used.data.lastLogin.result).toBe('succeeded');
    expect(Date.parse(used.data.lastLogin.at)).toBeGreaterThanOrEqual(Date.parse(run.createdAt));

    // The scraper session: the token instead of the API key.
    const session = await anonymousClient().GET(`${serviceReviews}/{requestExternalId}/rpa/session`, {
      params: { path: { requestExternalId } },
      headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json' },
    });
    expect(session.response.status).toBe(200);
    expect(session.data?.runs.map((shown) => shown.runId)).toEqual([runId]);

    const batch = await client.POST(`${serviceReviews}/rpa/batch/check-auth-status`, {
      body: { clientUserId, requestExternalIds: [requestExternalId] },
    });
    expect(batch.response.status).toBe(202);
    if (!batch.data) throw new Error(`batch not started: ${batch.response.status}`);
    const { batchId } = batch.data;
    expect(batch.data.total).toBe(1);
    const progress = await pollUntil(
      () =>
        client.GET(`${serviceReviews}/rpa/batch/check-auth-status/{batchId}`, {
          params: { path: { batchId } },
        }),
      ({ data }) => data?.status === 'done',
      { timeoutMs: 120_000 },
    );
    if (!progress.data) throw new Error(`batch not read: ${progress.response.status}`);
    expect(progress.data).toMatchObject({ batchId, status: 'done', total: 1, done: 1, failed: 0 });
    const [item] = progress.data.items;
    expect(item?.requestExternalId).toBe(requestExternalId);
    expect(item?.outcome).toBe('status_read');
    expect(item?.authorization).toEqual({ status: 'approved', number: 'SBX-AUTH-000101', decisionDate: '2026-02-20' });

    const checked = await client.GET('/api/external/v1.1/Requests/{externalId}', {
      params: { path: { externalId: requestExternalId } },
    });
    expect(checked.data?.authorization).toMatchObject({ status: 'approved', number: 'SBX-AUTH-000101' });
  }, 240_000);
});

describe('schemas through the generated client', () => {
  it('lists the schemas, serves one, and validates a payload against it', async () => {
    const client = clientOf(tenant.apiKey);
    const list = await client.GET('/api/external/v1.1/Schemas');
    expect(list.data?.schemas.map((schema) => schema.name)).toContain('PortalAccount');

    const schema = await client.GET('/api/external/v1.1/Schemas/{name}', {
      params: { path: { name: 'PortalAccount' } },
    });
    expect(schema.response.headers.get('content-type')).toMatch(/^application\/schema\+json/);
    if (!schema.data) throw new Error(`no schema: ${schema.response.status}`);
    expect(schema.data.title).toBe('PortalAccount');
    expect(schema.data.required).toEqual(expect.arrayContaining(['externalId', 'clientUserId', 'password']));
    expect(Object.keys(schema.data.properties ?? {})).toContain('totpSecret');

    const validated = await client.POST('/api/external/v1.1/Schemas/{name}/validate', {
      params: { path: { name: 'PortalAccount' } },
      body: { externalId: 'acct-1', clientUserId: tenant.clientUserId, portalId: 'sandbox', username: 'u' },
    });
    expect(validated.response.status).toBe(200);
    expect(validated.data).toEqual({
      succeeded: false,
      errors: ["/: Required error. must have required property 'password'."],
      type: 'none',
    });
    const unknown = await client.GET('/api/external/v1.1/Schemas/{name}', { params: { path: { name: 'Nope' } } });
    expect(unknown.response.status).toBe(404);
  });
});
