import { scopeOf } from '#lib/http/api-event';
import { endpoint } from '#lib/http/endpoint';
import { resourceUrl } from '#lib/http/resource-url';
import { json } from '#lib/http/response';
import { webhookSubscriptionValidator } from '#lib/validation/generated/per-schema/webhook-subscription';
import { webhooksWithSecrets } from '#lib/webhooks/service-with-secrets';
import { webhookRepresentationOf } from '#lib/webhooks/webhook-representation';
import type { WebhookInput } from '#lib/webhooks/webhook-subscriptions';

/**
 * POST /api/external/v1.1/Webhooks: subscribes a URL to event types. 201 + Location, with the signing
 * secret (`whsec_…`), shown here only. Not idempotent by Idempotency-Key on purpose: a replay would
 * need the secret kept in clear beside the stored response (docs/webhooks.md).
 */
export const handler = endpoint<WebhookInput>(
  async (event) => {
    const { webhook, secret } = await webhooksWithSecrets.create(scopeOf(event), event.body);
    return json(
      201,
      { ...webhookRepresentationOf(webhook), secret },
      { Location: resourceUrl(event, 'webhooks/get-webhook', { webhookId: webhook.webhookId }) },
    );
  },
  { json: { validator: webhookSubscriptionValidator } },
);
