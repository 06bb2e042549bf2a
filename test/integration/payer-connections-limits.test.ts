import { createHash } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { dynamo } from '#lib/aws/dynamodb';
import { tableName } from '#lib/config/resources';
import { dynamoPayerConnectionStore } from '#lib/payer-connections/dynamo-payer-connection-store';
import { TABLE_KEY } from '#lib/table';
import { dynamoStorageUsageStore } from '#lib/tenancy/dynamo-storage-usage-store';
import { type ApiResponse, call, newTenant, uniqueId } from '#test/support/api';
import {
  PAYER_CONNECTIONS as base,
  connectionBody,
  connectionReplacementOf,
  payerWithApi,
  payerWithoutApi,
} from '#test/support/payer-connections';

/**
 * Payer connections under the limits portal accounts have (docs/payer-connections.md): an
 * Idempotency-Key on create, the quota of connections per organization, and API keys restricted to
 * one organization (docs/security.md, "Organizations inside a client").
 */

type Tenant = Awaited<ReturnType<typeof newTenant>>;
let payerId: string;
beforeAll(async () => {
  payerId = await payerWithApi('LIMITS');
});

const post = (apiKey: string, body: unknown, headers: Record<string, string> = {}) =>
  call('POST', base, { apiKey, body, headers });

const expectProblem = (res: ApiResponse, status: number, detail: RegExp) => {
  expect(res.status, res.text).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(res.body).toMatchObject({ type: 'about:blank', status, detail: expect.stringMatching(detail) });
};

/** Headers that differ between any two responses: the transport's, not the handler's. */
const perResponse = new Set(['date', 'x-amzn-requestid', 'connection', 'keep-alive']);
const headersOf = (res: ApiResponse) =>
  Object.fromEntries([...res.headers].filter(([name]) => !perResponse.has(name)).sort());

/** The record of a key, where lib/http/idempotency.ts keeps it (docs/data-model.md). */
const recordOf = async (clientId: string, key: string) => {
  const hash = createHash('sha256')
    .update(JSON.stringify([clientId, key]))
    .digest('base64');
  const Key = { [TABLE_KEY.partition]: `IDEMPOTENCY#${hash}`, [TABLE_KEY.sort]: 'IDEMPOTENCY' };
  return (await dynamo.send(new GetCommand({ TableName: tableName(), Key }))).Item;
};

const listed = async (t: Pick<Tenant, 'apiKey' | 'clientUserId'>) =>
  (await call('GET', `${base}/${t.clientUserId}/list?pageSize=100`, { apiKey: t.apiKey })).body.items as unknown[];

describe('POST with an Idempotency-Key', () => {
  let tenant: Tenant;
  beforeAll(async () => {
    tenant = await newTenant('payer-connections-idempotency');
  });

  it('replays the creation and creates one connection; the same key with another body is a 422', async () => {
    const key = uniqueId('idem');
    const body = connectionBody(tenant.clientUserId, payerId);
    const first = await post(tenant.apiKey, body, { 'Idempotency-Key': key });
    expect(first.status, first.text).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const replay = await post(tenant.apiKey, body, { 'Idempotency-Key': key });
    expect(replay.status).toBe(201);
    expect(replay.text).toBe(first.text);
    expect(headersOf(replay)).toEqual({ ...headersOf(first), 'idempotent-replayed': 'true' });
    expectProblem(
      await post(tenant.apiKey, { ...body, clientId: 'another-client-id' }, { 'Idempotency-Key': key }),
      422,
      /already used for a different request/,
    );
    expect(await listed(tenant)).toHaveLength(1);
    // The record keeps the response (ids, the payer's client_id), never a plain hash of the body.
    expect(JSON.stringify(await recordOf(tenant.clientId, key))).toContain(body.externalId);
  });

  it('keeps nothing of a refused creation: the corrected body runs under the same key', async () => {
    const key = uniqueId('idem');
    const body = connectionBody(tenant.clientUserId, payerWithoutApi());
    expectProblem(await post(tenant.apiKey, body, { 'Idempotency-Key': key }), 422, /has no API/);
    expect(await recordOf(tenant.clientId, key)).toBeUndefined();
    const corrected = await post(tenant.apiKey, { ...body, payerId }, { 'Idempotency-Key': key });
    expect(corrected.status, corrected.text).toBe(201);
    expect(corrected.headers.get('idempotent-replayed')).toBeNull();
  });
});

describe('payer connections per organization', () => {
  const counted = async (clientId: string, organizationId: string) =>
    (await dynamoStorageUsageStore.getPayerConnections(clientId, organizationId))?.payerConnections;

  it('refuses a connection past the quota with 409 and nothing stored, per organization; a deletion frees one', async () => {
    const tenant = await newTenant('payer-connections-quota');
    await tenant.admin.setStorageQuotas(tenant.clientId, { payerConnectionsQuota: 2 });
    const first = await post(tenant.apiKey, connectionBody(tenant.clientUserId, payerId));
    expect(first.status, first.text).toBe(201);
    expect((await post(tenant.apiKey, connectionBody(tenant.clientUserId, payerId))).status).toBe(201);

    const body = connectionBody(tenant.clientUserId, payerId);
    const refused = await post(tenant.apiKey, body);
    expectProblem(refused, 409, /^This organization already has 2 payer connections, the most it may have/);
    expect(refused.body).toMatchObject({ quota: 'payerConnectionsPerOrganization', limit: 2 });
    expect(await dynamoPayerConnectionStore.get(tenant.clientId, body.externalId)).toBeUndefined();
    expect(await counted(tenant.clientId, tenant.organizationId)).toBe(2);
    // A payer without an API is refused before the quota is counted.
    expect((await post(tenant.apiKey, connectionBody(tenant.clientUserId, payerWithoutApi()))).status).toBe(422);

    // Another organization of the same client has its own count; a move is counted there first.
    const { organizationId } = await tenant.admin.createOrganization(tenant.clientId, 'second organization');
    const clientUserId = uniqueId('user');
    await tenant.admin.createClientUser(tenant.clientId, organizationId, clientUserId);
    const elsewhere = await post(tenant.apiKey, connectionBody(clientUserId, payerId));
    expect(elsewhere.status).toBe(201);
    const move = await call('PUT', `${base}/${elsewhere.body.externalId}`, {
      apiKey: tenant.apiKey,
      body: connectionReplacementOf(elsewhere.body, { clientUserId: tenant.clientUserId }),
    });
    expectProblem(move, 409, /already has 2 payer connections/);

    expect((await call('DELETE', `${base}/${first.body.externalId}`, { apiKey: tenant.apiKey })).status).toBe(204);
    expect(await counted(tenant.clientId, tenant.organizationId)).toBe(1);
    const moved = await call('PUT', `${base}/${elsewhere.body.externalId}`, {
      apiKey: tenant.apiKey,
      body: connectionReplacementOf(elsewhere.body, { clientUserId: tenant.clientUserId }),
    });
    expect(moved.status, moved.text).toBe(200);
    expect(await counted(tenant.clientId, tenant.organizationId)).toBe(2);
    expect(await counted(tenant.clientId, organizationId)).toBe(0);
  });

  it('never lets concurrent creates pass the quota', async () => {
    const tenant = await newTenant('payer-connections-quota-concurrent');
    await tenant.admin.setStorageQuotas(tenant.clientId, { payerConnectionsQuota: 3 });
    const responses = await Promise.all(
      Array.from({ length: 8 }, () => post(tenant.apiKey, connectionBody(tenant.clientUserId, payerId))),
    );
    expect(responses.map((res) => res.status).sort()).toEqual([...Array(3).fill(201), ...Array(5).fill(409)]);
    expect(await counted(tenant.clientId, tenant.organizationId)).toBe(3);
    expect(await listed(tenant)).toHaveLength(3);
  });
});

describe('an organization-restricted API key', () => {
  let t: Tenant;
  /** Each organization's restricted key and client user, and one connection in each (made by the unrestricted key). */
  const orgs: Record<'a' | 'b', { apiKey: string; clientUserId: string; organizationId: string; connection: any }> =
    {} as never;

  beforeAll(async () => {
    t = await newTenant('payer-connections-scope');
    const { organizationId: orgB } = await t.admin.createOrganization(t.clientId, 'Org B');
    const userB = uniqueId('user-b');
    await t.admin.createClientUser(t.clientId, orgB, userB);
    for (const [name, organizationId, clientUserId] of [
      ['a', t.organizationId, t.clientUserId],
      ['b', orgB, userB],
    ] as const) {
      const { apiKey } = await t.admin.createApiKey(t.clientId, undefined, { organizationId });
      const created = await post(t.apiKey, connectionBody(clientUserId, payerId));
      expect(created.status, created.text).toBe(201);
      orgs[name] = { apiKey, clientUserId, organizationId, connection: created.body };
    }
  });

  it('reads and lists its own organization’s connections', async () => {
    const { apiKey, clientUserId, connection } = orgs.a;
    const own = await call('GET', `${base}/${connection.externalId}`, { apiKey });
    expect(own.status).toBe(200);
    expect(own.body).toEqual(connection);
    const list = await call('GET', `${base}/${clientUserId}/list`, { apiKey });
    expect(list.body.items).toEqual([connection]);
  });

  it('gets 404 for another organization’s connection and client user on every route; nothing changes', async () => {
    const { apiKey } = orgs.a;
    const theirs = orgs.b.connection;
    const url = `${base}/${theirs.externalId}`;
    expect((await call('GET', url, { apiKey })).status).toBe(404);
    for (const clientUserId of [orgs.b.clientUserId, orgs.a.clientUserId]) {
      const put = await call('PUT', url, { apiKey, body: connectionReplacementOf(theirs, { clientUserId }) });
      expect(put.status).toBe(404);
    }
    expect((await call('DELETE', url, { apiKey })).status).toBe(404);
    expect((await call('GET', `${base}/${orgs.b.clientUserId}/list`, { apiKey })).status).toBe(404);
    expect((await post(apiKey, connectionBody(orgs.b.clientUserId, payerId))).status).toBe(404);
    expect((await call('GET', url, { apiKey: t.apiKey })).body).toEqual(theirs);
  });

  it('never moves its own connection to another organization (404), and creates in its own', async () => {
    const { apiKey, clientUserId } = orgs.a;
    const created = await post(apiKey, connectionBody(clientUserId, payerId));
    expect(created.status).toBe(201);
    expect(created.body.organizationId).toBe(orgs.a.organizationId);
    const move = await call('PUT', `${base}/${created.body.externalId}`, {
      apiKey,
      body: connectionReplacementOf(created.body, { clientUserId: orgs.b.clientUserId }),
    });
    expect(move.status).toBe(404);
    expect(move.body.detail).toContain(orgs.b.clientUserId);
    expect((await call('GET', `${base}/${created.body.externalId}`, { apiKey: t.apiKey })).body).toEqual(created.body);
  });

  it('does not replay what another key of the client created under the same Idempotency-Key', async () => {
    const body = connectionBody(orgs.b.clientUserId, payerId);
    const headers = { 'Idempotency-Key': uniqueId('idem') };
    expect((await post(t.apiKey, body, headers)).status).toBe(201);
    const replayed = await post(orgs.a.apiKey, body, headers);
    expect(replayed.status).toBe(404);
    expect(replayed.text).not.toContain(body.clientId);
  });
});
