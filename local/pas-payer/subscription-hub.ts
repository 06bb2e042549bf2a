import { randomUUID } from 'node:crypto';
import type { Bundle } from '@medplum/fhirtypes';
import type { ClaimStore, StoredClaim } from './claims.ts';
import { notifier } from './subscription-delivery.ts';
import { type SubscriptionState, subscriptionStatus } from './subscription-notification.ts';
import type { SubscriptionTerms } from './subscription-resource.ts';

/**
 * The payer's subscriptions, in memory like its claims: each a client's, notified over its rest-hook in order
 * (one delivery after the other, so event numbers arrive rising). A new one is `requested` until its handshake
 * is delivered (then `active`, with heartbeats every heartbeat period) or fails (`error`). A claim of the
 * client that changes is an event for each of its active subscriptions. A failed delivery puts a subscription
 * in `error`; past its end it is `off`; neither is notified again.
 */
export interface PayerSubscription {
  id: string;
  clientId: string;
  terms: SubscriptionTerms;
  status: SubscriptionState;
  eventsSinceStart: number;
  heartbeat?: NodeJS.Timeout;
  /** The deliveries, chained. */
  queue: Promise<void>;
}

export interface SubscriptionHubOptions {
  fhirBaseUrl: string;
  now: () => Date;
  /** The claim's current PAS Response Bundle, as $submit and $inquire answer it. */
  answerOf: (claim: StoredClaim) => Bundle;
}

export const subscriptionHub = (options: SubscriptionHubOptions) => {
  const subscriptions = new Map<string, PayerSubscription>();
  const closing = new AbortController();

  const { current, enqueue, setStatus, stopHeartbeats, resumeHeartbeats } = notifier({
    ...options,
    closing: closing.signal,
    kept: (subscription) => !closing.signal.aborted && subscriptions.get(subscription.id) === subscription,
  });

  return {
    create(clientId: string, terms: SubscriptionTerms): PayerSubscription {
      const subscription: PayerSubscription = {
        id: randomUUID(),
        clientId,
        terms,
        status: 'requested',
        eventsSinceStart: 0,
        queue: Promise.resolve(),
      };
      subscriptions.set(subscription.id, subscription);
      enqueue(subscription, 'handshake');
      return subscription;
    },
    /** The client's own subscription with this id; another client's is not found. */
    find(clientId: string, id: string) {
      const subscription = subscriptions.get(id);
      return subscription?.clientId === clientId ? current(subscription) : undefined;
    },
    /** New terms (a renewal moves `end`); headers not sent again are kept, as reads never show them. */
    update(subscription: PayerSubscription, terms: SubscriptionTerms) {
      subscription.terms = { ...terms, headers: terms.headers.length > 0 ? terms.headers : subscription.terms.headers };
      if (current(subscription).status === 'active') resumeHeartbeats(subscription);
    },
    remove(subscription: PayerSubscription) {
      stopHeartbeats(subscription);
      subscriptions.delete(subscription.id);
    },
    /** The SubscriptionStatus a `$status` answers. */
    statusOf: (subscription: PayerSubscription) =>
      subscriptionStatus({
        subscriptionId: subscription.id,
        status: current(subscription).status,
        type: 'query-status',
        eventsSinceStart: subscription.eventsSinceStart,
      }),
    /** An event for each active subscription of the claim's client, carrying the claim's answer as it is now. */
    claimChanged(claim: StoredClaim) {
      for (const subscription of subscriptions.values()) {
        if (subscription.clientId !== claim.clientId || current(subscription).status !== 'active') continue;
        const number = ++subscription.eventsSinceStart;
        enqueue(subscription, 'event-notification', {
          number,
          timestamp: options.now().toISOString(),
          response: options.answerOf(claim),
        });
      }
    },
    all: () => [...subscriptions.values()].map(current),
    /** Tests: a subscription the payer turned off or found in error. */
    setStatus: (subscription: PayerSubscription, status: 'off' | 'error') => setStatus(subscription, status),
    close() {
      closing.abort();
      for (const subscription of subscriptions.values()) stopHeartbeats(subscription);
    },
  };
};

export type SubscriptionHub = ReturnType<typeof subscriptionHub>;

/** Each payer's hub, by the claim store it watches: the payer's operations hold the store, not the hub. */
const hubs = new WeakMap<ClaimStore, SubscriptionHub>();

export const watchClaims = (claims: ClaimStore, hub: SubscriptionHub) => void hubs.set(claims, hub);

/**
 * A claim of the store changed (the operator decided it, an update or a cancel changed it): each active
 * subscription of its client is notified, with the claim's PAS Response Bundle as it is now.
 */
export function notifyClaimChanged(claims: ClaimStore, claim: StoredClaim): void {
  hubs.get(claims)?.claimChanged(claim);
}
