import { scopeOf } from '#lib/http/api-event';
import { endpoint } from '#lib/http/endpoint';
import { uuidPathId } from '#lib/http/path';
import { json } from '#lib/http/response';
import { webhookDeliveryListQueryValidator } from '#lib/validation/generated/per-schema/webhook-delivery-list-query';
import { assertValid } from '#lib/validation/validator';
import { deliveryRepresentationOf } from '#lib/webhooks/delivery-records';
import { webhooks } from '#lib/webhooks/service';
import type { DeliveriesPageRequest } from '#lib/webhooks/subscription-deliveries';

/** A number written in decimal; anything else stays a string, for the schema to refuse by its type. */
const DECIMAL = /^-?[0-9]+(\.[0-9]+)?$/;

/** ?pageSize=&cursor= checked against WebhookDeliveryListQuery (a bad value: the Validation result). */
const pageRequestOf = (query: Record<string, string | undefined> | null): DeliveriesPageRequest => {
  const { pageSize, cursor } = query ?? {};
  const request = {
    ...(pageSize !== undefined ? { pageSize: DECIMAL.test(pageSize) ? Number(pageSize) : pageSize } : {}),
    ...(cursor ? { cursor: cursor.toLowerCase() } : {}),
  };
  assertValid(webhookDeliveryListQueryValidator, request);
  return request as DeliveriesPageRequest;
};

/** GET /api/external/v1.1/Webhooks/{webhookId}/deliveries: its deliveries, newest first, with their recent attempts. */
export const handler = endpoint(async (event) => {
  const page = await webhooks.deliveries(
    scopeOf(event),
    uuidPathId(event, 'webhookId'),
    pageRequestOf(event.queryStringParameters),
  );
  return json(200, { ...page, items: page.items.map(deliveryRepresentationOf) });
});
