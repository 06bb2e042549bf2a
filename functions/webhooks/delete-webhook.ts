import { scopeOf } from '#lib/http/api-event';
import { endpoint } from '#lib/http/endpoint';
import { uuidPathId } from '#lib/http/path';
import { noContent } from '#lib/http/response';
import { webhooks } from '#lib/webhooks/service';

/** DELETE /api/external/v1.1/Webhooks/{webhookId}: 204; its pending deliveries end `subscription_deleted`. */
export const handler = endpoint(async (event) => {
  await webhooks.remove(scopeOf(event), uuidPathId(event, 'webhookId'));
  return noContent();
});
