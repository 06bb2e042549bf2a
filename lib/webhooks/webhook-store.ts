import type { DeliveryRef, StoredDelivery, StoredWebhook } from '#lib/entities/webhook';

/** The port the DynamoDB adapter implements for webhook subscriptions and their deliveries (records: lib/entities/webhook.ts). */
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
