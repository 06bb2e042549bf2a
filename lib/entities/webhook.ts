import type { SealedSecret } from '#lib/crypto/envelope';
import type { EventType } from '#lib/entities/service-event';
import type {
  DeliveryAttempt,
  DeliveryStatus,
  DeliveryTrigger,
  StoredDelivery,
  StoredWebhook,
  SubscribableEventType,
  WebhookStatus,
} from '#lib/webhooks/webhook-store';
import { attr, defineEntity } from './define-entity.ts';
import { clientEntity } from './tenancy.ts';

/**
 * A webhook subscription, in its client's partition beside the Client item: a client's subscriptions
 * are one Query (`begins_with WEBHOOK#`, strongly consistent), which is what every event's fan-out reads.
 * Their ids are UUIDv7, so that Query lists them in creation order.
 */
export const webhookEntity = defineEntity<StoredWebhook>()({
  name: 'Webhook',
  keys: { pk: clientEntity.keys.pk.template, sk: 'WEBHOOK#<webhookId>' },
  attributes: {
    clientId: attr.string(),
    webhookId: attr.string(),
    organizationId: attr.nullAsAbsent(attr.string()),
    url: attr.string(),
    events: attr.list<SubscribableEventType>(),
    description: attr.nullAsAbsent(attr.string()),
    status: attr.string<WebhookStatus>(),
    failingSince: attr.nullAsAbsent(attr.string()),
    // The signing secrets arrive sealed and are stored only as their envelopes.
    secret: attr.storedAs('secretEnvelope', attr.map<SealedSecret>()),
    previousSecret: attr.storedAs('previousSecretEnvelope', attr.nullAsAbsent(attr.map<SealedSecret>())),
    previousSecretExpiresAt: attr.nullAsAbsent(attr.string()),
    secretCreatedAt: attr.string(),
    version: attr.number(),
    createdAt: attr.string(),
    updatedAt: attr.string(),
  },
});

/** How many subscriptions a client has: counted in the transaction that creates or deletes one. */
export interface WebhooksUsage {
  clientId: string;
  webhooks: number;
  version: number;
  createdAt: string;
  updatedAt: string;
}

export const webhooksUsageEntity = defineEntity<WebhooksUsage>()({
  name: 'WebhooksUsage',
  keys: { pk: clientEntity.keys.pk.template, sk: 'USAGE#WEBHOOKS' },
  attributes: {
    clientId: attr.string(),
    webhooks: attr.number(),
    version: attr.number(),
    createdAt: attr.string(),
    updatedAt: attr.string(),
  },
});

/**
 * One event's delivery to one subscription, in the subscription's own partition (newest first by its
 * id, the event's UUIDv7). gsi1 by status, then when due: the pending ones are the retry queue the
 * local timer (and a sweep on AWS) reads with one Query, soonest first (docs/webhooks.md).
 */
export const webhookDeliveryEntity = defineEntity<StoredDelivery>()({
  name: 'WebhookDelivery',
  keys: {
    pk: 'CLIENT#<clientId>#WEBHOOK#<webhookId>',
    sk: 'DELIVERY#<deliveryId>',
    gsi1pk: 'WEBHOOKDELIVERIES#<status>',
    gsi1sk: '<scheduledAt>#<clientId>#<webhookId>#<deliveryId>',
  },
  attributes: {
    clientId: attr.string(),
    webhookId: attr.string(),
    deliveryId: attr.string(),
    eventId: attr.string(),
    eventType: attr.string<EventType>(),
    payload: attr.string(),
    trigger: attr.string<DeliveryTrigger>(),
    status: attr.string<DeliveryStatus>(),
    attempts: attr.number(),
    cycleAttempts: attr.number(),
    scheduledAt: attr.string(),
    recentAttempts: attr.list<DeliveryAttempt>(),
    deliveredAt: attr.nullAsAbsent(attr.string()),
    version: attr.number(),
    createdAt: attr.string(),
    updatedAt: attr.string(),
    expiration: attr.number(),
  },
});
