import type { StoredPayerSubscription } from '#lib/entities/payer-subscription';

/*
 * When a subscription is renewed and looked at (docs/payer-api.md, "Subscriptions"): asked for 7 days,
 * renewed when less than a day is left; a heartbeat every 5 minutes, and one missing for twice that is a
 * subscription that may be down, asked about with `$status`.
 */

const DAY_MS = 24 * 3600 * 1000;
const SUBSCRIPTION_LIFETIME_MS = 7 * DAY_MS;
const RENEW_WHEN_LEFT_MS = DAY_MS;
export const HEARTBEAT_PERIOD_SECONDS = 300;
/** A subscription replaced or ended: kept for the notifications still on their way, never due again. */
export const NEVER_DUE = '9999-12-31T23:59:59.999Z';

const at = (ms: number) => new Date(ms).toISOString();

export const endAtFrom = (now: Date) => at(now.getTime() + SUBSCRIPTION_LIFETIME_MS);

export const renewalIsDue = (subscription: StoredPayerSubscription, now: Date) =>
  Date.parse(subscription.endAt) - now.getTime() < RENEW_WHEN_LEFT_MS;

/** When the payer last reached us (or, before the handshake, when we asked for it). */
const lastHeardOf = (subscription: StoredPayerSubscription) =>
  Date.parse(subscription.lastNotifiedAt ?? subscription.createdAt);

export const heartbeatIsMissing = (subscription: StoredPayerSubscription, now: Date) =>
  now.getTime() - lastHeardOf(subscription) > 2 * subscription.heartbeatPeriodSeconds * 1000;

/**
 * The next look: when a heartbeat would be missing (not sooner than a period from now: a silent payer is
 * asked at most once a period), or when the renewal is due, whichever comes first.
 */
export const nextCheckOf = (subscription: StoredPayerSubscription, now: Date) => {
  const periodMs = subscription.heartbeatPeriodSeconds * 1000;
  const heartbeatCheck = Math.max(lastHeardOf(subscription) + 2 * periodMs, now.getTime() + periodMs);
  const renewal = Math.max(Date.parse(subscription.endAt) - RENEW_WHEN_LEFT_MS, now.getTime() + periodMs);
  return at(Math.min(heartbeatCheck, renewal));
};

/** After a create refused or not answered: the keeper makes another then. */
export const retryAtOf = (now: Date, periodSeconds: number) => at(now.getTime() + 2 * periodSeconds * 1000);
