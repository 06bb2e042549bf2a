import { scopeOf } from '#lib/http/api-event';
import { endpoint } from '#lib/http/endpoint';
import { uuidPathId } from '#lib/http/path';
import { json } from '#lib/http/response';
import { webhooks } from '#lib/webhooks/service';
import { webhookRepresentationOf } from '#lib/webhooks/webhook-representation';

/** GET /api/external/v1.1/Webhooks/{webhookId}: one subscription, without its secret. */
export const handler = endpoint(async (event) =>
  json(200, webhookRepresentationOf(await webhooks.get(scopeOf(event), uuidPathId(event, 'webhookId')))),
);
