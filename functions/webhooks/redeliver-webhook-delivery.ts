import { scopeOf } from '#lib/http/api-event';
import { endpoint } from '#lib/http/endpoint';
import { uuidPathId } from '#lib/http/path';
import { json } from '#lib/http/response';
import { deliveryRepresentationOf } from '#lib/webhooks/delivery-records';
import { webhooks } from '#lib/webhooks/service';

/**
 * POST /api/external/v1.1/Webhooks/{webhookId}/deliveries/{deliveryId}/redeliver: 202, the delivery
 * is due again now with a fresh retry schedule and the same webhook-id; 409 while it is still pending.
 */
export const handler = endpoint(async (event) => {
  const delivery = await webhooks.redeliver(
    scopeOf(event),
    uuidPathId(event, 'webhookId'),
    uuidPathId(event, 'deliveryId'),
  );
  return json(202, deliveryRepresentationOf(delivery));
});
