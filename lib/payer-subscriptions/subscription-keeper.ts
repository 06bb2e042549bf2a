import type { StoredPayerSubscription } from '#lib/entities/payer-subscription';
import { log } from '#lib/observability/logger';
import type { PayerCallResult } from '#lib/payer-api/payer-task-context';
import { tableShards } from '#lib/table-shards';
import type { SubscriptionChanges } from './payer-subscription-store.ts';
import {
  answeredBody,
  callOf,
  isGone,
  type SubscriptionContext,
  type SubscriptionSite,
  siteOf,
} from './subscription-context.ts';
import { createSubscription } from './subscription-creation.ts';
import { keepsChannelHeader, payerSubscriptionOf, reportedStatusOf } from './subscription-resource.ts';
import { endAtFrom, heartbeatIsMissing, NEVER_DUE, nextCheckOf, renewalIsDue } from './subscription-timing.ts';

/*
 * The keeper (a scheduled function; locally a timer): each due subscription of the index, shard by shard,
 * is renewed before its end, asked about with `$status` when its heartbeat is missing, made again when the
 * payer reports it `error` or `off` (or forgot it, or never answered its create), and retired when its
 * connection or its payer's subscriptions are gone. Then it is due again at its next look. A subscription
 * not `active` changes nothing for the re-checks: they go on as they would without one.
 */

type Kept = 'renewed' | 'checked' | 'recreated' | 'waiting' | 'retired' | 'not_due';

/** Due subscriptions read per query, and kept per shard and run at most (the next run takes the rest). */
const PAGE = 25;
const MAX_PER_SHARD = 200;

const update = (ctx: SubscriptionContext, subscription: StoredPayerSubscription, changes: SubscriptionChanges) =>
  ctx.store.update(subscription, changes, ctx.now().toISOString());

/** Looked at again in a period: the payer did not answer, or the connection needs its owner. */
const later = (ctx: SubscriptionContext, subscription: StoredPayerSubscription) => {
  const checkDueAt = new Date(ctx.now().getTime() + subscription.heartbeatPeriodSeconds * 1000).toISOString();
  return update(ctx, subscription, { checkDueAt });
};

/**
 * A new subscription (new id and secret) in its place; the old one, `off` on our side, is deleted at the
 * payer once the new one is made (best effort: a payer that keeps it notifies a subscription we refuse).
 */
const recreate = async (ctx: SubscriptionContext, subscription: StoredPayerSubscription, site: SubscriptionSite) => {
  const { clientId, organizationId, payerConnectionId, payerSubscriptionId } = subscription;
  const created = await createSubscription(ctx, { clientId, organizationId, payerConnectionId }, site, subscription);
  if (created !== 'raced' && payerSubscriptionId !== null) {
    const operation = `Subscription/${payerSubscriptionId}` as const;
    await ctx.call(callOf(clientId, payerConnectionId, site, { operation, method: 'DELETE' }));
  }
  return 'recreated' as const;
};

/** A new end: the payer's copy read and sent back with it (we hold no secret to write the channel again). */
async function renew(ctx: SubscriptionContext, subscription: StoredPayerSubscription, site: SubscriptionSite) {
  const { clientId, payerConnectionId } = subscription;
  const operation = `Subscription/${subscription.payerSubscriptionId}` as const;
  const read = await ctx.call(callOf(clientId, payerConnectionId, site, { operation, method: 'GET' }));
  const current = payerSubscriptionOf(answeredBody(read));
  if (!current) return isGone(read) ? recreate(ctx, subscription, site) : settle(ctx, subscription, read);
  if (current.status === 'error' || current.status === 'off' || !keepsChannelHeader(current.resource)) {
    return recreate(ctx, subscription, site);
  }
  const endAt = endAtFrom(ctx.now());
  const bundle = { ...current.resource, end: endAt } as never;
  const put = await ctx.call(callOf(clientId, payerConnectionId, site, { operation, method: 'PUT', bundle }));
  const renewed = payerSubscriptionOf(answeredBody(put));
  if (!renewed) return isGone(put) ? recreate(ctx, subscription, site) : settle(ctx, subscription, put);
  const next = { ...subscription, endAt, status: renewed.status };
  await update(ctx, subscription, { endAt, status: renewed.status, checkDueAt: nextCheckOf(next, ctx.now()) });
  log.info('Payer subscription renewed', { clientId, payerConnectionId, subscriptionId: subscription.subscriptionId });
  return 'renewed' as const;
}

/** A call that did not answer what we asked: looked at again later (a 4xx too: nothing here can fix it). */
async function settle(ctx: SubscriptionContext, subscription: StoredPayerSubscription, result: PayerCallResult) {
  const { clientId, payerConnectionId, subscriptionId } = subscription;
  const responseStatus = result.kind === 'answer' ? result.status : undefined;
  log.warn('Payer subscription not reached', {
    clientId,
    payerConnectionId,
    subscriptionId,
    outcome: result.kind,
    responseStatus,
  });
  await later(ctx, subscription);
  return 'waiting' as const;
}

/** No heartbeat for twice its period: the payer's `$status` says whether it is down. */
async function askStatus(ctx: SubscriptionContext, subscription: StoredPayerSubscription, site: SubscriptionSite) {
  const { clientId, payerConnectionId } = subscription;
  const operation = `Subscription/${subscription.payerSubscriptionId}/$status` as const;
  const result = await ctx.call(callOf(clientId, payerConnectionId, site, { operation, method: 'GET' }));
  const status = reportedStatusOf(answeredBody(result));
  if (!status) return isGone(result) ? recreate(ctx, subscription, site) : settle(ctx, subscription, result);
  if (status === 'error' || status === 'off') return recreate(ctx, subscription, site);
  await update(ctx, subscription, { status, checkDueAt: nextCheckOf(subscription, ctx.now()) });
  return 'checked' as const;
}

/** Retired: its connection or its payer's subscriptions are gone, or another replaced it. */
const retire = async (ctx: SubscriptionContext, subscription: StoredPayerSubscription) => {
  await update(ctx, subscription, { status: 'off', checkDueAt: NEVER_DUE });
  return 'retired' as const;
};

/** What one due subscription needs, done; the subscription as read (a version that changed writes nothing). */
export async function keepSubscription(ctx: SubscriptionContext, subscription: StoredPayerSubscription): Promise<Kept> {
  const now = ctx.now();
  if (subscription.checkDueAt > now.toISOString()) return 'not_due';
  const { clientId, payerConnectionId } = subscription;
  const current = await ctx.store.currentOf(clientId, payerConnectionId);
  if (current?.subscriptionId !== subscription.subscriptionId) return retire(ctx, subscription);
  const site = await siteOf(ctx, clientId, payerConnectionId);
  if (typeof site === 'string') return retire(ctx, subscription);
  if (site.connection.status !== 'active') {
    await later(ctx, subscription);
    return 'waiting';
  }
  if (subscription.status === 'error' || subscription.status === 'off' || subscription.payerSubscriptionId === null) {
    return recreate(ctx, subscription, site);
  }
  if (renewalIsDue(subscription, now)) return renew(ctx, subscription, site);
  if (heartbeatIsMissing(subscription, now)) return askStatus(ctx, subscription, site);
  await update(ctx, subscription, { checkDueAt: nextCheckOf(subscription, now) });
  return 'waiting';
}

/** Every due subscription, shard by shard; one that fails is logged and left due for the next run. */
export async function keepDueSubscriptions(ctx: SubscriptionContext): Promise<Partial<Record<Kept, number>>> {
  const counts: Partial<Record<Kept, number>> = {};
  for (const shard of tableShards) {
    const seen = new Set<string>();
    while (seen.size < MAX_PER_SHARD) {
      const due = (await ctx.store.due(shard, ctx.now().toISOString(), PAGE)).filter(
        (s) => !seen.has(s.subscriptionId),
      );
      if (due.length === 0) break;
      for (const subscription of due) {
        seen.add(subscription.subscriptionId);
        const kept = await keepSubscription(ctx, subscription).catch((error: Error) => {
          log.error('Payer subscription not kept', {
            subscriptionId: subscription.subscriptionId,
            errorName: error.name,
          });
          return undefined;
        });
        if (kept) counts[kept] = (counts[kept] ?? 0) + 1;
      }
    }
  }
  return counts;
}
