import { attr, defineEntity } from './define-entity.ts';

/*
 * A payer connection's PAS subscription (R4 Subscriptions Backport, rest-hook, the PAS topic): one per
 * connection, not per request (docs/payer-api.md, "Subscriptions"). Three items:
 * - the subscription itself, keyed by our own id: a notification names nothing else (the route
 *   `POST …/Payers/notifications/{id}` carries it), so its key holds no tenant's id, like the API key
 *   lookup's; the secret's hash, never the secret;
 * - the connection's pointer to its current subscription, in the connection's partition: the one
 *   conditional write that makes "one per connection" hold under concurrent pended answers;
 * - a submitted claim's pointer to its request, in the client's keys: a notification names claims by the
 *   identifier we gave them, and is resolved only within the subscription's client and connection.
 */

/** Where a subscription stands, as the payer reported it last (backport `SubscriptionStatus.status`). */
export const PAYER_SUBSCRIPTION_STATUSES = ['requested', 'active', 'error', 'off'] as const;
export type PayerSubscriptionStatus = (typeof PAYER_SUBSCRIPTION_STATUSES)[number];

export interface StoredPayerSubscription {
  /** Ours: random, URL-safe (the notification route's `{id}`). */
  subscriptionId: string;
  clientId: string;
  organizationId: string;
  payerConnectionId: string;
  payerId: string;
  /** The payer's `Subscription.id`, once it answered the create; null before. */
  payerSubscriptionId: string | null;
  /** SHA-256 (hex) of the secret the payer sends back in the channel header; the secret itself is never stored. */
  secretHash: string;
  status: PayerSubscriptionStatus;
  /** `Subscription.end` as asked for (renewed before it). */
  endAt: string;
  /** The heartbeat period asked for, seconds; a heartbeat missing for twice that is a subscription down. */
  heartbeatPeriodSeconds: number;
  /** The highest `events-since-subscription-start` received: a notification at or below it is a replay. */
  lastEventNumber: number;
  /** When the payer last reached us (handshake, heartbeat or event); null before the handshake. */
  lastNotifiedAt: string | null;
  /** Which partition of the keeper's due index holds it (shardOf the subscription id). */
  shard: string;
  /** When the keeper next looks at it: renewal, heartbeat watch or `$status`. */
  checkDueAt: string;
  version: number;
  createdAt: string;
  updatedAt: string;
}

/** A subscription, keyed by its own id; gsi1 is the keeper's due order, sharded (no Scan, no hot partition). */
export const payerSubscriptionEntity = defineEntity<StoredPayerSubscription>()({
  name: 'PayerSubscription',
  keys: {
    pk: 'PASSUB#<subscriptionId>',
    sk: 'PASSUB',
    gsi1pk: 'PASSUBSDUE#<shard>',
    gsi1sk: '<checkDueAt>#<subscriptionId>',
  },
  attributes: {
    subscriptionId: attr.string(),
    clientId: attr.string(),
    organizationId: attr.string(),
    payerConnectionId: attr.string(),
    payerId: attr.string(),
    payerSubscriptionId: attr.nullAsAbsent(attr.string()),
    secretHash: attr.string(),
    status: attr.string<PayerSubscriptionStatus>(),
    endAt: attr.string(),
    heartbeatPeriodSeconds: attr.number(),
    lastEventNumber: attr.number(),
    lastNotifiedAt: attr.nullAsAbsent(attr.string()),
    shard: attr.string(),
    checkDueAt: attr.string(),
    version: attr.number(),
    createdAt: attr.string(),
    updatedAt: attr.string(),
  },
});

/** The connection's current subscription. */
export interface PayerConnectionSubscription {
  clientId: string;
  payerConnectionId: string;
  subscriptionId: string;
  version: number;
  createdAt: string;
  updatedAt: string;
}

export const payerConnectionSubscriptionEntity = defineEntity<PayerConnectionSubscription>()({
  name: 'PayerConnectionSubscription',
  keys: {
    pk: 'CLIENT#<clientId>#PCONN#<payerConnectionId>',
    sk: 'PASSUB',
  },
  attributes: {
    clientId: attr.string(),
    payerConnectionId: attr.string(),
    subscriptionId: attr.string(),
    version: attr.number(),
    createdAt: attr.string(),
    updatedAt: attr.string(),
  },
});

/** A claim we submitted (its `Claim.identifier` value: the submission's bundle identifier) and its request. */
export interface SubmittedClaim {
  clientId: string;
  claimIdentifier: string;
  externalId: string;
  organizationId: string;
  clientUserId: string;
  payerConnectionId: string;
  version: number;
  createdAt: string;
  updatedAt: string;
}

export const submittedClaimEntity = defineEntity<SubmittedClaim>()({
  name: 'SubmittedClaim',
  keys: {
    pk: 'CLIENT#<clientId>#PASCLAIM#<claimIdentifier>',
    sk: 'PASCLAIM',
  },
  attributes: {
    clientId: attr.string(),
    claimIdentifier: attr.string(),
    externalId: attr.string(),
    organizationId: attr.string(),
    clientUserId: attr.string(),
    payerConnectionId: attr.string(),
    version: attr.number(),
    createdAt: attr.string(),
    updatedAt: attr.string(),
  },
});
