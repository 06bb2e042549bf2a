import { GetCommand, paginateScan, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { dynamo } from '#lib/aws/dynamodb';
import { apiKeyEntity } from '#lib/entities/tenancy';
import { hashApiKey, LAST_USED_RESOLUTION_MS } from '#lib/tenancy/api-keys';
import { call, newTenant, uniqueId } from '#test/support/api';
import { validRequest } from '#test/support/fixtures';

const v11 = '/api/external/v1.1/Requests';
const unauthorized = {
  type: 'about:blank',
  title: 'Unauthorized',
  status: 401,
  detail: 'A valid x-api-key header is required.',
};

describe('authentication (x-api-key → Lambda authorizer)', () => {
  let tenant: Awaited<ReturnType<typeof newTenant>>;
  beforeAll(async () => {
    tenant = await newTenant('auth');
  });

  it('answers 401 problem details without a key', async () => {
    const res = await call('GET', '/api/external/v1.1/Schemas');
    expect(res.status).toBe(401);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.body).toEqual(unauthorized);
  });

  it('answers 401 for an unknown key, a malformed key and an empty key', async () => {
    for (const apiKey of ['srk_thisKeyWasNeverIssuedToAnybodyAtAll', 'short', 'x'.repeat(500)]) {
      const res = await call('GET', '/api/external/v1.1/Schemas', { apiKey });
      expect(res.status, apiKey.slice(0, 10)).toBe(401);
      expect(res.body).toEqual(unauthorized);
    }
    expect((await call('GET', '/api/external/v1.1/Schemas', { headers: { 'x-api-key': '' } })).status).toBe(401);
  });

  it('checks the key before the body: no key and a bad body is still 401', async () => {
    const res = await call('POST', v11, { rawBody: '{not json', headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(401);
  });

  it('stores API keys only as SHA-256 hashes', async () => {
    // Every page: the shared table outgrows one Scan page (1 MB) as the suite writes to it.
    const Items: Record<string, unknown>[] = [];
    for await (const page of paginateScan({ client: dynamo }, { TableName: process.env.TABLE_NAME })) {
      Items.push(...(page.Items ?? []));
    }
    const raw = JSON.stringify(Items);
    expect(raw).not.toContain(tenant.apiKey);
    expect(raw).not.toContain(tenant.apiKey.slice(4));
    expect(Items.find((item) => item.keyHash === hashApiKey(tenant.apiKey))).toMatchObject({
      entity: 'ApiKey',
      clientId: tenant.clientId,
    });
  });

  it('accepts a valid key, then refuses it once revoked', async () => {
    const { clientId, keyId, apiKey } = await tenant.admin.createApiKey(tenant.clientId);
    expect(clientId).toBe(tenant.clientId);
    expect((await call('GET', '/api/external/v1.1/Schemas', { apiKey })).status).toBe(200);
    await tenant.admin.revokeApiKey(tenant.clientId, keyId);
    const refused = await call('GET', '/api/external/v1.1/Schemas', { apiKey });
    expect(refused.status).toBe(401);
    expect(refused.body).toEqual(unauthorized);
    // Other keys of the same client keep working.
    expect((await call('GET', '/api/external/v1.1/Schemas', { apiKey: tenant.apiKey })).status).toBe(200);
  });

  it('accepts a key until it expires, then answers 401 as for any other bad key', async () => {
    const { apiKey, keyId } = await tenant.admin.createApiKey(tenant.clientId, undefined, { expiresIn: '1h' });
    expect((await call('GET', '/api/external/v1.1/Schemas', { apiKey })).status).toBe(200);
    // Move its expiry into the past, as an hour's wait would.
    await dynamo.send(
      new UpdateCommand({
        TableName: process.env.TABLE_NAME,
        Key: apiKeyEntity.key({ keyHash: hashApiKey(apiKey) }),
        UpdateExpression: 'SET expiresAt = :past',
        ExpressionAttributeValues: { ':past': new Date(Date.now() - 1000).toISOString() },
      }),
    );
    const refused = await call('GET', '/api/external/v1.1/Schemas', { apiKey });
    expect(refused.status).toBe(401);
    expect(refused.body).toEqual(unauthorized);
    expect((await tenant.admin.listApiKeys(tenant.clientId)).apiKeys.find((key) => key.keyId === keyId)).toMatchObject({
      state: 'expired',
    });
  });

  it('records when a key was last used, at most once per window', async () => {
    const { apiKey } = await tenant.admin.createApiKey(tenant.clientId);
    const key = apiKeyEntity.key({ keyHash: hashApiKey(apiKey) });
    const stored = async () =>
      (await dynamo.send(new GetCommand({ TableName: process.env.TABLE_NAME, Key: key, ConsistentRead: true })))
        .Item as Record<string, string>;
    expect((await stored()).lastUsedAt).toBeUndefined();

    const before = new Date().toISOString();
    expect((await call('GET', '/api/external/v1.1/Schemas', { apiKey })).status).toBe(200);
    const first = await stored();
    expect(first.lastUsedAt! >= before && first.lastUsedAt! <= new Date().toISOString()).toBe(true);

    // Within the window: no write at all (the item is untouched, lastUsedAt included).
    for (let i = 0; i < 3; i++) expect((await call('GET', '/api/external/v1.1/Schemas', { apiKey })).status).toBe(200);
    expect(await stored()).toEqual(first);

    // Once the stamp is older than the window, the next use moves it.
    const stale = new Date(Date.now() - LAST_USED_RESOLUTION_MS - 1000).toISOString();
    await dynamo.send(
      new UpdateCommand({
        TableName: process.env.TABLE_NAME,
        Key: key,
        UpdateExpression: 'SET lastUsedAt = :stale',
        ExpressionAttributeValues: { ':stale': stale },
      }),
    );
    expect((await call('GET', '/api/external/v1.1/Schemas', { apiKey })).status).toBe(200);
    const moved = await stored();
    expect(moved.lastUsedAt! > first.lastUsedAt!).toBe(true);
    // Bookkeeping, not a change of the key: the rest of the item (version, updatedAt) stays as it was.
    expect({ ...moved, lastUsedAt: undefined }).toEqual({ ...first, lastUsedAt: undefined });
  });
});

describe('tenant isolation', () => {
  let a: Awaited<ReturnType<typeof newTenant>>;
  let b: Awaited<ReturnType<typeof newTenant>>;
  const id = uniqueId('shared');

  beforeAll(async () => {
    [a, b] = await Promise.all([newTenant('tenant-a'), newTenant('tenant-b')]);
    expect((await call('POST', v11, { apiKey: a.apiKey, body: validRequest(id) })).status).toBe(201);
  });

  it("answers 404 for another client's request on read, replace and patch", async () => {
    const read = await call('GET', `${v11}/${id}`, { apiKey: b.apiKey });
    expect(read.status).toBe(404);
    expect(read.body).toMatchObject({ status: 404, detail: `Request ${id} was not found.` });
    expect((await call('PUT', `${v11}/${id}`, { apiKey: b.apiKey, body: validRequest(id) })).status).toBe(404);
    expect(
      (await call('PATCH', `/api/external/v1/Requests/${id}`, { apiKey: b.apiKey, body: { quantity: 1 } })).status,
    ).toBe(404);
  });

  it('keeps ids per client: the same externalId is a different request for another client', async () => {
    const created = await call('POST', v11, { apiKey: b.apiKey, body: { ...validRequest(id), quantity: 99 } });
    expect(created.status).toBe(201);
    const upserted = await call('PUT', `/api/external/v1/Requests/${id}`, {
      apiKey: b.apiKey,
      body: { ...validRequest(id), quantity: 42 },
    });
    expect(upserted.status).toBe(200);
    const ofA = await call('GET', `${v11}/${id}`, { apiKey: a.apiKey });
    expect(ofA.body).toMatchObject({ quantity: 3, version: 1 });
    const ofB = await call('GET', `${v11}/${id}`, { apiKey: b.apiKey });
    expect(ofB.body).toMatchObject({ quantity: 42, version: 2 });
  });
});
