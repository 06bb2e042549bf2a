import { Webhook } from 'standardwebhooks';
import type { StoredDelivery, StoredWebhook } from '#lib/entities/webhook';
import type { DeliveryContext } from './delivery-context.ts';

/* The Standard Webhooks headers of one attempt, signed by the `standardwebhooks` package. */

const USER_AGENT = 'service-review-webhooks/1';

/** `v1,<base64>` per secret that signs now: the current one, and the previous one during its grace period. */
async function signatureOf(ctx: DeliveryContext, webhook: StoredWebhook, delivery: StoredDelivery, at: Date) {
  const sealed = [webhook.secret];
  if (webhook.previousSecret && webhook.previousSecretExpiresAt && webhook.previousSecretExpiresAt > at.toISOString()) {
    sealed.push(webhook.previousSecret);
  }
  const signatures = [];
  for (const secret of sealed) {
    signatures.push(new Webhook(await ctx.openSecret(webhook, secret)).sign(delivery.eventId, at, delivery.payload));
  }
  return signatures.join(' ');
}

export async function signedHeaders(ctx: DeliveryContext, webhook: StoredWebhook, held: StoredDelivery, at: Date) {
  return {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    'webhook-id': held.eventId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': await signatureOf(ctx, webhook, held, at),
  };
}
