import { createHash } from 'node:crypto';
import { GetCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { dynamo } from '#lib/aws/dynamodb';
import { tableName } from '#lib/config/resources';
import { TABLE_KEY, TTL_ATTRIBUTE } from '#lib/table';
import { type ApiResponse, type CallOptions, call, newTenant, uniqueId } from '#test/support/api';
import { minimalRequest } from '#test/support/fixtures';
import { attachmentsOf, multipart, newRequest, sample, sha256 } from './attachments-support.ts';

/*
 * Idempotency-Key over HTTP, on every route that creates something: a retry replays the first
 * response and creates nothing; another request under the same key is 422; failures keep nothing.
 * What needs control over timing (409 while running, expiry): idempotency-middleware.test.ts.
 */
type Tenant = Awaited<ReturnType<typeof newTenant>>;
const requests = '/api/external/v1.1/Requests';
const accountsV11 = '/api/external/v1.1/Portals/accounts';
const accountsV1 = '/api/external/v1/Portals/accounts';

let tenant: Tenant;
let other: Tenant;
beforeAll(async () => {
  [tenant, other] = await Promise.all([newTenant('idempotency'), newTenant('idempotency-other')]);
});

const newKey = () => uniqueId('idem');
const withKey = (key: string, options: CallOptions): CallOptions => ({
  ...options,
  headers: { ...options.headers, 'Idempotency-Key': key },
});

/** Headers that differ between any two responses: the transport's, not the handler's. */
const perResponse = new Set(['date', 'x-amzn-requestid', 'connection', 'keep-alive']);
const headersOf = (res: ApiResponse) =>
  Object.fromEntries([...res.headers].filter(([name]) => !perResponse.has(name)).sort());

/** A replay is the first response, status, body and headers, plus Idempotent-Replayed. */
const expectReplay = (replay: ApiResponse, first: ApiResponse) => {
  expect(first.headers.get('idempotent-replayed')).toBeNull();
  expect(replay.status).toBe(first.status);
  expect(replay.text).toBe(first.text);
  expect(headersOf(replay)).toEqual({ ...headersOf(first), 'idempotent-replayed': 'true' });
};

const expectProblem = (res: ApiResponse, status: number, detail: RegExp) => {
  expect(res.status, res.text).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(res.body).toMatchObject({ type: 'about:blank', status, detail: expect.stringMatching(detail) });
};
const expectKeyReused = (res: ApiResponse) => expectProblem(res, 422, /already used for a different request/);

/** The record of a key, where lib/http/idempotency.ts keeps it (docs/data-model.md). */
const recordOf = async (clientId: string, key: string) => {
  const hash = createHash('sha256')
    .update(JSON.stringify([clientId, key]))
    .digest('base64');
  const { Item } = await dynamo.send(
    new GetCommand({
      TableName: tableName(),
      Key: { [TABLE_KEY.partition]: `IDEMPOTENCY#${hash}`, [TABLE_KEY.sort]: 'IDEMPOTENCY' },
    }),
  );
  return Item;
};

/** Every idempotency record of the table. */
const allRecords = async () => {
  const items: Record<string, any>[] = [];
  let ExclusiveStartKey: Record<string, unknown> | undefined;
  do {
    const page = await dynamo.send(
      new ScanCommand({
        TableName: tableName(),
        ExclusiveStartKey,
        FilterExpression: 'begins_with(#pk, :prefix)',
        ExpressionAttributeNames: { '#pk': TABLE_KEY.partition },
        ExpressionAttributeValues: { ':prefix': 'IDEMPOTENCY#' },
      }),
    );
    items.push(...(page.Items ?? []));
    ExclusiveStartKey = page.LastEvaluatedKey;
  } while (ExclusiveStartKey);
  return items;
};

describe('POST /v1.1/Requests with an Idempotency-Key', () => {
  const create = (key: string | undefined, body: unknown, who: Tenant = tenant) =>
    call(
      'POST',
      requests,
      key === undefined ? { apiKey: who.apiKey, body } : withKey(key, { apiKey: who.apiKey, body }),
    );

  it('replays the first response to a retry, and keeps it for 24 hours under the client and key', async () => {
    const key = newKey();
    const body = minimalRequest(uniqueId('req'));
    const first = await create(key, body);
    expect(first.status, first.text).toBe(201);
    const replay = await create(key, body);
    expectReplay(replay, first);
    // Not created twice: a second create of that externalId would have been 409.
    expect((await call('GET', `${requests}/${body.externalId}`, { apiKey: tenant.apiKey })).body.version).toBe(1);

    const record = await recordOf(tenant.clientId, key);
    expect(record).toMatchObject({
      status: 'COMPLETED',
      data: { statusCode: 201, body: first.text, headers: expect.objectContaining({ Location: expect.any(String) }) },
      validation: expect.any(String),
    });
    const expiresIn = record![TTL_ATTRIBUTE] - Date.now() / 1000;
    expect(expiresIn).toBeGreaterThan(24 * 3600 - 60);
    expect(expiresIn).toBeLessThan(24 * 3600 + 60);
  });

  it('takes the body as parsed: another spelling of the same JSON is a retry', async () => {
    const key = newKey();
    const body = minimalRequest(uniqueId('req'));
    const first = await create(key, body);
    const spaced = await call(
      'POST',
      requests,
      withKey(key, {
        apiKey: tenant.apiKey,
        rawBody: JSON.stringify(body, null, 2),
        headers: { 'content-type': 'application/json' },
      }),
    );
    expectReplay(spaced, first);
  });

  it('answers 422 to another body under the same key, and keeps the first request as it was', async () => {
    const key = newKey();
    const body = minimalRequest(uniqueId('req'));
    expect((await create(key, body)).status).toBe(201);
    expectKeyReused(await create(key, { ...body, placeOfServiceCode: '22' }));
    expectKeyReused(await create(key, minimalRequest(uniqueId('req'))));
    const stored = await call('GET', `${requests}/${body.externalId}`, { apiKey: tenant.apiKey });
    expect(stored.body).toMatchObject({ placeOfServiceCode: '11', version: 1 });
  });

  it('keeps no result of a failed request: a corrected retry with the same key runs', async () => {
    const key = newKey();
    const taken = minimalRequest(uniqueId('req'));
    expect((await create(undefined, taken)).status).toBe(201);
    // Thrown by the handler (the externalId exists): the in-progress record is deleted.
    expectProblem(await create(key, taken), 409, /already exists/);
    expect(await recordOf(tenant.clientId, key)).toBeUndefined();
    // Refused by validation, before any record.
    const invalid = await create(key, { ...minimalRequest(uniqueId('req')), admissionTypeCode: 'nope' });
    expect(invalid.status).toBe(400);
    expect(invalid.body).toMatchObject({ succeeded: false });

    const corrected = minimalRequest(uniqueId('req'));
    const res = await create(key, corrected);
    expect(res.status, res.text).toBe(201);
    expect(res.headers.get('idempotent-replayed')).toBeNull();
    expect(res.body.externalId).toBe(corrected.externalId);
  });

  it('keeps each client’s keys apart', async () => {
    const key = newKey();
    const mine = await create(key, minimalRequest(uniqueId('req')));
    const theirs = await create(key, minimalRequest(uniqueId('req')), other);
    expect(theirs.status, theirs.text).toBe(201);
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
    expect(theirs.body.externalId).not.toBe(mine.body.externalId);
    expect((await recordOf(other.clientId, key))?.data.body).toBe(theirs.text);
    expect((await recordOf(tenant.clientId, key))?.data.body).toBe(mine.text);
  });

  it('lets exactly one of two concurrent identical requests run; the other gets 409 or the replay', async () => {
    const key = newKey();
    const body = minimalRequest(uniqueId('req'));
    const both = await Promise.all([create(key, body), create(key, body)]);
    const ran = both.filter((res) => res.status === 201 && res.headers.get('idempotent-replayed') === null);
    expect(ran).toHaveLength(1);
    const [loser] = both.filter((res) => res !== ran[0]);
    if (loser!.status === 409) {
      expectProblem(loser!, 409, /still in progress/);
      expect(loser!.headers.get('retry-after')).toBe('1');
    } else expectReplay(loser!, ran[0]!);
    expectReplay(await create(key, body), ran[0]!);
  });

  it('behaves as without idempotency when the header is absent, and writes no record', async () => {
    const body = minimalRequest(uniqueId('req'));
    const first = await create(undefined, body);
    expect(first.status).toBe(201);
    expectProblem(await create(undefined, body), 409, /already exists/);
    const records = await allRecords();
    expect(records.length).toBeGreaterThan(0);
    expect(records.filter((record) => JSON.stringify(record).includes(body.externalId))).toEqual([]);
  });

  it('refuses an empty, too long or non-printable key with 400, before anything runs', async () => {
    const externalId = uniqueId('req');
    // Control characters but tab cannot be sent by fetch: idempotency-middleware.test.ts sends them.
    for (const key of ['', 'k'.repeat(256), 'tab\there', 'caf\u00e9']) {
      const res = await create(key, minimalRequest(externalId));
      expectProblem(res, 400, /Idempotency-Key header must be 1 to 255 printable ASCII characters/);
      expect(res.body.header).toBe('Idempotency-Key');
    }
    expect((await call('GET', `${requests}/${externalId}`, { apiKey: tenant.apiKey })).status).toBe(404);
    const longest = `${'k'.repeat(230)}${newKey()}`.slice(-255);
    expect((await create(longest, minimalRequest(externalId))).status).toBe(201);
  });
});

describe('POST …/Attachments with an Idempotency-Key', () => {
  let externalId: string;
  beforeAll(async () => {
    externalId = await newRequest(tenant.apiKey);
  });
  const attachmentCount = async (id: string) =>
    (await call('GET', attachmentsOf(id), { apiKey: tenant.apiKey })).body.attachments.length as number;

  /** A multipart upload; each call builds the body anew, with a new boundary. */
  const upload = (key: string, bytes: Uint8Array, fields: Record<string, string> = {}, requestId = externalId) => {
    const form = multipart([
      { name: 'file', file: { fileName: 'note.pdf', contentType: 'application/pdf', bytes } },
      ...Object.entries(fields).map(([name, value]) => ({ name, value })),
    ]);
    return call(
      'POST',
      attachmentsOf(requestId),
      withKey(key, { apiKey: tenant.apiKey, rawBody: form.body, headers: { 'content-type': form.contentType } }),
    );
  };

  it('replays a multipart upload sent again (another boundary) and stores the file once', async () => {
    const key = newKey();
    const bytes = sample.pdf();
    const before = await attachmentCount(externalId);
    const first = await upload(key, bytes, { documentType: 'clinical-notes' });
    expect(first.status, first.text).toBe(201);
    expectReplay(await upload(key, bytes, { documentType: 'clinical-notes' }), first);
    expect(await attachmentCount(externalId)).toBe(before + 1);
  });

  it('answers 422 to another file, another field or another request under the same key', async () => {
    const key = newKey();
    const bytes = sample.pdf();
    expect((await upload(key, bytes, { documentType: 'clinical-notes' })).status).toBe(201);
    const count = await attachmentCount(externalId);
    expectKeyReused(await upload(key, sample.pdf(), { documentType: 'clinical-notes' }));
    expectKeyReused(await upload(key, bytes, { documentType: 'imaging' }));
    expectKeyReused(await upload(key, bytes));
    const otherRequest = await newRequest(tenant.apiKey);
    expectKeyReused(await upload(key, bytes, { documentType: 'clinical-notes' }, otherRequest));
    expect(await attachmentCount(externalId)).toBe(count);
    expect(await attachmentCount(otherRequest)).toBe(0);
  });

  it('replays a presigned-upload declaration, upload URL included, and declares it once', async () => {
    const key = newKey();
    const bytes = sample.pdf();
    const declaration = {
      fileName: 'scan.pdf',
      contentType: 'application/pdf',
      size: bytes.length,
      sha256: sha256(bytes),
    };
    const declare = (body: unknown) =>
      call('POST', attachmentsOf(externalId), withKey(key, { apiKey: tenant.apiKey, body }));
    const before = await attachmentCount(externalId);
    const first = await declare(declaration);
    expect(first.status, first.text).toBe(201);
    expect(first.body.upload.url).toEqual(expect.any(String));
    expectReplay(await declare(declaration), first);
    expectKeyReused(await declare({ ...declaration, size: bytes.length + 1 }));
    expect(await attachmentCount(externalId)).toBe(before + 1);
  });

  it('keeps no result when the request is unknown: the same key then works on an existing one', async () => {
    const key = newKey();
    const bytes = sample.pdf();
    expectProblem(await upload(key, bytes, {}, uniqueId('missing')), 404, /not found/);
    const res = await upload(key, bytes);
    expect(res.status, res.text).toBe(201);
    expect(res.headers.get('idempotent-replayed')).toBeNull();
  });
});

describe('POST /Portals/accounts (v1.1 and the obsolete v1) with an Idempotency-Key', () => {
  const PASSWORD = 'Idem-Pa55word!';
  const TOTP = 'JBSWY3DPEHPK3PXP';
  const account = (overrides: Record<string, unknown> = {}) => ({
    externalId: uniqueId('pacc'),
    clientUserId: tenant.clientUserId,
    portalId: 'sandbox',
    payerIds: ['SBX01'],
    displayName: 'Idempotent office',
    username: 'idem@clinic.example',
    password: PASSWORD,
    totpSecret: TOTP,
    ...overrides,
  });
  const create = (base: string, key: string, body: unknown) =>
    call('POST', base, withKey(key, { apiKey: tenant.apiKey, body }));
  const accountCount = async () =>
    (await call('GET', `${accountsV11}/${tenant.clientUserId}/list?pageSize=100`, { apiKey: tenant.apiKey })).body.items
      .length as number;

  it('replays the creation, creates one account, and keeps no secret in the record', async () => {
    const key = newKey();
    const body = account();
    const before = await accountCount();
    const first = await create(accountsV11, key, body);
    expect(first.status, first.text).toBe(201);
    expectReplay(await create(accountsV11, key, body), first);
    expectKeyReused(await create(accountsV11, key, { ...body, password: 'Another-Pa55word!' }));
    expect(await accountCount()).toBe(before + 1);
    const record = JSON.stringify(await recordOf(tenant.clientId, key));
    expect(record).toContain(body.externalId);
    expect(record).not.toContain(PASSWORD);
    expect(record).not.toContain(TOTP);
  });

  it('replays the obsolete v1 route with its deprecation headers; the key is not reusable on v1.1', async () => {
    const key = newKey();
    const body = account();
    const first = await create(accountsV1, key, body);
    expect(first.status, first.text).toBe(201);
    expect(first.headers.get('deprecation')).toMatch(/^@\d+$/);
    const replay = await create(accountsV1, key, body);
    expectReplay(replay, first);
    expect(replay.headers.get('link')).toBe(first.headers.get('link'));
    expectKeyReused(await create(accountsV11, key, body));
  });

  it('ignores the header on the filter, which creates nothing', async () => {
    const key = newKey();
    const filter = () =>
      call(
        'POST',
        `${accountsV11}/filter`,
        withKey(key, { apiKey: tenant.apiKey, body: { clientUserId: tenant.clientUserId } }),
      );
    const [first, second] = [await filter(), await filter()];
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(second.headers.get('idempotent-replayed')).toBeNull();
    expect(await recordOf(tenant.clientId, key)).toBeUndefined();
  });

  it('keeps no result of a failed creation: the corrected body runs under the same key', async () => {
    const key = newKey();
    expectProblem(await create(accountsV11, key, account({ clientUserId: uniqueId('nobody') })), 404, /not found/);
    const res = await create(accountsV11, key, account());
    expect(res.status, res.text).toBe(201);
    expect(res.headers.get('idempotent-replayed')).toBeNull();
  });
});
