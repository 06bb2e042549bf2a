import { createHash, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredPayerSubscription } from '#lib/entities/payer-subscription';
import { requestPayerToken } from '#lib/payer-api/lambda-token-source';
import { postFhirOperation } from '#lib/payer-api/pas-transport';
import { payerGateway } from '#lib/payer-api/payer-gateway';
import { dynamoPayerSubscriptionStore as store } from '#lib/payer-subscriptions/dynamo-payer-subscription-store';
import type { SubscriptionContext } from '#lib/payer-subscriptions/subscription-context';
import { subscribeConnection } from '#lib/payer-subscriptions/subscription-creation';
import { keepDueSubscriptions, keepSubscription } from '#lib/payer-subscriptions/subscription-keeper';
import { dynamoSubscriptionContext } from '#lib/payer-subscriptions/subscription-service';
import { lambdaContext } from '#local/gateway/invoke';
import { enableInvocationContexts, ownInvocation } from '#local/invocations';
import { SANDBOX_MEMBERS } from '#local/sandbox-portal/seed';
import { enforceTableGrants } from '#local/table-grants';
import { baseUrl } from '#test/support/api';
import {
  createPasRequest,
  ownPayer,
  type PayerApiTenant,
  payerApiTenant,
  setPayerEndpoint,
  submit,
} from '#test/support/payer-api';
import { notificationReceiver } from './pas-payer-subscriptions-support.ts';
import { locationOf, settledRun } from './rpa-end-to-end-support.ts';

/*
 * Our side of PAS subscriptions (docs/payer-api.md, "Subscriptions") against this file's own local PAS payer,
 * over HTTP with real client assertions and tokens from the stack's token function: a pended answer
 * subscribes its connection once; the keeper asks `$status` when heartbeats are missing, makes the
 * subscription again when the payer reports it errored, and renews it before its end. Where the payer must
 * reach us (its handshake), a real HTTP receiver on loopback stands in for our notification route.
 */
let payer: Awaited<ReturnType<typeof ownPayer>>;
let receiver: Awaited<ReturnType<typeof notificationReceiver>>;
const PAYER_ID = 'PTEST-SUBSCRIPTIONS';
const UNSUBSCRIBED_PAYER_ID = 'PTEST-NO-SUBSCRIPTIONS';
const PENDED_MEMBER = SANDBOX_MEMBERS[2]!.memberId;
const MINUTE = 60_000;

beforeAll(async () => {
  // First: before any AWS SDK request of this process.
  await enableInvocationContexts();
  enforceTableGrants();
  payer = await ownPayer();
  receiver = await notificationReceiver();
  await setPayerEndpoint(PAYER_ID, payer, { subscriptions: 'rest-hook' });
  await setPayerEndpoint(UNSUBSCRIBED_PAYER_ID, payer);
});
afterAll(async () => {
  await receiver?.close();
  await payer?.close();
});

const atPayer = (subscription: StoredPayerSubscription | undefined) =>
  payer.subscriptions().filter((found) => found.id === subscription?.payerSubscriptionId);

const pended = async (tenant: PayerApiTenant) => {
  const externalId = await createPasRequest(tenant, PENDED_MEMBER);
  const res = await submit(tenant, externalId);
  expect(res.status, res.text).toBe(202);
  expect((await settledRun(tenant, locationOf(res))).outcome).toBe('submitted');
};

/** The connection's current subscription once the payer's id is on it (made after the run ended). */
const subscribedOf = async (tenant: PayerApiTenant, timeoutMs = 8000) => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const current = await store.currentOf(tenant.clientId, tenant.connection.externalId);
    if (current?.payerSubscriptionId) return current;
    if (Date.now() > deadline) return current;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
};

describe('a pended answer subscribes its connection', () => {
  it('once per connection, to our notification route, whatever the number of pended answers', async () => {
    const tenant = await payerApiTenant('pas-subscribed', { payer, payerId: PAYER_ID });
    await pended(tenant);
    const subscription = await subscribedOf(tenant);
    expect(subscription).toMatchObject({
      clientId: tenant.clientId,
      payerConnectionId: tenant.connection.externalId,
      payerId: PAYER_ID,
      heartbeatPeriodSeconds: 300,
      lastEventNumber: 0,
      secretHash: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    const notificationUrl = `${baseUrl}/api/external/v1.1/Payers/notifications/${subscription!.subscriptionId}`;
    expect(atPayer(subscription).map((found) => found.endpoint)).toEqual([notificationUrl]);
    expect(Date.parse(subscription!.endAt) - Date.parse(subscription!.createdAt)).toBe(7 * 24 * 60 * MINUTE);

    await pended(tenant);
    expect((await store.currentOf(tenant.clientId, tenant.connection.externalId))?.subscriptionId).toBe(
      subscription!.subscriptionId,
    );
    const ours = payer.subscriptions().filter((found) => found.endpoint.includes('/Payers/notifications/'));
    expect(ours.filter((found) => found.endpoint === notificationUrl)).toHaveLength(1);
  });

  it('not when the payer’s endpoint takes no subscriptions', async () => {
    const tenant = await payerApiTenant('pas-unsubscribed', { payer, payerId: UNSUBSCRIBED_PAYER_ID });
    const before = payer.subscriptions().length;
    await pended(tenant);
    expect(await subscribedOf(tenant, 1000)).toBeUndefined();
    expect(payer.subscriptions()).toHaveLength(before);
  });
});

describe('the keeper', () => {
  let tenant: PayerApiTenant;
  let ctx: SubscriptionContext;
  let clock: Date;
  beforeAll(async () => {
    tenant = await payerApiTenant('pas-kept', { payer, payerId: PAYER_ID });
    // Our notification route stood in by a receiver that answers 200: the payer's handshake makes it active.
    const base = dynamoSubscriptionContext(payerGateway({ token: requestPayerToken, post: postFhirOperation }));
    const context = { ...base, publicApiBaseUrl: () => receiver.url(''), now: () => clock };
    // Every table call as the keeper function's, held to its grants (LOCAL_TABLE_GRANTS=enforce).
    const asKeeper = <T>(work: () => Promise<T>) =>
      ownInvocation(work, 'payers/keep-payer-subscriptions')({}, lambdaContext('KeepPayerSubscriptions')) as Promise<T>;
    const keptStore = Object.fromEntries(
      Object.entries(store).map(([name, method]) => [name, (...args: never[]) => asKeeper(() => method(...args))]),
    ) as unknown as typeof store;
    ctx = {
      ...context,
      store: keptStore,
      connectionOf: (...args) => asKeeper(() => context.connectionOf(...args)),
      endpointOf: (...args) => asKeeper(() => context.endpointOf(...args)),
    };
  });
  const owner = () => ({
    clientId: tenant.clientId,
    organizationId: tenant.organizationId,
    payerConnectionId: tenant.connection.externalId,
  });
  const current = () => store.currentOf(tenant.clientId, tenant.connection.externalId);
  const statusAtPayer = async (subscription: StoredPayerSubscription | undefined) => {
    for (let tries = 0; tries < 80 && atPayer(subscription)[0]?.status === 'requested'; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return atPayer(subscription)[0]?.status;
  };

  it('makes one whose secret the payer sends back, and asks $status when a heartbeat is missing', async () => {
    clock = new Date();
    expect(await subscribeConnection(ctx, owner())).toBe('created');
    const made = (await current())!;
    expect(await statusAtPayer(made)).toBe('active');
    const [handshake] = await receiver.waitFor(
      `/api/external/v1.1/Payers/notifications/${made.subscriptionId}`,
      1,
      'handshake',
    );
    const secret = /^Bearer (.+)$/.exec(String(handshake!.headers.authorization))![1]!;
    expect(createHash('sha256').update(secret).digest('hex')).toBe(made.secretHash);
    expect(await subscribeConnection(ctx, owner())).toBe('subscribed');

    // Not due yet: nothing is asked.
    expect(await keepSubscription(ctx, made)).toBe('not_due');
    // A heartbeat heard: no call, the next look moves on.
    clock = new Date(Date.parse(made.createdAt) + 11 * MINUTE);
    await store.recordNotification(made.subscriptionId, {
      at: new Date(clock.getTime() - MINUTE).toISOString(),
      status: 'active',
    });
    expect(await keepSubscription(ctx, (await store.get(made.subscriptionId))!)).toBe('waiting');
    const heard = (await store.get(made.subscriptionId))!;
    expect(heard.checkDueAt > clock.toISOString()).toBe(true);
    // No heartbeat for twice its period: $status, which says active.
    clock = new Date(Date.parse(made.createdAt) + 30 * MINUTE);
    expect(await keepSubscription(ctx, heard)).toBe('checked');
    expect(await store.get(made.subscriptionId)).toMatchObject({ status: 'active', version: heard.version + 1 });
    expect((await current())!.subscriptionId).toBe(made.subscriptionId);
  });

  it('makes it again (new id and secret) when the payer reports it errored, and ends the old one', async () => {
    const old = (await current())!;
    payer.setSubscriptionStatus(old.payerSubscriptionId!, 'error');
    clock = new Date(Date.parse(old.checkDueAt) + 31 * MINUTE);
    expect(await keepSubscription(ctx, old)).toBe('recreated');
    const made = (await current())!;
    expect(made.subscriptionId).not.toBe(old.subscriptionId);
    expect(made.secretHash).not.toBe(old.secretHash);
    expect(await statusAtPayer(made)).toBe('active');
    expect(await store.get(old.subscriptionId)).toMatchObject({
      status: 'off',
      checkDueAt: '9999-12-31T23:59:59.999Z',
    });
    // Deleted at the payer: it notifies the new one only.
    expect(atPayer(old)).toEqual([]);
  });

  it('renews it before its end: the payer hides the channel header on read, so a new one takes its place', async () => {
    const old = (await current())!;
    clock = new Date(Date.parse(old.endAt) - 12 * 60 * MINUTE);
    expect(await keepSubscription(ctx, old)).toBe('recreated');
    const made = (await current())!;
    expect(made.endAt).toBe(new Date(clock.getTime() + 7 * 24 * 60 * MINUTE).toISOString());
    expect(await statusAtPayer(made)).toBe('active');
    expect(atPayer(old)).toEqual([]);
  });

  it('renews by PUT a payer that shows the channel header on read: same subscription, a new end', async () => {
    const old = (await current())!;
    // A payer that shows headers on read: its copy as the local payer answers it, with the header shown.
    const showing: typeof ctx.call = async (call) => {
      const result = await ctx.call(call);
      if (call.method !== 'GET' || result.kind !== 'answer' || call.operation.endsWith('$status')) return result;
      const body = result.body as { channel: Record<string, unknown> };
      return { ...result, body: { ...body, channel: { ...body.channel, header: ['Authorization: Bearer shown'] } } };
    };
    clock = new Date(Date.parse(old.endAt) - 12 * 60 * MINUTE);
    expect(await keepSubscription({ ...ctx, call: showing }, old)).toBe('renewed');
    const renewed = (await current())!;
    expect(renewed).toMatchObject({ subscriptionId: old.subscriptionId, version: old.version + 1 });
    expect(renewed.endAt).toBe(new Date(clock.getTime() + 7 * 24 * 60 * MINUTE).toISOString());
    expect(atPayer(renewed)).toHaveLength(1);
  });

  it('retires one whose connection is gone: never due again, nothing asked of the payer', async () => {
    const live = (await current())!;
    const subscriptionId = randomUUID();
    const orphan = { ...live, subscriptionId, payerConnectionId: `gone-${subscriptionId}`, version: 1 };
    expect(await store.create({ ...orphan, checkDueAt: clock.toISOString() })).toBe(true);
    const before = payer.subscriptions().length;
    expect(await keepSubscription(ctx, (await store.get(subscriptionId))!)).toBe('retired');
    expect(await store.get(subscriptionId)).toMatchObject({ status: 'off', checkDueAt: '9999-12-31T23:59:59.999Z' });
    expect(payer.subscriptions()).toHaveLength(before);
  });

  it('takes the due ones from the index, shard by shard, and moves each one on', async () => {
    const other = await payerApiTenant('pas-kept-due', { payer, payerId: PAYER_ID });
    const ids = { clientId: other.clientId, payerConnectionId: other.connection.externalId };
    // Made an hour ago: due now, its heartbeat missing.
    clock = new Date(Date.now() - 60 * MINUTE);
    expect(await subscribeConnection(ctx, { ...ids, organizationId: other.organizationId })).toBe('created');
    const made = (await store.currentOf(ids.clientId, ids.payerConnectionId))!;
    clock = new Date();
    expect(made.checkDueAt < clock.toISOString()).toBe(true);
    // The index as it is, other files' subscriptions left to them.
    const ownDue: typeof store.due = async (...args) =>
      (await ctx.store.due(...args)).filter((due) => due.clientId === ids.clientId);
    expect(await keepDueSubscriptions({ ...ctx, store: { ...ctx.store, due: ownDue } })).toEqual({ checked: 1 });
    const kept = (await store.get(made.subscriptionId))!;
    expect(kept).toMatchObject({ status: 'active', version: made.version + 1 });
    expect(kept.checkDueAt > clock.toISOString()).toBe(true);
    expect(await keepDueSubscriptions({ ...ctx, store: { ...ctx.store, due: ownDue } })).toEqual({});
  });
});
