import { VersionConflict } from '#lib/concurrency';
import type { StoredDelivery } from '#lib/entities/webhook';
import { Conflict, NotFound } from '#lib/errors';
import { newEvent } from '#lib/events/events';
import { log } from '#lib/observability/logger';
import type { Scope } from '#lib/tenancy/scope';
import { newDelivery, redelivered } from './delivery-records.ts';
import { load, type WebhookContext } from './webhook-context.ts';

/*
 * A subscription's deliveries as its client sees them: paged, read, a test sent, one sent again. A test
 * and a redelivery are recorded as due now; the delivery itself is the worker's (delivery.ts).
 */

const DEFAULT_DELIVERIES_PAGE = 25;

export interface DeliveriesPageRequest {
  pageSize?: number;
  cursor?: string;
}

export async function getDelivery(
  ctx: WebhookContext,
  scope: Scope,
  webhookId: string,
  deliveryId: string,
): Promise<StoredDelivery> {
  await load(ctx, scope, webhookId);
  const delivery = await ctx.store.getDelivery({ clientId: scope.clientId, webhookId, deliveryId });
  if (!delivery) throw new NotFound(`Delivery ${deliveryId}`);
  return delivery;
}

/** A `webhook.test` event for this subscription alone, recorded as due now (a disabled one included). */
export async function sendTest(ctx: WebhookContext, scope: Scope, webhookId: string): Promise<StoredDelivery> {
  const webhook = await load(ctx, scope, webhookId);
  const at = ctx.now();
  const event = newEvent(
    'webhook.test',
    webhook.clientId,
    at.toISOString(),
    { webhookId },
    webhook.organizationId ?? undefined,
  );
  const delivery = newDelivery(event, webhook, 'test', at);
  await ctx.store.createDelivery(delivery);
  return delivery;
}

export async function deliveries(ctx: WebhookContext, scope: Scope, webhookId: string, request: DeliveriesPageRequest) {
  await load(ctx, scope, webhookId);
  const limit = request.pageSize ?? DEFAULT_DELIVERIES_PAGE;
  const page = await ctx.store.listDeliveries(scope.clientId, webhookId, {
    limit,
    ...(request.cursor ? { before: request.cursor } : {}),
  });
  return { items: page.items, pageSize: limit, nextCursor: page.next };
}

/** A delivered or failed delivery goes out again, due now; a pending one is already going (409). */
export async function redeliver(
  ctx: WebhookContext,
  scope: Scope,
  webhookId: string,
  deliveryId: string,
): Promise<StoredDelivery> {
  const delivery = await getDelivery(ctx, scope, webhookId, deliveryId);
  if (delivery.status === 'pending') {
    throw new Conflict('The delivery is pending already: its next attempt is scheduled.', {
      reason: 'delivery_pending',
    });
  }
  const next = redelivered(delivery, ctx.now());
  try {
    await ctx.store.updateDelivery(next);
  } catch (error) {
    if (error instanceof VersionConflict) throw new Conflict('The delivery changed meanwhile; retry.');
    throw error;
  }
  log.info('Webhook delivery scheduled again', { clientId: scope.clientId, webhookId, deliveryId });
  return next;
}
