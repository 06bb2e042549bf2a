import { BatchGetCommand, GetCommand, PutCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { dynamo } from '#lib/aws/dynamodb';
import { tableName } from '#lib/config/resources';
import { recheckEntity } from '#lib/entities/recheck';
import { automationFlightEntity } from '#lib/entities/storage-usage';
import { dynamoRecheckStore } from '#lib/rechecks/dynamo-recheck-store';
import { dynamoTenantStore } from '#lib/tenancy/dynamo-tenant-store';
import { lambdaContext } from '#local/gateway/invoke';
import { enableInvocationContexts, ownInvocation } from '#local/invocations';
import { startRecheckTimer } from '#local/rechecks';
import { SANDBOX_DEMO_MEMBERS, SANDBOX_MEMBERS, SANDBOX_PAYER_ID } from '#local/sandbox-portal/seed';
import { enforceTableGrants } from '#local/table-grants';
import { uniqueId } from '#test/support/api';
import { loadSourceHandler } from '#test/support/in-process-gateway';
import {
  automationTenant,
  createRequest,
  getRequest,
  locationOf,
  pollUntil,
  settledBatch,
  startBatch,
} from './rpa-end-to-end-support.ts';

/*
 * LOCAL_TABLE_GRANTS=enforce (local/table-grants.ts), in this process: a function held to partitions
 * (`leadingKeys`) is refused, as IAM refuses it, a DynamoDB call outside its grants, and its own calls go
 * through. Then the re-checks' two tasks, run from source here as the stack's timer runs them, within theirs.
 */
beforeAll(async () => {
  // First: before any AWS SDK request of this process.
  await enableInvocationContexts();
  enforceTableGrants();
});

/** `work` as an invocation of the handler `module`. */
const as = (module: string, work: () => Promise<unknown>) =>
  ownInvocation(async () => work(), module)({}, lambdaContext('TableGrantsTest'));
const put = (pk: string, sk: string) =>
  dynamo.send(new PutCommand({ TableName: tableName(), Item: { pk, sk, entity: 'TableGrantsTest' } }));
const denied = { name: 'AccessDeniedException' };

describe('local table grants', () => {
  it('refuse a recorder what IAM refuses it, each item of a transaction and each key of a batch, and let its own through', async () => {
    const client = uniqueId('grants');
    const run = `CLIENT#${client}#REQ#req-1`;
    await expect(as('rpa/record-run-failure', () => put(run, 'RPA#run-1'))).resolves.toBeDefined();
    // The client's own partition (its webhooks), another kind (a portal account), an action it does not hold.
    await expect(as('rpa/record-run-failure', () => put(`CLIENT#${client}`, 'WEBHOOK#w'))).rejects.toMatchObject(
      denied,
    );
    await expect(as('rpa/record-run-failure', () => put(`CLIENT#${client}#PACC#a`, 'PACC'))).rejects.toMatchObject(
      denied,
    );
    const transaction = (pks: string[]) =>
      dynamo.send(
        new TransactWriteCommand({
          TransactItems: pks.map((pk) => ({ Put: { TableName: tableName(), Item: { pk, sk: 'X', entity: 'T' } } })),
        }),
      );
    await expect(
      as('rpa/record-run-failure', () => transaction([run, `CLIENT#${client}#EVENT#e-1`])),
    ).resolves.toBeDefined();
    await expect(
      as('rpa/record-run-failure', () => transaction([run, `CLIENT#${client}#RPABATCH#b-1`])),
    ).rejects.toMatchObject(denied);
    const batchGet = (pks: string[]) =>
      dynamo.send(
        new BatchGetCommand({ RequestItems: { [tableName()]: { Keys: pks.map((pk) => ({ pk, sk: 'X' })) } } }),
      );
    await expect(as('rpa/finish-batch', () => batchGet([run]))).resolves.toBeDefined();
    await expect(as('rpa/finish-batch', () => batchGet([run, `CLIENT#${client}#PACC#a`]))).rejects.toMatchObject(
      denied,
    );
    // A route's function (no partitions of its own) and this test's own calls are not checked.
    await expect(as('requests/get-request', () => put(`CLIENT#${client}`, 'WEBHOOK#w'))).resolves.toBeDefined();
    await expect(put(`CLIENT#${client}`, 'WEBHOOK#w')).resolves.toBeDefined();
  });

  it("let a worker read a client's settings by projection alone, and only where its row says so", async () => {
    const id = uniqueId('grants-settings');
    const client = { clientId: id, name: 'grants', createdAt: new Date().toISOString(), rechecks: 'off' as const };
    await dynamoTenantStore.putClient({ ...client, usageIdentifierKey: 'not-for-workers' });
    expect(await as('rpa/check-portal-status', () => dynamoTenantStore.getClientSettings(id))).toEqual(client);
    await expect(as('rpa/check-portal-status', () => dynamoTenantStore.getClient(id))).rejects.toMatchObject(denied);
    await expect(as('rpa/fill-portal-form', () => dynamoTenantStore.getClientSettings(id))).rejects.toMatchObject(
      denied,
    );
    // The usage plan key is not among the names: asked for, it is refused.
    const projected = (names: string[]) =>
      dynamo.send(
        new GetCommand({
          TableName: tableName(),
          Key: { pk: `CLIENT#${id}`, sk: 'CLIENT' },
          ProjectionExpression: names.map((_, i) => `#n${i}`).join(', '),
          ExpressionAttributeNames: Object.fromEntries(names.map((name, i) => [`#n${i}`, name])),
        }),
      );
    await expect(as('rpa/check-portal-status', () => projected(['rechecks']))).resolves.toBeDefined();
    await expect(
      as('rpa/check-portal-status', () => projected(['rechecks', 'usageIdentifierKey'])),
    ).rejects.toMatchObject(denied);
  });
});

/** Until the automation's flights have their own partition, a re-check batch's admission writes outside its grants. */
const flightsInOwnPartition = automationFlightEntity.keys.pk.template.endsWith('#AUTOMATION#INFLIGHT');

describe('the re-checks, held to their grants', () => {
  const memberOf = (memberId: string) => SANDBOX_MEMBERS.find((member) => member.memberId === memberId)!;
  const rechecks = startRecheckTimer(loadSourceHandler, 24 * 3600 * 1000);
  const scheduleOf = async (clientId: string, externalId: string) => {
    const key = recheckEntity.key({ clientId, externalId });
    const { Item } = await dynamo.send(new GetCommand({ TableName: tableName(), Key: key, ConsistentRead: true }));
    return Item ? recheckEntity.fromItem(Item) : undefined;
  };

  it('select a due re-check and move it on; start its batch once the flights have their own partition', async () => {
    const tenant = await automationTenant('grants-rechecks');
    await createRequest(tenant, 'DEMO-PENDED', memberOf(SANDBOX_DEMO_MEMBERS['DEMO-PENDED']), SANDBOX_PAYER_ID);
    const started = await startBatch(tenant, ['DEMO-PENDED']);
    expect(started.status, started.text).toBe(202);
    await settledBatch(tenant, locationOf(started));
    const before = await getRequest(tenant, 'DEMO-PENDED');
    const schedule = (await scheduleOf(tenant.clientId, 'DEMO-PENDED'))!;
    const past = new Date(Date.now() - 60_000).toISOString();
    expect(await dynamoRecheckStore.reschedule(schedule, { checksDone: 0, dueAt: past, now: past })).toBe(true);

    await rechecks.runOnce();

    // SelectDueRechecks read the request and client and moved the schedule on: within its partitions.
    expect(await scheduleOf(tenant.clientId, 'DEMO-PENDED')).toMatchObject({ checksDone: 1 });
    if (!flightsInOwnPartition) return;
    // StartRecheckBatch admitted and started the batch: the portal is read again.
    await pollUntil(
      () => getRequest(tenant, 'DEMO-PENDED'),
      (request) => request.authorization.lastCheckedAt > before.authorization.lastCheckedAt,
      { timeoutMs: 90_000, intervalMs: 500 },
    );
  });
});
