import type { SealedSecret } from '#lib/crypto/sealed-secret';
import { shardOf, tableShards } from '#lib/table-shards';
import { attr, defineEntity } from './define-entity.ts';
import { EVENT_TYPES, type EventType } from './service-event.ts';
import { clientEntity } from './tenancy.ts';

/** Webhook subscriptions and their deliveries, as stored (docs/webhooks.md, docs/data-model.md; the port: lib/webhooks/webhook-store.ts). */
export const WEBHOOK_STATUSES = ['active', 'failing', 'disabled'] as const;

/**
 * `active`; `failing`: a delivery used up its retries since the last success (still delivered to);
 * `disabled`: failing for DISABLE_AFTER_FAILING_MS, receives no events until a test or redelivery succeeds.
 */
export type WebhookStatus = (typeof WEBHOOK_STATUSES)[number];

/** What a subscription may list: every event type but `webhook.test`, which goes to the one it tests. */
export type SubscribableEventType = Exclude<EventType, 'webhook.test'>;

export const SUBSCRIBABLE_EVENT_TYPES = EVENT_TYPES.filter(
  (type): type is SubscribableEventType => type !== 'webhook.test',
);

export interface StoredWebhook {
  clientId: string;
  /** A UUIDv7: a client's subscriptions list in creation order. */
  webhookId: string;
  /** The organization of the restricted API key that created it; null: the whole client's (docs/webhooks.md). */
  organizationId: string | null;
  url: string;
  events: SubscribableEventType[];
  description: string | null;
  status: WebhookStatus;
  /** Since when it has been failing (the first delivery that used up its retries since the last success). */
  failingSince: string | null;
  /** The signing secret (`whsec_…`), sealed: opened only where a delivery is signed. */
  secret: SealedSecret;
  /** The secret before the last rotation, still signing beside the new one until previousSecretExpiresAt. */
  previousSecret: SealedSecret | null;
  previousSecretExpiresAt: string | null;
  secretCreatedAt: string;
  version: number;
  createdAt: string;
  updatedAt: string;
}

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;

export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** Why an attempt failed, as a code: never a message of the receiver's or of a library's. */
export const DELIVERY_ERRORS = [
  /** No response headers within the timeout. */
  'timeout',
  /** Refused, reset, TLS failure: no HTTP response. */
  'connection_failed',
  /** A 3xx: redirects are not followed. */
  'redirect',
  /** Any other status but 2xx. */
  'http_status',
  /** The host's name did not resolve. */
  'dns_failed',
  /** The URL or an address it resolved to is not allowed (docs/webhooks.md, "No SSRF"). */
  'address_refused',
  'subscription_deleted',
  'subscription_disabled',
] as const;

export type DeliveryError = (typeof DELIVERY_ERRORS)[number];

export interface DeliveryAttempt {
  at: string;
  durationMs: number;
  responseStatus: number | null;
  error: DeliveryError | null;
}

/** What made a delivery: an event, a `…/test` call, or a `…/redeliver` call (which reaches a disabled subscription). */
export type DeliveryTrigger = 'event' | 'test' | 'redelivery';

export interface DeliveryRef {
  clientId: string;
  webhookId: string;
  deliveryId: string;
}

export interface StoredDelivery extends DeliveryRef {
  /** The event's id (`evt_…`): the `webhook-id` header of every attempt. */
  eventId: string;
  eventType: EventType;
  /** The body every attempt sends, byte for byte: payloadOf(event) as JSON (ids, codes, statuses only). */
  payload: string;
  trigger: DeliveryTrigger;
  status: DeliveryStatus;
  /** Attempts in all. */
  attempts: number;
  /** Attempts since the delivery was last (re)scheduled from the start: its place in the retry schedule. */
  cycleAttempts: number;
  /** Pending: when the next attempt is due (or until when an attempt in progress holds it); else the last one's. */
  scheduledAt: string;
  /** The last attempts, oldest first (at most MAX_RECENT_ATTEMPTS). */
  recentAttempts: DeliveryAttempt[];
  deliveredAt: string | null;
  version: number;
  createdAt: string;
  updatedAt: string;
  /** Epoch seconds (TTL): DynamoDB removes the delivery some time after. */
  expiration: number;
}

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
 * id, the event's UUIDv7). gsi1 by status, spread over the table's shards (by client, subscription and
 * delivery), then when due: the pending ones are the retry queue the local timer (and a sweep on AWS)
 * reads, one Query per shard merged soonest first (docs/webhooks.md).
 */
export const webhookDeliveryEntity = defineEntity<StoredDelivery>()({
  name: 'WebhookDelivery',
  keys: {
    pk: 'CLIENT#<clientId>#WEBHOOK#<webhookId>',
    sk: 'DELIVERY#<deliveryId>',
    gsi1pk: 'WEBHOOKDELIVERIES#<status>#<shard>',
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
  derived: { shard: (delivery) => shardOf(delivery.clientId, delivery.webhookId, delivery.deliveryId) },
});

/**
 * The retry queue's partitions: each shard's pending ones, then the one partition they all shared before the
 * index was sharded. A delivery is re-keyed to its shard by its next write (its next attempt), so that one
 * empties itself as its deliveries come due; until then the sweep reads it too.
 */
export const dueDeliveryPartitions: readonly string[] = [
  ...tableShards.map((shard) => webhookDeliveryEntity.keys.gsi1pk.render({ status: 'pending', shard })),
  'WEBHOOKDELIVERIES#pending',
];
