import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamo } from '#lib/aws/dynamodb';
import { tableName } from '#lib/config/resources';
import { recheckEntity } from '#lib/entities/recheck';
import { dynamoPayerSubscriptionStore as subscriptions } from '#lib/payer-subscriptions/dynamo-payer-subscription-store';
import { dynamoRunStore } from '#lib/runs/dynamo-run-store';
import { SANDBOX_MEMBERS } from '#local/sandbox-portal/seed';
import {
  claimsOf,
  createPasRequest,
  decideAtPayer,
  type OwnPayer,
  ownPayerAndTenant,
  type PayerApiTenant,
  submit,
  subscribeToChanges,
} from '#test/support/payer-api';
import { getRequest, locationOf, settledRun } from './rpa-end-to-end-support.ts';
import { startReceiver } from './webhook-receiver-support.ts';

/*
 * A payer's push, end to end (docs/payer-api.md, "Subscriptions" and "Notifications"): a pended PAS answer
 * subscribes the connection at this file's own local payer, whose handshake reaches our public notification
 * route over HTTP; the payer's operator decides the claim; the payer's event notification reaches the route,
 * which starts a `$inquire` through the connection; that read changes the authorization, and the client's
 * webhook receiver hears of it. No re-check runs: the request's re-check is still an hour and more away.
 */
let payer: OwnPayer;
let tenant: PayerApiTenant;
const PAYER_ID = 'PTEST-PUSHED';
const PENDED_MEMBER = SANDBOX_MEMBERS[2]!.memberId;

beforeAll(async () => {
  ({ payer, tenant } = await ownPayerAndTenant('pas-pushed', PAYER_ID, { flags: { subscriptions: 'rest-hook' } }));
});
afterAll(() => payer?.close());

const until = async <T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs: number): Promise<T> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
};

const recheckDueAtOf = async (externalId: string) => {
  const { Item } = await dynamo.send(
    new GetCommand({ TableName: tableName(), Key: recheckEntity.key({ clientId: tenant.clientId, externalId }) }),
  );
  return Item ? recheckEntity.fromItem(Item).dueAt : undefined;
};

describe("a payer's notification of a decided claim", () => {
  it('reaches the client’s webhook through a $inquire it starts, without waiting for a re-check', async () => {
    const receiver = await startReceiver();
    const { unsubscribe } = await subscribeToChanges(tenant, receiver.url);
    try {
      const externalId = await createPasRequest(tenant, PENDED_MEMBER);
      const res = await submit(tenant, externalId);
      expect(res.status, res.text).toBe(202);
      const run = await settledRun(tenant, locationOf(res));
      expect(run.outcome).toBe('submitted');
      const [toPending] = await receiver.waitFor(1, 30_000);
      expect(JSON.parse(toPending!.body).data.current.status).toBe('pending');

      // The pended answer subscribed the connection; the payer's handshake reached our route.
      const subscribed = await until(
        () => subscriptions.currentOf(tenant.clientId, tenant.connection.externalId),
        (current) => current?.status === 'active' && current.payerSubscriptionId !== null,
        15_000,
      );
      expect(subscribed).toMatchObject({ status: 'active', lastEventNumber: 0 });
      expect(payer.subscriptions().find((found) => found.id === subscribed!.payerSubscriptionId)).toMatchObject({
        status: 'active',
        endpoint: expect.stringContaining(`/api/external/v1.1/Payers/notifications/${subscribed!.subscriptionId}`),
      });
      const recheckDueAt = await recheckDueAtOf(externalId);
      expect(Date.parse(recheckDueAt!) - Date.now()).toBeGreaterThan(10 * 60_000);

      const record = await dynamoRunStore.getRun({ clientId: tenant.clientId, externalId, runId: run.runId });
      const [claim] = await claimsOf(payer, record!.submission!.bundleIdentifier);
      await decideAtPayer(payer, { claimId: claim!.claimId, status: 'approved', number: `PTEST-PUSH-${Date.now()}` });

      const [, toApproved] = await receiver.waitFor(2, 60_000);
      const event = JSON.parse(toApproved!.body);
      expect(event).toMatchObject({
        type: 'authorization.status_changed',
        data: { requestExternalId: externalId, previous: { status: 'pending' }, current: { status: 'approved' } },
      });
      // Read by a status check the notification started, through the subscription's connection.
      const runs = await dynamoRunStore.latestRuns(tenant.clientId, externalId, 10);
      const check = runs.find((found) => found.runId === event.data.runId);
      expect(check).toMatchObject({
        kind: 'check-auth-status',
        channel: 'pas',
        payerConnectionId: tenant.connection.externalId,
        outcome: 'status_read',
      });
      expect((await subscriptions.get(subscribed!.subscriptionId))?.lastEventNumber).toBe(1);
      expect((await getRequest(tenant, externalId)).authorization.status).toBe('approved');
      // No re-check ran: the schedule was never due (the decision's own transaction ended it).
      expect(await recheckDueAtOf(externalId)).toBeUndefined();
    } finally {
      await unsubscribe();
      await receiver.close();
    }
  }, 120_000);
});
