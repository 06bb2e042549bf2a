import { webhookUrlPolicy } from '#lib/config/settings';
import { dynamoWebhookStore } from './dynamo-webhook-store.ts';
import { webhookService } from './webhooks.ts';

/**
 * The webhook subscription service on DynamoDB, built once per cold start: for the functions that
 * read, list, delete, test and redeliver. Create and rotate-secret seal secrets and use
 * service-with-secrets.ts, so that only they bundle the Encryption SDK.
 */
export const webhooks = webhookService({ store: dynamoWebhookStore, policy: webhookUrlPolicy() });
