import { beforeAll, describe, expect, it } from 'vitest';
import { jwksPathOf, keySetIdOf } from '#lib/payer-api/signing-keys/key-set-id';
import { dynamoPayerConnectionStore } from '#lib/payer-connections/dynamo-payer-connection-store';
import { baseUrl, call, newTenant, uniqueId } from '#test/support/api';
import {
  PAYER_CONNECTIONS as base,
  connectionBody,
  connectionReplacementOf,
  payerClientId,
  payerWithApi,
  payerWithoutApi,
} from '#test/support/payer-connections';

/**
 * Payer connections over HTTP (docs/payer-connections.md): the rules of portal accounts (tenants,
 * ETags, conditional writes), a payer of the directory of payer APIs, and the jwksUri of the client's
 * key set. Idempotency, quotas and organization-restricted keys: payer-connections-limits.test.ts.
 */

type Tenant = Awaited<ReturnType<typeof newTenant>>;

let tenant: Tenant;
let payerId: string;

const create = async (t: Tenant, overrides: Record<string, unknown> = {}, payer = payerId) => {
  const res = await call('POST', base, { apiKey: t.apiKey, body: connectionBody(t.clientUserId, payer, overrides) });
  expect(res.status, res.text).toBe(201);
  return res.body as Record<string, any>;
};

beforeAll(async () => {
  [tenant, payerId] = await Promise.all([newTenant('payer-connections'), payerWithApi()]);
});

describe('create and read', () => {
  it('creates a connection: 201, Location, ETag, the payer’s client_id as clientId, and the jwksUri', async () => {
    const body = connectionBody(tenant.clientUserId, payerId);
    const res = await call('POST', base, { apiKey: tenant.apiKey, body });
    expect(res.status, res.text).toBe(201);
    expect(res.headers.get('location')).toBe(`${base}/${body.externalId}`);
    expect(res.headers.get('etag')).toBe('"1"');
    expect(res.body).toEqual({
      externalId: body.externalId,
      clientUserId: tenant.clientUserId,
      organizationId: tenant.organizationId,
      payerId,
      clientId: body.clientId,
      status: 'active',
      statusReason: null,
      jwksUri: `${baseUrl}${jwksPathOf(keySetIdOf(tenant.clientId))}`,
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      updatedAt: res.body.createdAt,
      version: 1,
    });
    // Our own client id is never shown: the key set's id is a one-way hash of it.
    expect(res.text).not.toContain(tenant.clientId);

    const read = await call('GET', `${base}/${body.externalId}`, { apiKey: tenant.apiKey });
    expect(read.status).toBe(200);
    expect(read.body).toEqual(res.body);
    expect(read.headers.get('etag')).toBe('"1"');
    const cached = await call('GET', `${base}/${body.externalId}`, {
      apiKey: tenant.apiKey,
      headers: { 'if-none-match': 'W/"1"' },
    });
    expect(cached.status).toBe(304);
    expect(cached.headers.get('etag')).toBe('"1"');
  });

  it('gives every connection of a client the same jwksUri, and another client another one', async () => {
    const other = await newTenant('payer-connections-jwks');
    const [first, second, others] = [await create(tenant), await create(tenant), await create(other)];
    expect(second.jwksUri).toBe(first.jwksUri);
    expect(others.jwksUri).not.toBe(first.jwksUri);
    expect(new URL(first.jwksUri).pathname).toMatch(/^\/api\/external\/v1\.1\/Payers\/jwks\/[A-Za-z0-9_-]{22}$/);
  });

  it('may be created disabled', async () => {
    expect(await create(tenant, { status: 'disabled' })).toMatchObject({ status: 'disabled', statusReason: null });
  });

  it('answers 409 when the externalId exists, and 404 for an unknown or another client’s clientUserId', async () => {
    const connection = await create(tenant);
    const taken = await call('POST', base, {
      apiKey: tenant.apiKey,
      body: connectionBody(tenant.clientUserId, payerId, { externalId: connection.externalId }),
    });
    expect(taken.status).toBe(409);
    expect(taken.body).toMatchObject({ status: 409, title: 'Conflict' });
    const other = await newTenant('payer-connections-other');
    for (const clientUserId of ['no-such-user', other.clientUserId]) {
      const res = await call('POST', base, { apiKey: tenant.apiKey, body: connectionBody(clientUserId, payerId) });
      expect(res.status).toBe(404);
      expect(res.body.detail).toContain(clientUserId);
    }
  });

  it('answers 422 no_payer_api for a payer without an API in the directory, and stores nothing', async () => {
    const body = connectionBody(tenant.clientUserId, payerWithoutApi());
    const res = await call('POST', base, { apiKey: tenant.apiKey, body });
    expect(res.status).toBe(422);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.body).toMatchObject({ status: 422, reason: 'no_payer_api', field: 'payerId' });
    expect(res.body.detail).toContain(body.payerId);
    expect((await call('GET', `${base}/${body.externalId}`, { apiKey: tenant.apiKey })).status).toBe(404);
  });

  it('answers 404 for an unknown connection and 401 without an API key', async () => {
    expect((await call('GET', `${base}/${uniqueId('missing')}`, { apiKey: tenant.apiKey })).status).toBe(404);
    expect((await call('GET', `${base}/${uniqueId('missing')}`, {})).status).toBe(401);
    expect((await call('POST', base, { body: connectionBody(tenant.clientUserId, payerId) })).status).toBe(401);
  });
});

describe('bad input', () => {
  it('reports missing and unknown fields and bad values as the spec’s Validation result', async () => {
    const missing = await call('POST', base, {
      apiKey: tenant.apiKey,
      body: { externalId: uniqueId('pconn'), clientUserId: tenant.clientUserId, extra: true },
    });
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({
      succeeded: false,
      type: 'none',
      errors: [
        "/: Required error. must have required properties 'payerId', 'clientId'.",
        "/: AdditionalProperties error. must NOT have additional property 'extra'.",
      ],
    });
    const values = await call('POST', base, {
      apiKey: tenant.apiKey,
      body: connectionBody(tenant.clientUserId, 'bad payer', { clientId: 'has space', status: 'attention' }),
    });
    expect(values.status).toBe(400);
    expect(values.body.errors).toEqual([
      '/payerId: Pattern error for value "bad payer". Message: must match pattern "^[A-Za-z0-9][A-Za-z0-9._:-]*$".',
      '/clientId: Pattern error for value "has space". Message: must match pattern "^[!-~]+$".',
      '/status: Enum error for value "attention". Message: must be equal to one of the allowed values.',
    ]);
  });

  it('refuses malformed JSON (400), another media type (415) and an oversized body (413), without a 500', async () => {
    const malformed = await call('POST', base, {
      apiKey: tenant.apiKey,
      rawBody: '{"clientId": "oops',
      headers: { 'content-type': 'application/json' },
    });
    expect(malformed.status).toBe(400);
    expect(malformed.text).not.toContain('oops');
    const text = await call('POST', base, {
      apiKey: tenant.apiKey,
      rawBody: 'x',
      headers: { 'content-type': 'text/plain' },
    });
    expect(text.status).toBe(415);
    expect(text.body.accepted).toEqual(['application/json']);
    const huge = await call('PUT', `${base}/${uniqueId('pconn')}`, {
      apiKey: tenant.apiKey,
      body: connectionBody(tenant.clientUserId, payerId, { clientId: 'x'.repeat(300 * 1024) }),
    });
    expect(huge.status).toBe(413);
    expect(huge.body.limitBytes).toBe(256 * 1024);
    const array = await call('POST', base, { apiKey: tenant.apiKey, body: [] });
    expect(array.status).toBe(400);
  });

  it('checks the path id', async () => {
    const res = await call('GET', `${base}/${encodeURIComponent('bad#id')}`, { apiKey: tenant.apiKey });
    expect(res.status).toBe(400);
    expect(res.body.parameter).toBe('externalId');
  });
});

describe('list by clientUserId', () => {
  it('lists the connections of the user’s organization (any user of it), oldest first, paged, and nothing else', async () => {
    const t = await newTenant('payer-connections-list');
    const colleague = `colleague-${uniqueId()}`;
    await t.admin.createClientUser(t.clientId, t.organizationId, colleague);
    const { organizationId: otherOrg } = await t.admin.createOrganization(t.clientId, 'Other org');
    const outsider = `outsider-${uniqueId()}`;
    await t.admin.createClientUser(t.clientId, otherOrg, outsider);

    const first = await create(t);
    const second = await create(t, { clientUserId: colleague });
    await create(t, { clientUserId: outsider });

    const res = await call('GET', `${base}/${t.clientUserId}/list`, { apiKey: t.apiKey });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ items: [first, second], pageSize: 25, nextCursor: null });
    const viaColleague = await call('GET', `${base}/${colleague}/list`, { apiKey: t.apiKey });
    expect(viaColleague.body.items).toEqual(res.body.items);

    const paged = await call('GET', `${base}/${t.clientUserId}/list?pageSize=1`, { apiKey: t.apiKey });
    expect(paged.body.items).toEqual([first]);
    const rest = await call(
      'GET',
      `${base}/${t.clientUserId}/list?cursor=${encodeURIComponent(paged.body.nextCursor)}`,
      {
        apiKey: t.apiKey,
      },
    );
    expect(rest.body).toEqual({ items: [second], pageSize: 1, nextCursor: null });
    // A cursor is the organization's: another organization's list refuses it.
    const elsewhere = await call(
      'GET',
      `${base}/${outsider}/list?cursor=${encodeURIComponent(paged.body.nextCursor)}`,
      { apiKey: t.apiKey },
    );
    expect(elsewhere.status).toBe(400);
    expect(elsewhere.body.parameter).toBe('cursor');
  });

  it('answers 404 for an unknown clientUserId, and a bad query with the Validation result', async () => {
    expect((await call('GET', `${base}/nobody-${uniqueId()}/list`, { apiKey: tenant.apiKey })).status).toBe(404);
    const bad = await call('GET', `${base}/${tenant.clientUserId}/list?pageSize=101&cursor=${'c'.repeat(1025)}`, {
      apiKey: tenant.apiKey,
    });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({
      succeeded: false,
      type: 'none',
      errors: [
        '/pageSize: Maximum error for value "101". Message: must be <= 100.',
        '/cursor: MaxLength error. must NOT have more than 1024 characters.',
      ],
    });
  });
});

describe('replace', () => {
  it('replaces every field; the version, ETag and updatedAt move, createdAt stays', async () => {
    const connection = await create(tenant);
    const otherPayer = await payerWithApi('OTHER');
    await new Promise((resolve) => setTimeout(resolve, 5));
    const clientId = payerClientId();
    const res = await call('PUT', `${base}/${connection.externalId}`, {
      apiKey: tenant.apiKey,
      body: connectionReplacementOf(connection, { payerId: otherPayer, clientId, status: 'disabled' }),
    });
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get('etag')).toBe('"2"');
    expect(res.body).toEqual({
      ...connection,
      payerId: otherPayer,
      clientId,
      status: 'disabled',
      updatedAt: expect.any(String),
      version: 2,
    });
    expect(res.body.updatedAt > connection.updatedAt).toBe(true);
    expect((await call('GET', `${base}/${connection.externalId}`, { apiKey: tenant.apiKey })).body).toEqual(res.body);
  });

  it('answers 412 on a stale If-Match or body version, and lets one of concurrent writers win', async () => {
    const connection = await create(tenant);
    const url = `${base}/${connection.externalId}`;
    const first = await call('PUT', url, {
      apiKey: tenant.apiKey,
      headers: { 'if-match': '"1"' },
      body: connectionReplacementOf(connection, { status: 'disabled' }),
    });
    expect(first.status).toBe(200);
    const staleHeader = await call('PUT', url, {
      apiKey: tenant.apiKey,
      headers: { 'if-match': '"1"' },
      body: connectionReplacementOf(connection),
    });
    expect(staleHeader.status).toBe(412);
    expect(staleHeader.body.detail).toContain('"2"');
    const staleBody = await call('PUT', url, {
      apiKey: tenant.apiKey,
      body: connectionReplacementOf(connection, { version: 1 }),
    });
    expect(staleBody.status).toBe(412);
    expect((await call('DELETE', url, { apiKey: tenant.apiKey, headers: { 'if-match': '"1"' } })).status).toBe(412);

    const results = await Promise.all(
      ['a', 'b', 'c'].map((name) =>
        call('PUT', url, {
          apiKey: tenant.apiKey,
          headers: { 'if-match': '"2"' },
          body: connectionReplacementOf(connection, { clientId: `cid-${name}` }),
        }),
      ),
    );
    expect(results.map((r) => r.status).sort()).toEqual([200, 412, 412]);
  });

  it('refuses a mismatched externalId (400), an unknown connection (404) and a new payer without an API (422)', async () => {
    const connection = await create(tenant);
    const url = `${base}/${connection.externalId}`;
    const mismatch = await call('PUT', url, {
      apiKey: tenant.apiKey,
      body: connectionReplacementOf(connection, { externalId: 'another-id' }),
    });
    expect(mismatch.status).toBe(400);
    const missing = await call('PUT', `${base}/${uniqueId('missing')}`, {
      apiKey: tenant.apiKey,
      body: connectionReplacementOf(connection),
    });
    expect(missing.status).toBe(404);
    const noApi = await call('PUT', url, {
      apiKey: tenant.apiKey,
      body: connectionReplacementOf(connection, { payerId: payerWithoutApi() }),
    });
    expect(noApi.status).toBe(422);
    expect(noApi.body.reason).toBe('no_payer_api');
    expect((await call('GET', url, { apiKey: tenant.apiKey })).body.version).toBe(1);
  });

  it('moves a connection to another organization of the client', async () => {
    const t = await newTenant('payer-connections-move');
    const { organizationId: otherOrg } = await t.admin.createOrganization(t.clientId, 'Second org');
    const otherUser = `second-${uniqueId()}`;
    await t.admin.createClientUser(t.clientId, otherOrg, otherUser);
    const connection = await create(t);
    const moved = await call('PUT', `${base}/${connection.externalId}`, {
      apiKey: t.apiKey,
      body: connectionReplacementOf(connection, { clientUserId: otherUser }),
    });
    expect(moved.status, moved.text).toBe(200);
    expect(moved.body).toMatchObject({ organizationId: otherOrg, clientUserId: otherUser });
    expect((await call('GET', `${base}/${t.clientUserId}/list`, { apiKey: t.apiKey })).body.items).toEqual([]);
    expect((await call('GET', `${base}/${otherUser}/list`, { apiKey: t.apiKey })).body.items).toEqual([moved.body]);
  });
});

describe('status: attention, set by the automation', () => {
  it('stays through a replace that changes nothing of the payer’s; status active or a new clientId clears it', async () => {
    const connection = await create(tenant);
    const url = `${base}/${connection.externalId}`;
    const mark = () =>
      dynamoPayerConnectionStore.markAttention(tenant.clientId, connection.externalId, 'invalid_client');
    expect(
      await dynamoPayerConnectionStore.markAttention(tenant.clientId, connection.externalId, 'invalid_client', {
        payerClientId: 'another-client-id',
      }),
    ).toBe(false);
    expect(await mark()).toBe(true);
    const marked = await call('GET', url, { apiKey: tenant.apiKey });
    expect(marked.body).toMatchObject({ status: 'attention', statusReason: 'invalid_client', version: 2 });

    const kept = await call('PUT', url, { apiKey: tenant.apiKey, body: connectionReplacementOf(connection) });
    expect(kept.body).toMatchObject({ status: 'attention', statusReason: 'invalid_client', version: 3 });
    const cleared = await call('PUT', url, {
      apiKey: tenant.apiKey,
      body: connectionReplacementOf(connection, { status: 'active' }),
    });
    expect(cleared.body).toMatchObject({ status: 'active', statusReason: null, version: 4 });

    expect(await mark()).toBe(true);
    const newClientId = await call('PUT', url, {
      apiKey: tenant.apiKey,
      body: connectionReplacementOf(connection, { clientId: payerClientId() }),
    });
    expect(newClientId.body).toMatchObject({ status: 'active', statusReason: null });

    const disabled = await call('PUT', url, {
      apiKey: tenant.apiKey,
      body: connectionReplacementOf(newClientId.body, { status: 'disabled' }),
    });
    expect(disabled.body.status).toBe('disabled');
    expect(await mark()).toBe(false);
    expect(await dynamoPayerConnectionStore.markAttention(tenant.clientId, uniqueId('gone'), 'invalid_client')).toBe(
      false,
    );
  });
});

describe('the channel choice’s lookups (the store)', () => {
  it('finds the organization’s oldest active connection to a payer by key, never a disabled or another’s one', async () => {
    const t = await newTenant('payer-connections-find');
    const payer = await payerWithApi('FIND');
    const { organizationId: otherOrg } = await t.admin.createOrganization(t.clientId, 'Other org');
    const outsider = `outsider-${uniqueId()}`;
    await t.admin.createClientUser(t.clientId, otherOrg, outsider);
    const find = () => dynamoPayerConnectionStore.findActive(t.clientId, t.organizationId, payer);

    expect(await find()).toBeUndefined();
    await create(t, { status: 'disabled' }, payer);
    await create(t, { clientUserId: outsider }, payer);
    await create(t, {}, payerId);
    expect(await find()).toBeUndefined();

    const oldest = await create(t, {}, payer);
    const newer = await create(t, {}, payer);
    expect(await find()).toMatchObject({
      clientId: t.clientId,
      organizationId: t.organizationId,
      externalId: oldest.externalId,
      payerId: payer,
      payerClientId: oldest.clientId,
      status: 'active',
    });
    expect(await dynamoPayerConnectionStore.get(t.clientId, newer.externalId)).toMatchObject({
      externalId: newer.externalId,
      payerClientId: newer.clientId,
    });

    await call('PUT', `${base}/${oldest.externalId}`, {
      apiKey: t.apiKey,
      body: connectionReplacementOf(oldest, { status: 'disabled' }),
    });
    expect((await find())?.externalId).toBe(newer.externalId);
    await dynamoPayerConnectionStore.markAttention(t.clientId, newer.externalId, 'invalid_client');
    expect(await find()).toBeUndefined();
    expect(await dynamoPayerConnectionStore.findActive(t.clientId, otherOrg, payer)).toMatchObject({
      organizationId: otherOrg,
    });
  });
});

describe('delete', () => {
  it('deletes (204); a stale If-Match is 412; afterwards the connection is gone', async () => {
    const connection = await create(tenant);
    const url = `${base}/${connection.externalId}`;
    expect((await call('DELETE', url, { apiKey: tenant.apiKey, headers: { 'if-match': '"7"' } })).status).toBe(412);
    const deleted = await call('DELETE', url, { apiKey: tenant.apiKey, headers: { 'if-match': '"1"' } });
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expect((await call('GET', url, { apiKey: tenant.apiKey })).status).toBe(404);
    expect((await call('DELETE', url, { apiKey: tenant.apiKey })).status).toBe(404);
    const list = await call('GET', `${base}/${tenant.clientUserId}/list?pageSize=100`, { apiKey: tenant.apiKey });
    expect(list.body.items.map((c: any) => c.externalId)).not.toContain(connection.externalId);
  });
});

describe('tenant isolation', () => {
  it('answers 404 for another client’s connection and organization, on every route', async () => {
    const owner = await newTenant('payer-connections-owner');
    const intruder = await newTenant('payer-connections-intruder');
    const connection = await create(owner);
    const url = `${base}/${connection.externalId}`;
    const as = { apiKey: intruder.apiKey };
    expect((await call('GET', url, as)).status).toBe(404);
    const replacement = connectionReplacementOf(connection, { clientUserId: intruder.clientUserId });
    expect((await call('PUT', url, { ...as, body: replacement })).status).toBe(404);
    expect((await call('DELETE', url, as)).status).toBe(404);
    expect((await call('GET', `${base}/${owner.clientUserId}/list`, as)).status).toBe(404);
    // Ids are per client: the same externalId is free for the intruder, and the owner's is untouched.
    const same = await call('POST', base, {
      ...as,
      body: connectionBody(intruder.clientUserId, payerId, { externalId: connection.externalId }),
    });
    expect(same.status).toBe(201);
    expect((await call('GET', url, { apiKey: owner.apiKey })).body).toEqual(connection);
  });
});
