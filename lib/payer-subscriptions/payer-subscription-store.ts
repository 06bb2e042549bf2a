import type { PayerSubscriptionStatus, StoredPayerSubscription } from '#lib/entities/payer-subscription';

/** What a notification tells about its subscription: when, the status it reports and, for an event, its number. */
export interface ReceivedNotification {
  at: string;
  status: PayerSubscriptionStatus;
  /** An event notification's `events-since-subscription-start`; absent for handshakes and heartbeats. */
  eventNumber?: number;
}

/** The fields the keeper changes on a subscription (its keys, secret and connection never change). */
export type SubscriptionChanges = Partial<
  Pick<StoredPayerSubscription, 'payerSubscriptionId' | 'status' | 'endAt' | 'checkDueAt' | 'lastNotifiedAt'>
>;

/**
 * Port: the payer connections' PAS subscriptions (lib/entities/payer-subscription.ts; docs/payer-api.md,
 * "Subscriptions"). One current subscription per connection, held by the connection's pointer.
 */
export interface PayerSubscriptionStore {
  /** A subscription by our id (strongly consistent): what a notification's route reads. */
  get(subscriptionId: string): Promise<StoredPayerSubscription | undefined>;
  /** The connection's current subscription, if it has one. */
  currentOf(clientId: string, payerConnectionId: string): Promise<StoredPayerSubscription | undefined>;
  /**
   * Writes a new subscription as the connection's current one, in one transaction: only while the
   * connection's current one is still `replacing` (undefined: it has none), which then ends `off`.
   * False when another writer got there first: its subscription stands, nothing is written.
   */
  create(subscription: StoredPayerSubscription, replacing?: StoredPayerSubscription): Promise<boolean>;
  /** Writes the changes on the version read; undefined when it changed since (or is gone): nothing written. */
  update(
    current: StoredPayerSubscription,
    changes: SubscriptionChanges,
    at: string,
  ): Promise<StoredPayerSubscription | undefined>;
  /**
   * Records a notification: when the payer last reached us, the status it reports and, for an event, its
   * number. An event numbered at or below the last one recorded is a replay: `replayed`, nothing written.
   */
  recordNotification(
    subscriptionId: string,
    notification: ReceivedNotification,
  ): Promise<'recorded' | 'replayed' | 'not_found'>;
  /** At most `limit` of the shard's subscriptions whose `checkDueAt` is `upTo` or before, soonest first. */
  due(shard: string, upTo: string, limit: number): Promise<StoredPayerSubscription[]>;
}
