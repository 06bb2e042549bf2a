import { type EventData, payloadOf, type ServiceEvent } from '#lib/entities/service-event';
import type {
  DeliveryAttempt,
  DeliveryTrigger,
  StoredDelivery,
  StoredWebhook,
  WebhookStatus,
} from '#lib/entities/webhook';

/**
 * What a delivery is and how it moves (docs/webhooks.md, "Delivery"): pure functions of records and
 * the clock, so the schedule and the subscription's health are the same wherever an attempt runs.
 */

/** The receiver must answer (its status line and headers) within this. */
export const DELIVERY_TIMEOUT_MS = 10_000;
/**
 * Nominal pause after the n-th failed attempt of a cycle: 5 s × 4^(n−1), at most 8 h. Nine retries,
 * ten attempts over about 23.6 h; each pause is jittered by ±JITTER so that a receiver coming back is
 * not hit by every delivery at once.
 */
export const RETRY_DELAYS_SECONDS = [5, 20, 80, 320, 1280, 5120, 20480, 28800, 28800] as const;
export const JITTER = 0.2;
/** Attempts a delivery keeps for the deliveries list. */
export const MAX_RECENT_ATTEMPTS = 10;
/** Deliveries are kept this long (DynamoDB's TTL), then removed. */
const DELIVERY_RETENTION_DAYS = 30;
/** An attempt in progress holds its delivery this long (more than the timeout): one that crashed is retried after. */
const ATTEMPT_HOLD_MS = 60_000;
/** A subscription failing this long when another delivery uses up its retries is disabled. */
export const DISABLE_AFTER_FAILING_MS = 3 * 24 * 60 * 60 * 1000;

const EVENT_ID = /^evt_([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;

/**
 * A delivery's id is its event's UUID: one delivery per event and subscription, so an event handed
 * over twice (the relay is at-least-once) is recorded, and sent, once.
 */
export const deliveryIdOf = (eventId: string): string => {
  const match = EVENT_ID.exec(eventId);
  if (!match) throw new Error('An event id is evt_ and a lower-case UUID');
  return match[1]!;
};

const plus = (at: Date, ms: number) => new Date(at.getTime() + ms).toISOString();
const expirationOf = (at: Date) => Math.floor(at.getTime() / 1000) + DELIVERY_RETENTION_DAYS * 24 * 60 * 60;

/**
 * A status change as its schema has it: one written before events said why a denial was made (an
 * outbox item or a redelivery of one) has no `items` nor `reasonCodes`, which are empty lists then.
 */
const withReasonCodes = (data: EventData['authorization.status_changed']) => ({
  ...data,
  items: data.items ?? [],
  reasonCodes: data.reasonCodes ?? [],
});

/**
 * What `webhook` receives of `event`: its payload, where a subscription restricted to one organization is
 * not shown the id of another organization's run (as the authorization history does not show it to such a
 * key: docs/events.md). An event that does not say its run's organization shows its run to unrestricted
 * subscriptions only.
 */
export const webhookPayloadOf = (event: ServiceEvent, webhook: Pick<StoredWebhook, 'organizationId'>) => {
  const payload = payloadOf(event);
  if (event.type !== 'authorization.status_changed') return payload;
  const data = withReasonCodes(payload.data as EventData['authorization.status_changed']);
  if (webhook.organizationId === null || data.runId === null || event.runOrganizationId === webhook.organizationId) {
    return { ...payload, data };
  }
  return { ...payload, data: { ...data, runId: null } };
};

/** A new pending delivery of `event` to `webhook`, due now. */
export const newDelivery = (
  event: ServiceEvent,
  webhook: Pick<StoredWebhook, 'clientId' | 'webhookId' | 'organizationId'>,
  trigger: DeliveryTrigger,
  now: Date,
): StoredDelivery => ({
  clientId: webhook.clientId,
  webhookId: webhook.webhookId,
  deliveryId: deliveryIdOf(event.id),
  eventId: event.id,
  eventType: event.type,
  payload: JSON.stringify(webhookPayloadOf(event, webhook)),
  trigger,
  status: 'pending',
  attempts: 0,
  cycleAttempts: 0,
  scheduledAt: now.toISOString(),
  recentAttempts: [],
  deliveredAt: null,
  version: 1,
  createdAt: now.toISOString(),
  updatedAt: now.toISOString(),
  expiration: expirationOf(now),
});

/** The jittered pause after failed attempt `n` (1-based) of a cycle; undefined once the schedule is used up. */
export const retryDelayMs = (n: number, random: () => number = Math.random): number | undefined => {
  const nominal = RETRY_DELAYS_SECONDS[n - 1];
  if (nominal === undefined) return undefined;
  return Math.round(nominal * 1000 * (1 - JITTER + 2 * JITTER * random()));
};

/** Whether an attempt may start: pending, and due (not held by an attempt in progress, not scheduled later). */
export const isDue = (delivery: StoredDelivery, now: Date) =>
  delivery.status === 'pending' && delivery.scheduledAt <= now.toISOString();

/** The delivery held by the attempt about to start (a conditional write: one attempt at a time). */
export const heldForAttempt = (delivery: StoredDelivery, now: Date): StoredDelivery => ({
  ...delivery,
  scheduledAt: plus(now, ATTEMPT_HOLD_MS),
  version: delivery.version + 1,
  updatedAt: now.toISOString(),
});

/** The delivery once `attempt` ended: delivered, due again after the next pause, or failed. */
export const afterAttempt = (
  delivery: StoredDelivery,
  attempt: DeliveryAttempt,
  now: Date,
  random: () => number = Math.random,
): StoredDelivery => {
  const cycleAttempts = delivery.cycleAttempts + 1;
  const succeeded = attempt.error === null;
  const pause = succeeded ? undefined : retryDelayMs(cycleAttempts, random);
  return {
    ...delivery,
    status: succeeded ? 'delivered' : pause === undefined ? 'failed' : 'pending',
    attempts: delivery.attempts + 1,
    cycleAttempts,
    scheduledAt: pause === undefined ? attempt.at : plus(now, pause),
    recentAttempts: [...delivery.recentAttempts, attempt].slice(-MAX_RECENT_ATTEMPTS),
    deliveredAt: succeeded ? now.toISOString() : delivery.deliveredAt,
    version: delivery.version + 1,
    updatedAt: now.toISOString(),
  };
};

/** A delivery ended without an attempt (its subscription is gone or disabled): failed, with why. */
export const endedUnsent = (
  delivery: StoredDelivery,
  error: 'subscription_deleted' | 'subscription_disabled',
  now: Date,
): StoredDelivery => ({
  ...delivery,
  status: 'failed',
  scheduledAt: now.toISOString(),
  recentAttempts: [
    ...delivery.recentAttempts,
    { at: now.toISOString(), durationMs: 0, responseStatus: null, error },
  ].slice(-MAX_RECENT_ATTEMPTS),
  version: delivery.version + 1,
  updatedAt: now.toISOString(),
});

/** `…/redeliver`: a delivered or failed delivery goes out again, due now, with a fresh retry schedule. */
export const redelivered = (delivery: StoredDelivery, now: Date): StoredDelivery => ({
  ...delivery,
  trigger: 'redelivery',
  status: 'pending',
  cycleAttempts: 0,
  scheduledAt: now.toISOString(),
  version: delivery.version + 1,
  updatedAt: now.toISOString(),
  expiration: expirationOf(now),
});

/**
 * The subscription after a delivery ended: a success makes it active again (a disabled one too: only a
 * test or a redelivery reaches it); one that used up its retries makes it failing, and disabled once it
 * has been failing for DISABLE_AFTER_FAILING_MS. Undefined: nothing changes.
 */
export const healthAfter = (
  webhook: StoredWebhook,
  ended: 'delivered' | 'failed',
  now: Date,
): StoredWebhook | undefined => {
  let status: WebhookStatus;
  let failingSince: string | null;
  if (ended === 'delivered') {
    if (webhook.status === 'active') return undefined;
    [status, failingSince] = ['active', null];
  } else {
    failingSince = webhook.failingSince ?? now.toISOString();
    const longEnough = now.getTime() - Date.parse(failingSince) >= DISABLE_AFTER_FAILING_MS;
    status = webhook.status === 'disabled' || longEnough ? 'disabled' : 'failing';
    if (status === webhook.status && failingSince === webhook.failingSince) return undefined;
  }
  return { ...webhook, status, failingSince, version: webhook.version + 1, updatedAt: now.toISOString() };
};

/** A delivery as clients read it (GET …/deliveries): never the payload's secret, since it has none, nor a response body. */
export const deliveryRepresentationOf = (delivery: StoredDelivery) => {
  const last = delivery.recentAttempts.at(-1);
  return {
    id: delivery.deliveryId,
    webhookId: delivery.webhookId,
    eventId: delivery.eventId,
    eventType: delivery.eventType,
    trigger: delivery.trigger,
    status: delivery.status,
    attempts: delivery.attempts,
    nextAttemptAt: delivery.status === 'pending' ? delivery.scheduledAt : null,
    lastAttemptAt: last?.at ?? null,
    lastResponseStatus: last?.responseStatus ?? null,
    lastError: last?.error ?? null,
    deliveredAt: delivery.deliveredAt,
    recentAttempts: delivery.recentAttempts,
    createdAt: delivery.createdAt,
    updatedAt: delivery.updatedAt,
  };
};

export type DeliveryRepresentation = ReturnType<typeof deliveryRepresentationOf>;
