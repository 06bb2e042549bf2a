import type { AuthorizationStatus } from '#lib/entities/request';

/*
 * When an undecided authorization is checked again without a client call (docs/rechecks.md): pended
 * or not yet found on the portal, it is re-checked after the client's first interval (1 h unless set),
 * then after twice as long each time, at most a day apart, until it is decided or 30 days pass.
 * Pure rules: the store keeps the schedule, the dispatcher (rechecks.ts) applies them.
 */

/** The statuses worth asking the portal about again: nobody has decided yet. */
const UNDECIDED_STATUSES: readonly AuthorizationStatus[] = ['pending', 'not_found'];

/** The longest pause between two re-checks. */
export const MAX_RECHECK_INTERVAL_SECONDS = 24 * 60 * 60;

/** Re-checks stop this long after the authorization became undecided. */
export const RECHECK_FOR_DAYS = 30;
const RECHECK_FOR_MS = RECHECK_FOR_DAYS * 24 * 60 * 60 * 1000;

/** The bounds of a client's own first interval (the admin CLI's `--every-seconds`): a payer portal is not to be hammered. */
export const CLIENT_INTERVAL_BOUNDS = { min: 300, max: MAX_RECHECK_INTERVAL_SECONDS } as const;

export const isClientInterval = (seconds: number) =>
  Number.isSafeInteger(seconds) && seconds >= CLIENT_INTERVAL_BOUNDS.min && seconds <= CLIENT_INTERVAL_BOUNDS.max;

/** A client's re-checks: off, or on with the first back-off step, a portal's and a payer API's. */
export interface RecheckSettings {
  enabled: boolean;
  firstIntervalSeconds: number;
  /** A request read through the payer's API: an `$inquire` costs no login, so it comes sooner. */
  payerFirstIntervalSeconds: number;
}

/**
 * The first back-off step of a re-check through `channel`: the payer API's for `pas`, the portal's
 * otherwise (a schedule written before the channel was kept, too: the slower step is the safe one).
 */
export const firstIntervalFor = (settings: RecheckSettings, channel: 'portal' | 'pas' | undefined) =>
  channel === 'pas' ? settings.payerFirstIntervalSeconds : settings.firstIntervalSeconds;

export const isUndecided = (status: AuthorizationStatus) => UNDECIDED_STATUSES.includes(status);

/** The pause before the re-check that follows `checksDone` re-checks: first, 2×first, 4×first … at most a day. */
export const intervalSeconds = (checksDone: number, firstIntervalSeconds: number) =>
  Math.min(firstIntervalSeconds * 2 ** checksDone, MAX_RECHECK_INTERVAL_SECONDS);

export const secondsAfter = (at: string, seconds: number) => new Date(Date.parse(at) + seconds * 1000).toISOString();

/** Whether the re-checks of an authorization undecided `since` have run their course at `now`. */
export const expired = (since: string, now: string) => Date.parse(now) - Date.parse(since) >= RECHECK_FOR_MS;

/**
 * What a change of status does to the schedule: one starts when the authorization becomes undecided,
 * ends when it is decided, and goes on as it was between undecided statuses (pending ↔ not found).
 */
export const scheduleChange = (previous: AuthorizationStatus, next: AuthorizationStatus): 'start' | 'end' | 'keep' => {
  if (isUndecided(previous) === isUndecided(next)) return 'keep';
  return isUndecided(next) ? 'start' : 'end';
};
