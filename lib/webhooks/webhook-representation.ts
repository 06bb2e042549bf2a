import type { StoredWebhook } from '#lib/entities/webhook';

/** What clients read of a subscription: never its secret. */
export const webhookRepresentationOf = (webhook: StoredWebhook) => ({
  id: webhook.webhookId,
  url: webhook.url,
  events: webhook.events,
  description: webhook.description,
  status: webhook.status,
  organizationId: webhook.organizationId,
  failingSince: webhook.failingSince,
  secretCreatedAt: webhook.secretCreatedAt,
  previousSecretExpiresAt: webhook.previousSecretExpiresAt,
  createdAt: webhook.createdAt,
  updatedAt: webhook.updatedAt,
});
