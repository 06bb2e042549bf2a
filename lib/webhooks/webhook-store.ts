import type { SealedSecret } from '#lib/crypto/envelope';
import { EVENT_TYPES, type EventType } from '#lib/entities/service-event';

/**
 * Webhook subscriptions and their deliveries, as stored (docs/webhooks.md, docs/data-model.md): the
 * records and the port the DynamoDB adapter implements. Nothing here knows HTTP or DynamoDB.
 */
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

interface DeliveryPage {
  items: StoredDelivery[];
  /** The last delivery's id when more may follow. */
  next: string | null;
}

/**
 * The store. An update carries the next version and is conditional on the one before it
 * (VersionConflict otherwise, lib/concurrency.ts). A client's subscriptions are counted: `create`
 * refuses one past `limit` (LimitReached).
 */
export interface WebhookStore {
  create(webhook: StoredWebhook, limit: number): Promise<void>;
  get(clientId: string, webhookId: string): Promise<StoredWebhook | undefined>;
  /** Every subscription of the client, oldest first (at most the limit, so one read). */
  list(clientId: string): Promise<StoredWebhook[]>;
  update(webhook: StoredWebhook): Promise<void>;
  remove(webhook: StoredWebhook): Promise<void>;
  /** False when the delivery exists already (the same event handed over again). */
  createDelivery(delivery: StoredDelivery): Promise<boolean>;
  getDelivery(ref: DeliveryRef): Promise<StoredDelivery | undefined>;
  updateDelivery(delivery: StoredDelivery): Promise<void>;
  /** A subscription's deliveries, newest first, after (older than) the delivery `before`. */
  listDeliveries(clientId: string, webhookId: string, page: { limit: number; before?: string }): Promise<DeliveryPage>;
  /** Pending deliveries due at `now`, soonest first (an index: eventually consistent). */
  dueDeliveries(now: string, limit: number): Promise<DeliveryRef[]>;
}
