import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, describe, expect, it } from 'vitest';
import { dynamo } from '#lib/aws/dynamodb';
import { tableName } from '#lib/config/resources';
import { automationRunsInFlightEntity } from '#lib/entities/storage-usage';
import { RateLimited } from '#lib/errors';
import { dynamoAccountLeases } from '#lib/portal/dynamo-account-lease';
import { automationQuotas } from '#lib/runs/automation-quotas';
import { dynamoAutomationUsage } from '#lib/runs/dynamo-automation-usage';
import { dynamoTenantStore } from '#lib/tenancy/dynamo-tenant-store';
import { call, newTenant } from '#test/support/api';
import { locationOf, settledRun } from './rpa-end-to-end-support.ts';
import { newPortalAccount, newRequest, rpaOf } from './rpa-support.ts';

/*
 * The in-flight automation bound under simultaneous starts, through the API's handlers on the local
 * stack (docs/rpa.md, "Bounded automation"). The test holds the portal account's lease, so every run it
 * admits waits for the account (no browser, no login) and stays in flight while the starts arrive; then
 * it lets them go and they end. Then the counter's self-healing, on the table, with the quotas' clock
 * moved past a flight's timeout.
 */
const leases = dynamoAccountLeases();
const HOLDER = 'test-holds-the-account';
const held: Array<{ clientId: string; accountId: string }> = [];
afterAll(async () => {
  for (const { clientId, accountId } of held) await leases.release(clientId, accountId, HOLDER);
});

const startViewOnPage = (tenant: { apiKey: string; clientUserId: string }, externalId: string) =>
  call('POST', `${rpaOf(externalId)}/view-on-page`, {
    apiKey: tenant.apiKey,
    body: { clientUserId: tenant.clientUserId },
  });

describe('runs in flight under simultaneous starts', () => {
  it('admits no more than the bound when three times as many starts arrive at once; the rest get 429 with Retry-After', async () => {
    const LIMIT = 3;
    const tenant = await newTenant('in-flight-burst');
    const accountId = await newPortalAccount(tenant);
    await tenant.admin.setAutomationQuotas(tenant.clientId, { automationRunsInFlight: LIMIT });
    expect(await leases.acquire(tenant.clientId, accountId, HOLDER, 600)).toBe(true);
    held.push({ clientId: tenant.clientId, accountId });
    const requests: string[] = [];
    for (let i = 0; i < 3 * LIMIT; i++) requests.push(await newRequest(tenant.apiKey));

    const answers = await Promise.all(requests.map((externalId) => startViewOnPage(tenant, externalId)));

    const admitted = answers.filter((res) => res.status === 202);
    const refused = answers.filter((res) => res.status === 429);
    expect(
      answers.map((res) => res.status),
      answers.map((res) => res.text).join('\n'),
    ).toHaveLength(3 * LIMIT);
    expect(admitted).toHaveLength(LIMIT);
    expect(refused).toHaveLength(2 * LIMIT);
    for (const res of refused) {
      expect(res.headers.get('retry-after')).toBe('30');
      expect(res.body).toMatchObject({ quota: 'runsInFlight', limit: LIMIT });
    }

    // The account is free again: the admitted runs log in (refused: the account's password is not the
    // portal's), end, and land; their places in flight are free for the next start.
    await leases.release(tenant.clientId, accountId, HOLDER);
    for (const res of admitted) await settledRun(tenant, locationOf(res));
    const next = await startViewOnPage(tenant, await newRequest(tenant.apiKey));
    expect(next.status, next.text).toBe(202);
    await settledRun(tenant, locationOf(next));
  });
});

describe('the in-flight count heals itself', () => {
  /** The client's counter of runs in flight, as stored. */
  const counted = async (clientId: string) =>
    (
      await dynamo.send(
        new GetCommand({
          TableName: tableName(),
          Key: automationRunsInFlightEntity.key({ clientId }),
          ConsistentRead: true,
        }),
      )
    ).Item?.runs;
  const partition = async (pk: string) =>
    (
      await dynamo.send(
        new QueryCommand({
          TableName: tableName(),
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: { ':pk': pk },
          ConsistentRead: true,
        }),
      )
    ).Items ?? [];

  it('a flight nobody landed stops counting at its timeout: the refused start recounts, corrects the count, is admitted', async () => {
    const tenant = await newTenant('in-flight-heal');
    await tenant.admin.setAutomationQuotas(tenant.clientId, { automationRunsInFlight: 2 });
    let clock = new Date('2031-05-06T07:00:00Z');
    const quotas = automationQuotas({ usage: dynamoAutomationUsage, tenants: dynamoTenantStore, now: () => clock });
    // Two executions of 300 s; their workers die, so neither lands.
    await quotas.admit(tenant.clientId, 'died-1', 1, 300);
    await quotas.admit(tenant.clientId, 'died-2', 1, 300);
    const full = await quotas.admit(tenant.clientId, 'too-soon', 1, 300).catch((error: unknown) => error);
    expect(full).toBeInstanceOf(RateLimited);
    expect(full).toMatchObject({ details: { quota: 'runsInFlight', limit: 2 } });
    expect(await counted(tenant.clientId)).toBe(2);

    // Past their timeout: the counter still says 2, the recount finds none live, and the start goes.
    clock = new Date('2031-05-06T07:05:01Z');
    await quotas.admit(tenant.clientId, 'after', 1, 300);
    expect(await counted(tenant.clientId)).toBe(1);
    // A late landing of an expired flight takes nothing off (the recount did): never below the truth.
    await dynamoAutomationUsage.endFlight(tenant.clientId, 'died-1', clock);
    expect(await counted(tenant.clientId)).toBe(1);
    await quotas.admit(tenant.clientId, 'second', 1, 300);
    await expect(quotas.admit(tenant.clientId, 'third', 1, 300)).rejects.toBeInstanceOf(RateLimited);
    // A live flight that lands is taken off once, however often it lands.
    await dynamoAutomationUsage.endFlight(tenant.clientId, 'after', clock);
    await dynamoAutomationUsage.endFlight(tenant.clientId, 'after', clock);
    expect(await counted(tenant.clientId)).toBe(1);

    // All of it in the client's automation partition, none beside its Client item.
    const automation = await partition(`CLIENT#${tenant.clientId}#AUTOMATION#INFLIGHT`);
    expect(automation.map((item) => item.sk).sort()).toEqual(['RPAFLIGHT#died-2', 'RPAFLIGHT#second', 'RPAINFLIGHT']);
    const client = await partition(`CLIENT#${tenant.clientId}`);
    expect(client.filter((item) => /FLIGHT/.test(String(item.sk)))).toEqual([]);
  });
});
