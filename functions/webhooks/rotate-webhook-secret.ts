import { scopeOf } from '#lib/http/api-event';
import { endpoint } from '#lib/http/endpoint';
import { uuidPathId } from '#lib/http/path';
import { json } from '#lib/http/response';
import { webhooksWithSecrets } from '#lib/webhooks/service-with-secrets';
import { webhookRepresentationOf } from '#lib/webhooks/webhook-representation';

/**
 * POST /api/external/v1.1/Webhooks/{webhookId}/rotate-secret: a new signing secret, shown here only.
 * The one it replaces keeps signing beside it for 24 hours (previousSecretExpiresAt).
 */
export const handler = endpoint(async (event) => {
  const { webhook, secret } = await webhooksWithSecrets.rotateSecret(scopeOf(event), uuidPathId(event, 'webhookId'));
  return json(200, { ...webhookRepresentationOf(webhook), secret });
});
