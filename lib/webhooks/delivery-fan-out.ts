import type { ServiceEvent } from '#lib/entities/service-event';
import type { DeliveryRef, StoredDelivery, StoredWebhook } from '#lib/entities/webhook';
import type { DeliveryContext } from './delivery-context.ts';
import { newDelivery } from './delivery-records.ts';

/* An event's fan-out: the client's subscriptions that receive it, one recorded delivery each. */

/**
 * Whether `webhook` receives `event`: its own test, or a type it lists of an organization it may see,
 * that happened since it was created (a replayed event never reaches a subscription made after it).
 */
const receives = (webhook: StoredWebhook, event: ServiceEvent): boolean => {
  if (event.type === 'webhook.test') {
    return (event as ServiceEvent<'webhook.test'>).data.webhookId === webhook.webhookId;
  }
  if (webhook.status === 'disabled' || !(webhook.events as string[]).includes(event.type)) return false;
  if (event.occurredAt < webhook.createdAt) return false;
  return (
    webhook.organizationId === null ||
    event.organizationId === undefined ||
    event.organizationId === webhook.organizationId
  );
};

export const refOf = ({ clientId, webhookId, deliveryId }: DeliveryRef): DeliveryRef => ({
  clientId,
  webhookId,
  deliveryId,
});

/** Records one delivery per receiving subscription (an event handed over again records none twice). */
export async function recordDeliveries(ctx: DeliveryContext, event: ServiceEvent) {
  const webhooks = (await ctx.store.list(event.clientId)).filter((webhook) => receives(webhook, event));
  const at = ctx.now();
  const recorded: Array<{ delivery: StoredDelivery; webhook: StoredWebhook }> = [];
  for (const webhook of webhooks) {
    const delivery = newDelivery(event, webhook, 'event', at);
    if (await ctx.store.createDelivery(delivery)) recorded.push({ delivery, webhook });
  }
  return recorded;
}
