import type { StoredPayerSubscription, SubmittedClaim } from '#lib/entities/payer-subscription';
import { Conflict, DomainError, NotFound, Unauthenticated, Unprocessable } from '#lib/errors';
import { log } from '#lib/observability/logger';
import { MAX_BATCH_ITEMS } from '#lib/runs/run-limits';
import { type NotificationType, type ReadNotification, readNotification } from './notification-bundle.ts';
import { presentsSecret } from './notification-secret.ts';
import type { PayerSubscriptionStore } from './payer-subscription-store.ts';
import type { SubmittedClaimStore } from './submitted-claim-store.ts';

/*
 * A payer's notification on one of our subscriptions (POST …/Payers/notifications/{subscriptionId};
 * docs/payer-api.md, "Notifications"). Every refusal comes before anything is written: an unknown or ended
 * subscription (404), no or a wrong channel secret (401), a body naming another subscription (422), a replayed
 * event (409), claims not of this subscription's client and connection (422). A handshake or heartbeat records
 * that the payer reached us; an event starts a `$inquire` of the claims it names, through the subscription's
 * connection, and records its number. A notification never writes a status itself: the inquiry does.
 */

/** One check-auth-status batch: a client user's requests, read through the subscription's connection. */
interface NotificationBatch {
  clientId: string;
  organizationId: string;
  clientUserId: string;
  payerConnectionId: string;
  requestExternalIds: string[];
}

export interface NotificationDependencies {
  subscriptions: Pick<PayerSubscriptionStore, 'get' | 'recordNotification'>;
  claims: Pick<SubmittedClaimStore, 'get'>;
  startBatch(batch: NotificationBatch): Promise<{ batchId: string; refused: readonly unknown[] }>;
  now(): Date;
}

export interface ReceivedNotificationInput {
  subscriptionId: string;
  authorization: string | undefined;
  body: unknown;
}

export type NotificationReceipt = { status: 200 | 202; type: NotificationType };

const ourSubscription = async (
  deps: NotificationDependencies,
  { subscriptionId, authorization }: ReceivedNotificationInput,
) => {
  const subscription = await deps.subscriptions.get(subscriptionId);
  // An ended subscription was replaced: the payer learns from the refusal that this one is over.
  if (!subscription || subscription.status === 'off') throw new NotFound(`Subscription ${subscriptionId}`);
  if (!presentsSecret(authorization, subscription.secretHash)) {
    throw new Unauthenticated(
      "The subscription's channel header (Authorization: Bearer <secret>) is missing or wrong.",
    );
  }
  return subscription;
};

/**
 * The body must name this subscription as the payer knows it. Before the payer's id is recorded (its create's
 * answer may come after the handshake) only a handshake can be taken: it names what we cannot yet check.
 */
function checkNamed(subscription: StoredPayerSubscription, read: ReadNotification) {
  const known = subscription.payerSubscriptionId;
  const named = read.payerSubscriptionId;
  if (known ? named === known : read.type === 'handshake') return;
  throw new Unprocessable('The notification names another subscription than the one of its URL.', {
    reason: 'subscription_mismatch',
  });
}

/** The named claims that are this subscription's: of its client (the key) and sent through its connection. */
async function claimsOf(deps: NotificationDependencies, subscription: StoredPayerSubscription, identifiers: string[]) {
  const found = await Promise.all(identifiers.map((id) => deps.claims.get(subscription.clientId, id)));
  return found.filter(
    (claim): claim is SubmittedClaim =>
      claim !== undefined &&
      claim.payerConnectionId === subscription.payerConnectionId &&
      claim.organizationId === subscription.organizationId,
  );
}

/** One batch per client user (and per MAX_BATCH_ITEMS requests), each request once. */
function batchesOf(subscription: StoredPayerSubscription, claims: SubmittedClaim[]): NotificationBatch[] {
  const byUser = new Map<string, Set<string>>();
  for (const claim of claims)
    byUser.set(claim.clientUserId, (byUser.get(claim.clientUserId) ?? new Set()).add(claim.externalId));
  const { clientId, organizationId, payerConnectionId } = subscription;
  return [...byUser].flatMap(([clientUserId, externalIds]) => {
    const ids = [...externalIds];
    const chunks = Array.from({ length: Math.ceil(ids.length / MAX_BATCH_ITEMS) }, (_, i) =>
      ids.slice(i * MAX_BATCH_ITEMS, (i + 1) * MAX_BATCH_ITEMS),
    );
    return chunks.map((requestExternalIds) => ({
      clientId,
      organizationId,
      clientUserId,
      payerConnectionId,
      requestExternalIds,
    }));
  });
}

/** Starts each batch; a refused one (quotas, a user removed) is logged: the scheduled re-checks still read it. */
async function startEach(deps: NotificationDependencies, batches: NotificationBatch[]) {
  let started = 0;
  for (const batch of batches) {
    try {
      const { batchId, refused } = await deps.startBatch(batch);
      started += 1;
      log.info('Payer notification batch started', {
        clientId: batch.clientId,
        batchId,
        requests: batch.requestExternalIds.length - refused.length,
      });
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      log.warn('Payer notification batch refused', { clientId: batch.clientId, errorName: error.name });
    }
  }
  return started;
}

const replayed = () =>
  new Conflict('This event was already received: its number is not above the last one recorded.', {
    reason: 'replayed_event',
  });

async function receiveEvent(
  deps: NotificationDependencies,
  subscription: StoredPayerSubscription,
  read: ReadNotification,
) {
  const { subscriptionId } = subscription;
  const eventNumber = read.eventNumber;
  if (eventNumber === undefined) {
    throw new Unprocessable('An event notification needs its event number.', { reason: 'no_event_number' });
  }
  if (eventNumber <= subscription.lastEventNumber) throw replayed();
  const claims = await claimsOf(deps, subscription, read.claimIdentifiers);
  if (claims.length === 0) {
    throw new Unprocessable('The notification names no claim submitted through this subscription’s connection.', {
      reason: 'unknown_claims',
    });
  }
  const batches = await startEach(deps, batchesOf(subscription, claims));
  const at = deps.now().toISOString();
  const recorded = await deps.subscriptions.recordNotification(subscriptionId, { at, status: 'active', eventNumber });
  if (recorded === 'replayed') throw replayed();
  if (recorded === 'not_found') throw new NotFound(`Subscription ${subscriptionId}`);
  log.info('Payer notification received', {
    subscriptionId,
    clientId: subscription.clientId,
    notificationType: read.type,
    eventNumber,
    claims: claims.length,
    total: read.claimIdentifiers.length,
    batches,
  });
}

/** Checks, then acts on a notification (see the header comment); what the route answers. */
export async function receiveNotification(
  deps: NotificationDependencies,
  input: ReceivedNotificationInput,
): Promise<NotificationReceipt> {
  const subscription = await ourSubscription(deps, input);
  const read = readNotification(input.body);
  checkNamed(subscription, read);
  if (read.type === 'event-notification') {
    await receiveEvent(deps, subscription, read);
    return { status: 202, type: read.type };
  }
  // The payer reached us and gets a 2xx: the channel works, so the subscription is active (backport rules).
  const at = deps.now().toISOString();
  const recorded = await deps.subscriptions.recordNotification(subscription.subscriptionId, { at, status: 'active' });
  if (recorded === 'not_found') throw new NotFound(`Subscription ${subscription.subscriptionId}`);
  log.info('Payer notification received', {
    subscriptionId: subscription.subscriptionId,
    clientId: subscription.clientId,
    notificationType: read.type,
  });
  return { status: 200, type: read.type };
}
