import type { Bundle } from '@medplum/fhirtypes';
import type { PayerSubscription } from './subscription-hub.ts';
import {
  type NotificationEvent,
  type NotificationType,
  notificationBundle,
  type SubscriptionState,
} from './subscription-notification.ts';
import type { SubscriptionTerms } from './subscription-resource.ts';

/**
 * One rest-hook POST of a notification to the subscriber's endpoint, with the channel's headers (the client's
 * secret among them), within the channel's timeout. Delivered means a 2xx; anything else (another status, a
 * redirect, a refused connection, a timeout, the payer closing) is a failed delivery. Nothing is logged.
 */
async function deliver(terms: SubscriptionTerms, body: Bundle, closing: AbortSignal): Promise<boolean> {
  const headers = new Headers();
  for (const line of terms.headers) {
    const colon = line.indexOf(':');
    headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
  }
  headers.set('content-type', 'application/fhir+json');
  try {
    const response = await fetch(terms.endpoint, {
      method: 'POST',
      headers,
      body: JSON.stringify(body),
      redirect: 'manual',
      signal: AbortSignal.any([closing, AbortSignal.timeout(terms.timeoutSeconds * 1000)]),
    });
    await response.body?.cancel();
    return response.status >= 200 && response.status < 300;
  } catch {
    return false;
  }
}

const stopHeartbeats = (subscription: PayerSubscription) => {
  clearInterval(subscription.heartbeat);
  delete subscription.heartbeat;
};

/** A status other than active stops the heartbeats: only an active subscription is notified. */
const setStatus = (subscription: PayerSubscription, status: SubscriptionState) => {
  subscription.status = status;
  if (status !== 'active') stopHeartbeats(subscription);
};

export interface NotifierOptions {
  fhirBaseUrl: string;
  now: () => Date;
  closing: AbortSignal;
  /** Whether the payer still holds the subscription (not deleted, not closing). */
  kept: (subscription: PayerSubscription) => boolean;
}

/**
 * How a subscription is notified: in order (each delivery after the one before, so event numbers arrive
 * rising), only while it is in the state the notification was meant for (`requested` for the handshake,
 * `active` for the rest); a delivered handshake makes it active with heartbeats, a failed delivery `error`.
 */
export const notifier = (options: NotifierOptions) => {
  const { now } = options;
  /** The subscription, `off` once past its end. */
  const current = (subscription: PayerSubscription) => {
    if (subscription.status !== 'off' && Date.parse(subscription.terms.end) <= now().getTime()) {
      setStatus(subscription, 'off');
    }
    return subscription;
  };

  const enqueue = (subscription: PayerSubscription, type: NotificationType, event?: NotificationEvent) => {
    const expected: SubscriptionState = type === 'handshake' ? 'requested' : 'active';
    subscription.queue = subscription.queue.then(async () => {
      if (!options.kept(subscription) || current(subscription).status !== expected) return;
      const eventsSinceStart = event?.number ?? subscription.eventsSinceStart;
      const status = { subscriptionId: subscription.id, status: expected, type, eventsSinceStart };
      const body = notificationBundle(options.fhirBaseUrl, status, now().toISOString(), event);
      const delivered = await deliver(subscription.terms, body, options.closing);
      if (!options.kept(subscription) || subscription.status !== expected) return;
      if (!delivered) return setStatus(subscription, 'error');
      if (type === 'handshake') resumeHeartbeats(subscription);
    });
  };

  /** Active, with a heartbeat every heartbeat period (none without one); timers never hold the process. */
  const resumeHeartbeats = (subscription: PayerSubscription) => {
    setStatus(subscription, 'active');
    stopHeartbeats(subscription);
    const period = subscription.terms.heartbeatPeriodSeconds;
    if (!period) return;
    subscription.heartbeat = setInterval(() => enqueue(subscription, 'heartbeat'), period * 1000).unref();
  };

  return { current, enqueue, setStatus, stopHeartbeats, resumeHeartbeats };
};
