import { randomUUID } from 'node:crypto';
import type { Subscription } from '@medplum/fhirtypes';
import type { PayerSubscriptionStatus, StoredPayerSubscription } from '#lib/entities/payer-subscription';
import { log } from '#lib/observability/logger';
import { shardOf } from '#lib/table-shards';
import { newChannelSecret } from './notification-secret.ts';
import {
  answeredBody,
  callOf,
  type SubscriptionContext,
  type SubscriptionSite,
  siteOf,
} from './subscription-context.ts';
import { notificationUrlOf, payerSubscriptionOf, subscriptionResourceOf } from './subscription-resource.ts';
import { endAtFrom, NEVER_DUE, retryAtOf } from './subscription-timing.ts';

/*
 * A connection's subscription made: our items first (status `requested`, the secret's hash), so that one
 * concurrent maker wins by the connection's pointer, then the POST to the payer, whose id is recorded when
 * it answers. A create not answered or refused leaves the subscription `error`, due for the keeper, which
 * makes another (a new id and secret). The secret leaves this module only in the POST.
 */

export type Created = 'created' | 'raced' | 'not_answered';

/** How many times the payer's id is written on a subscription its handshake changes meanwhile. */
const RECORD_ATTEMPTS = 3;

/** The payer's id and status on the subscription as it is now (a handshake may have made it `active`). */
async function recordPayerId(
  ctx: SubscriptionContext,
  subscriptionId: string,
  id: string,
  status: PayerSubscriptionStatus,
) {
  for (let attempt = 0; attempt < RECORD_ATTEMPTS; attempt++) {
    const current = await ctx.store.get(subscriptionId);
    if (!current) return;
    const kept = current.status === 'requested' ? status : current.status;
    const at = ctx.now().toISOString();
    if (await ctx.store.update(current, { payerSubscriptionId: id, status: kept }, at)) return;
  }
}

/** Records a create the payer did not take: `error`, looked at again by the keeper. */
async function recordNotTaken(ctx: SubscriptionContext, subscription: StoredPayerSubscription) {
  const now = ctx.now();
  const current = await ctx.store.get(subscription.subscriptionId);
  if (!current || current.payerSubscriptionId !== null) return;
  const checkDueAt = retryAtOf(now, subscription.heartbeatPeriodSeconds);
  await ctx.store.update(current, { status: 'error', checkDueAt }, now.toISOString());
}

/**
 * Makes the connection's subscription, replacing `replacing` (its current one, which ends `off`), if the
 * connection's current one is still that when written: else another writer made it (`raced`).
 */
export async function createSubscription(
  ctx: SubscriptionContext,
  owner: { clientId: string; organizationId: string; payerConnectionId: string },
  site: SubscriptionSite,
  replacing?: StoredPayerSubscription,
): Promise<Created> {
  const now = ctx.now();
  const at = now.toISOString();
  const subscriptionId = randomUUID();
  const { secret, secretHash } = newChannelSecret();
  const subscription: StoredPayerSubscription = {
    subscriptionId,
    ...owner,
    payerId: site.connection.payerId,
    payerSubscriptionId: null,
    secretHash,
    status: 'requested',
    endAt: endAtFrom(now),
    heartbeatPeriodSeconds: ctx.heartbeatPeriodSeconds,
    lastEventNumber: 0,
    lastNotifiedAt: null,
    shard: shardOf(subscriptionId),
    checkDueAt: retryAtOf(now, ctx.heartbeatPeriodSeconds),
    version: 1,
    createdAt: at,
    updatedAt: at,
  };
  if (!(await ctx.store.create(subscription, replacing && { ...replacing, checkDueAt: NEVER_DUE }))) return 'raced';
  const resource: Subscription = subscriptionResourceOf({
    notificationUrl: notificationUrlOf(site.publicApiBaseUrl, subscriptionId),
    secret,
    orgIdentifier: site.connection.payerClientId,
    endAt: subscription.endAt,
    heartbeatPeriodSeconds: subscription.heartbeatPeriodSeconds,
  });
  const { clientId, payerConnectionId } = owner;
  const request = { operation: 'Subscription' as const, method: 'POST' as const, bundle: resource };
  const result = await ctx.call(callOf(clientId, payerConnectionId, site, request));
  const answered = payerSubscriptionOf(answeredBody(result));
  const ids = { clientId, payerConnectionId, subscriptionId };
  if (!answered) {
    const responseStatus = result.kind === 'answer' ? result.status : undefined;
    log.warn('Payer subscription not taken', { ...ids, outcome: result.kind, responseStatus });
    await recordNotTaken(ctx, subscription);
    return 'not_answered';
  }
  await recordPayerId(ctx, subscriptionId, answered.id, answered.status);
  log.info('Payer subscription created', { ...ids, status: answered.status });
  return 'created';
}

/**
 * After a pended answer read through the connection: its subscription, unless it has one that is not
 * `off` (one `requested` or `active` is live; one in `error` is the keeper's to make again).
 */
export async function subscribeConnection(
  ctx: SubscriptionContext,
  owner: { clientId: string; organizationId: string; payerConnectionId: string },
): Promise<Created | 'not_subscribed' | 'subscribed'> {
  // The pointer first: every pended read of a subscribed connection ends here, after two reads.
  const current = await ctx.store.currentOf(owner.clientId, owner.payerConnectionId);
  if (current && current.status !== 'off') return 'subscribed';
  const site = await siteOf(ctx, owner.clientId, owner.payerConnectionId);
  if (typeof site === 'string' || site.connection.status !== 'active') return 'not_subscribed';
  return createSubscription(ctx, owner, site, current);
}
