import { retryOnConflict, VersionConflict } from '#lib/concurrency';
import type { DeliveryRef, DeliveryStatus, StoredDelivery, StoredWebhook } from '#lib/entities/webhook';
import { log } from '#lib/observability/logger';
import { recordWebhookStatus } from '#lib/observability/metrics';
import type { DeliveryContext } from './delivery-context.ts';
import { afterAttempt, endedUnsent, healthAfter, heldForAttempt, isDue } from './delivery-records.ts';
import { signedHeaders } from './delivery-signing.ts';

/* One attempt of one delivery: held, sent (or ended unsent), recorded, and the subscription's health after it. */

export interface AttemptOutcome {
  /** `absent`: no such delivery (expired, or its subscription's partition is gone). */
  status: DeliveryStatus | 'absent';
  /** Whether this call sent it (false: not due, or another process holds it). */
  attempted: boolean;
  /** Pending: when it is due next. A queue consumer makes its message visible again then. */
  nextAttemptAt: string | null;
}

const outcomeOf = (delivery: StoredDelivery | undefined, attempted: boolean): AttemptOutcome => ({
  status: delivery?.status ?? 'absent',
  attempted,
  nextAttemptAt: delivery?.status === 'pending' ? delivery.scheduledAt : null,
});

/** The subscription's health after a delivery ended (retried: a concurrent delivery may update it too). */
function recordHealth(
  ctx: DeliveryContext,
  ref: Pick<StoredWebhook, 'clientId' | 'webhookId'>,
  ended: 'delivered' | 'failed',
) {
  return retryOnConflict(
    async () => {
      const current = await ctx.store.get(ref.clientId, ref.webhookId);
      const next = current && healthAfter(current, ended, ctx.now());
      if (!next) return;
      await ctx.store.update(next);
      // A metric per change (the alarms on failing and disabled subscriptions), and a line to find which.
      recordWebhookStatus(next.status);
      log.info('Webhook subscription status changed', {
        clientId: next.clientId,
        webhookId: next.webhookId,
        status: next.status,
      });
    },
    { attempts: 5 },
  );
}

async function send(ctx: DeliveryContext, webhook: StoredWebhook, held: StoredDelivery): Promise<StoredDelivery> {
  const at = ctx.now();
  const headers = await signedHeaders(ctx, webhook, held, at);
  const result = await ctx.transport(webhook.url, headers, held.payload);
  const attempt = { at: at.toISOString(), ...result };
  log.info('Webhook delivery attempted', {
    clientId: held.clientId,
    webhookId: held.webhookId,
    deliveryId: held.deliveryId,
    eventType: held.eventType,
    attempt: held.attempts + 1,
    responseStatus: result.responseStatus ?? undefined,
    reason: result.error ?? undefined,
    durationMs: result.durationMs,
  });
  return afterAttempt(held, attempt, ctx.now(), ctx.random);
}

/**
 * One attempt of a delivery, if it is due: held first (a conditional write, so two processes never
 * send it at once; one that crashes leaves it due again after ATTEMPT_HOLD_MS), sent, then recorded.
 * `known` is what the caller has just read or written (deliverEvent), so it is not read again.
 */
export async function attemptOf(
  ctx: DeliveryContext,
  ref: DeliveryRef,
  delivery: StoredDelivery | undefined,
  known?: StoredWebhook,
): Promise<AttemptOutcome> {
  if (!delivery || !isDue(delivery, ctx.now())) return outcomeOf(delivery, false);
  const held = heldForAttempt(delivery, ctx.now());
  try {
    await ctx.store.updateDelivery(held);
  } catch (error) {
    if (error instanceof VersionConflict) return outcomeOf(await ctx.store.getDelivery(ref), false);
    throw error;
  }
  const webhook = known ?? (await ctx.store.get(ref.clientId, ref.webhookId));
  let ended: StoredDelivery;
  if (!webhook) ended = endedUnsent(held, 'subscription_deleted', ctx.now());
  else if (webhook.status === 'disabled' && held.trigger === 'event') {
    ended = endedUnsent(held, 'subscription_disabled', ctx.now());
  } else ended = await send(ctx, webhook, held);
  await ctx.store.updateDelivery(ended);
  // Read again and written only when what this attempt knows of the subscription says its health changes.
  if (webhook && ended.status !== 'pending' && healthAfter(webhook, ended.status, ctx.now())) {
    await recordHealth(ctx, webhook, ended.status);
  }
  return outcomeOf(ended, true);
}

export async function attempt(ctx: DeliveryContext, ref: DeliveryRef): Promise<AttemptOutcome> {
  return attemptOf(ctx, ref, await ctx.store.getDelivery(ref));
}
