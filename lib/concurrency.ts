import { Conflict, Stale } from './errors.ts';

/**
 * Optimistic concurrency, one way for every service: stores write conditionally on the version
 * they read and throw VersionConflict when another writer got there first; services retry the
 * read-modify-write with retryOnConflict, or, when the client stated a precondition (If-Match, a
 * version), answer Stale.
 */

/** A conditional write found something else than it expected (another version, or the item taken or gone). */
export class VersionConflict extends Error {
  constructor() {
    super('The stored version changed');
    this.name = 'VersionConflict';
  }
}

/**
 * RFC 9110 If-Match against the current ETag (undefined: nothing exists). Absent: any state will
 * do. `*`: anything that exists. Otherwise a comma-separated list of ETags, matched ignoring a weak
 * `W/` prefix. `subject` names the resource in the messages ("request", "portal account").
 */
export const checkIfMatch = (ifMatch: string | undefined, currentEtag: string | undefined, subject: string): void => {
  if (ifMatch === undefined) return;
  if (currentEtag === undefined) throw new Stale(`If-Match was given but the ${subject} does not exist.`);
  if (ifMatch.trim() === '*') return;
  const tags = ifMatch.split(',').map((tag) => tag.trim().replace(/^W\//, ''));
  if (!tags.includes(currentEtag)) throw staleVersion(subject, currentEtag);
};

/** The client's precondition names another version than the current one. */
export const staleVersion = (subject: string, currentEtag: string) =>
  new Stale(`The ${subject} has changed: its current ETag is ${currentEtag}.`);

/** A conditional write under the client's precondition lost its race: the precondition no longer holds. */
export const changedByAnotherWrite = (subject: string) => new Stale(`The ${subject} was changed by another write.`);

/** Concurrent writers kept winning until the retries ran out: the client may simply try again. */
export const changedConcurrently = (subject: string) =>
  new Conflict(`The ${subject} is being changed concurrently; retry.`);

export interface RetryOptions {
  /** Attempts in all, the first included; 1 means no retry. */
  attempts: number;
  /** What to throw when the last attempt conflicted too; by default that VersionConflict itself. */
  onExhausted?: (conflict: VersionConflict) => Error;
  /** The pause before attempt n + 1 is uniform in [0, n × backoffMs) milliseconds, so racing writers spread out. */
  backoffMs?: number;
  /** Caps that growth: no pause is drawn from a window wider than this. */
  maxBackoffMs?: number;
  /** No retry starts later than this many milliseconds after the first attempt began (then as if attempts ran out). */
  budgetMs?: number;
  /** For tests: the pause, the random source and the clock (milliseconds). */
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
  clock?: () => number;
}

const DEFAULT_BACKOFF_MS = 5;

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The jittered pause after failed attempt `attempt` (1-based): within [0, min(attempt × backoffMs, maxBackoffMs)). */
export const backoffDelay = (
  attempt: number,
  backoffMs = DEFAULT_BACKOFF_MS,
  random: () => number = Math.random,
  maxBackoffMs = Number.POSITIVE_INFINITY,
) => random() * Math.min(backoffMs * attempt, maxBackoffMs);

/**
 * Runs `attempt` (a whole read-modify-write; it is given its 1-based number) until it does not throw
 * VersionConflict, at most `attempts` times and, with `budgetMs`, no later than that. Any other error
 * passes through at once.
 */
export const retryOnConflict = async <T>(
  attempt: (n: number) => Promise<T>,
  {
    attempts,
    onExhausted,
    backoffMs = DEFAULT_BACKOFF_MS,
    maxBackoffMs,
    budgetMs = Number.POSITIVE_INFINITY,
    sleep = pause,
    random = Math.random,
    clock = () => performance.now(),
  }: RetryOptions,
): Promise<T> => {
  const started = clock();
  for (let n = 1; ; n++) {
    try {
      return await attempt(n);
    } catch (error) {
      if (!(error instanceof VersionConflict)) throw error;
      const delay = backoffDelay(n, backoffMs, random, maxBackoffMs);
      if (n >= attempts || clock() - started + delay > budgetMs) throw onExhausted ? onExhausted(error) : error;
      await sleep(delay);
    }
  }
};
