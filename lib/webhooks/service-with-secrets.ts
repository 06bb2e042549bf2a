import { webhookUrlPolicy } from '#lib/config/settings';
import { dynamoWebhookStore } from './dynamo-webhook-store.ts';
import { signingSecretSealer } from './seal-signing-secret.ts';
import { webhookService } from './webhooks.ts';

/** service.ts plus the configured secrets keyring: for create and rotate-secret, which seal new signing secrets. */
export const webhooksWithSecrets = webhookService({
  store: dynamoWebhookStore,
  policy: webhookUrlPolicy(),
  sealer: signingSecretSealer(),
});
