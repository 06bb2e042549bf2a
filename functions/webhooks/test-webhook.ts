import { scopeOf } from '#lib/http/api-event';
import { endpoint } from '#lib/http/endpoint';
import { uuidPathId } from '#lib/http/path';
import { json } from '#lib/http/response';
import { deliveryRepresentationOf } from '#lib/webhooks/delivery-records';
import { webhooks } from '#lib/webhooks/service';

/** POST /api/external/v1.1/Webhooks/{webhookId}/test: 202, a `webhook.test` event on its way to this subscription. */
export const handler = endpoint(async (event) =>
  json(202, deliveryRepresentationOf(await webhooks.sendTest(scopeOf(event), uuidPathId(event, 'webhookId')))),
);
