import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamo } from '#lib/aws/dynamodb';
import { tableName } from '#lib/config/resources';
import { attachmentEntity } from '#lib/entities/attachment';
import { payerConnectionEntity } from '#lib/entities/payer-connection';
import { portalAccountEntity } from '#lib/entities/portal-account';
import { requestEntity } from '#lib/entities/request';
import { call, newTenant, uniqueId } from '#test/support/api';
import { validRequest } from '#test/support/fixtures';
import { casesSent, PROPERTY_TIMEOUT_MS, SEED } from '#test/support/hostile/checks';
import { familyProperties } from '#test/support/hostile/properties';
import { hostileFamilies, SECRET_PASSWORD, titleOf } from '#test/support/hostile/table';
import { apiRoutes, casesOver, type RouteTarget, targetOf } from '#test/support/hostile/targets';
import type { World } from '#test/support/hostile/world';
import { connectionBody, PAYER_CONNECTIONS, payerWithApi } from '#test/support/payer-connections';
import { download, upload } from './attachments-support.ts';

/**
 * Hostile input against every route of the route table, as properties (fast-check): one test group per
 * family of test/support/hostile/table.ts (mutated and pathological bodies, raw bytes, path ids, headers and
 * query names, oversized heads, methods, content types), one test per route in each, checked against the
 * family's expectation there. Every answer must be a documented 4xx of the right shape (problem details, or
 * the Validation result for a schema failure) or, where the input happens to be valid, a normal answer whose
 * stored data reads back exactly as sent; never a 5xx, a stack trace or an echo. Sentinel data of the same
 * tenant, never addressed by a case, must be unchanged at the end.
 *
 * HOSTILE_SEED picks another fixed seed (a failure prints the seed and path that reproduce it);
 * HOSTILE_RUNS multiplies the number of cases (e.g. 10 for a long local run).
 */

const v11 = '/api/external/v1.1';

let world: World;
let clientId: string;
let targets: RouteTarget[];
let before: Awaited<ReturnType<typeof sentinelSnapshot>>;

/* ------------------------------------------------------------------------------------------------
 * The world: a tenant, the data cases may write to (play), and sentinel data nothing may change.
 */

const createRequest = async (apiKey: string, externalId: string) => {
  const res = await call('POST', `${v11}/Requests`, { apiKey, body: validRequest(externalId) });
  expect(res.status, res.text).toBe(201);
  return externalId;
};

const createAttachment = async (apiKey: string, externalId: string) => {
  const res = await upload(apiKey, externalId, {
    fileName: 'note.txt',
    contentType: 'text/plain',
    bytes: Buffer.from(`Clinical note ${externalId}.\n`),
  });
  expect(res.status, res.text).toBe(201);
  return res.body.attachmentId as string;
};

const createAccount = async (apiKey: string, clientUserId: string, externalId: string) => {
  const res = await call('POST', `${v11}/Portals/accounts`, {
    apiKey,
    body: {
      externalId,
      clientUserId,
      portalId: 'sandbox',
      payerIds: ['SBX01'],
      username: 'sentinel@clinic.example',
      password: SECRET_PASSWORD,
      totpSecret: 'JBSWY3DPEHPK3PXP',
    },
  });
  expect(res.status, res.text).toBe(201);
  return externalId;
};

const createConnection = async (apiKey: string, clientUserId: string, payerId: string, externalId: string) => {
  const body = connectionBody(clientUserId, payerId, { externalId });
  const res = await call('POST', PAYER_CONNECTIONS, { apiKey, body });
  expect(res.status, res.text).toBe(201);
  return body.externalId;
};

const sentinelSnapshot = async () => {
  const { request, attachment, account, connection } = world.sentinel;
  const read = async (path: string) => {
    const res = await call('GET', path, { apiKey: world.apiKey });
    return { status: res.status, etag: res.headers.get('etag'), body: res.body };
  };
  const item = async (key: { pk: string; sk: string }) =>
    (await dynamo.send(new GetCommand({ TableName: tableName(), Key: key, ConsistentRead: true }))).Item;
  return {
    request: await read(`${v11}/Requests/${request}`),
    attachments: await read(`${v11}/Requests/${request}/Attachments`),
    attachment: await read(`${v11}/Requests/${request}/Attachments/${attachment}`),
    bytes: (await download(world.apiKey, request, attachment)).bytes?.toString('base64'),
    account: await read(`${v11}/Portals/accounts/${account}`),
    connection: await read(`${PAYER_CONNECTIONS}/${connection}`),
    items: [
      await item(requestEntity.key({ clientId, externalId: request })),
      await item(attachmentEntity.key({ clientId, externalId: request, attachmentId: attachment })),
      await item(portalAccountEntity.key({ clientId, externalId: account })),
      await item(payerConnectionEntity.key({ clientId, externalId: connection })),
    ],
  };
};

beforeAll(async () => {
  const tenant = await newTenant('hostile');
  clientId = tenant.clientId;
  const { apiKey, clientUserId } = tenant;
  const payerId = await payerWithApi('HOSTILE');
  const sentinelRequest = await createRequest(apiKey, uniqueId('sentinel'));
  const playRequest = await createRequest(apiKey, uniqueId('play'));
  world = {
    apiKey,
    clientUserId,
    payerId,
    sentinel: {
      request: sentinelRequest,
      attachment: await createAttachment(apiKey, sentinelRequest),
      account: await createAccount(apiKey, clientUserId, uniqueId('sentinel')),
      connection: await createConnection(apiKey, clientUserId, payerId, uniqueId('sentinel')),
    },
    play: {
      request: playRequest,
      attachment: await createAttachment(apiKey, playRequest),
      account: await createAccount(apiKey, clientUserId, uniqueId('play')),
      connection: await createConnection(apiKey, clientUserId, payerId, uniqueId('play')),
    },
  };
  targets = apiRoutes.map((route) => targetOf(route, world));
  before = await sentinelSnapshot();
  expect(before.request.status).toBe(200);
  expect(before.attachment.status).toBe(200);
  expect(before.account.status).toBe(200);
  expect(before.connection.status).toBe(200);
  expect(before.items.every(Boolean)).toBe(true);
});

afterAll(() => {
  const total = [...casesSent.values()].reduce((sum, n) => sum + n, 0);
  const groups = [...casesSent].map(([group, n]) => `${group} ${n}`).join(', ');
  console.log(`hostile input: ${total} cases (seed ${SEED}): ${groups}`);
});

// The table's families × the route table: one test per route (or path) and family. Tests are named before
// beforeAll makes the world, so each takes its route's target by index.
for (const row of hostileFamilies) {
  describe(titleOf(row), () => {
    for (const { index, name } of casesOver(row.over)) {
      it(name, { timeout: PROPERTY_TIMEOUT_MS }, () => familyProperties[row.family](targets[index]!, row));
    }
  });
}

/* ------------------------------------------------------------------------------------------------
 * Last: the sentinel data, which no case addressed, is exactly as it was.
 */

describe('stored data', () => {
  it('the sentinel request, attachment, portal account and payer connection are unchanged', async () => {
    expect(await sentinelSnapshot()).toEqual(before);
  });
});
