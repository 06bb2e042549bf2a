import { scopeOf } from '#lib/http/api-event';
import { endpoint } from '#lib/http/endpoint';
import { json } from '#lib/http/response';
import { webhooks } from '#lib/webhooks/service';
import { webhookRepresentationOf } from '#lib/webhooks/webhook-representation';

/** GET /api/external/v1.1/Webhooks: the subscriptions the caller's key reaches, oldest first (at most 20). */
export const handler = endpoint(async (event) =>
  json(200, { items: (await webhooks.list(scopeOf(event))).map(webhookRepresentationOf) }),
);
