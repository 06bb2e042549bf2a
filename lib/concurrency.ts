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

/**
 * Concurrent writers kept winning until the retries ran out: the client may simply try again, after
 * `retryAfterMs` (the pause the retries would have taken next), in whole seconds and at least one.
 */
export const changedConcurrently = (subject: string, retryAfterMs = 0) =>
  new Conflict(`The ${subject} is being changed concurrently; retry.`, {}, Math.max(1, Math.ceil(retryAfterMs / 1000)));

export interface RetryOptions {
  /** Attempts in all, the first included; 1 means no retry. */
  attempts: number;
  /**
   * What to throw when the retries end in a conflict; by default that VersionConflict itself. It is
   * given the pause the retries would have taken before another attempt: when the client may try again.
   */
  onExhausted?: (conflict: VersionConflict, retryAfterMs: number) => Error;
  /** The smallest back-off slot, in milliseconds (a slot is otherwise the duration of the attempt that lost). */
  backoffMs?: number;
  /** Caps the growth: no pause is drawn from a window wider than this. */
  maxBackoffMs?: number;
  /**
   * Every attempt should end within this many milliseconds of the first one's start: no retry is made
   * that would end later, nor one whose expected wait to win (half its window, then an attempt) would.
   */
  budgetMs?: number;
  /** For tests: the pause, the random source and the clock (milliseconds). */
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
  clock?: () => number;
}

const DEFAULT_BACKOFF_MS = 5;
const DEFAULT_MAX_BACKOFF_MS = 1_000;

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * The window the pause after `conflicts` conflicts is drawn from: binary exponential back-off in slots
 * of the losing attempt's duration (at least `backoffMs`), capped at `maxBackoffMs`. Each conflict
 * says that the writers racing for the item were not yet spread widely enough, so the window doubles
 * with the conflict count (two racers need about two slots, a hundred about a hundred); and the slot
 * is how long a read-modify-write takes right now, on a store or a machine that slows under the load.
 */
export const backoffWindow = (
  conflicts: number,
  attemptMs: number,
  backoffMs = DEFAULT_BACKOFF_MS,
  maxBackoffMs = DEFAULT_MAX_BACKOFF_MS,
) => Math.min(maxBackoffMs, Math.max(backoffMs, attemptMs) * 2 ** conflicts);

/**
 * Whether another attempt is worth it, with `leftMs` of the budget left: the drawn pause and an attempt
 * as long as the last must fit, and so must the expected wait to win, half the window and an attempt.
 * A window grown wider than what is left says that the contention will outlast the budget: answering
 * at once beats answering the same refusal later.
 */
const canStillWin = (window: number, drawn: number, attemptMs: number, leftMs: number) =>
  drawn + attemptMs <= leftMs && window / 2 + attemptMs <= leftMs;

/**
 * Runs `attempt` (a whole read-modify-write; it is given its 1-based number) until it does not throw
 * VersionConflict, at most `attempts` times and, with `budgetMs`, within that. Between attempts it
 * pauses at random within backoffWindow, so that racing writers spread out. Any other error passes
 * through at once.
 */
export const retryOnConflict = async <T>(
  attempt: (n: number) => Promise<T>,
  {
    attempts,
    onExhausted,
    backoffMs = DEFAULT_BACKOFF_MS,
    maxBackoffMs = DEFAULT_MAX_BACKOFF_MS,
    budgetMs = Number.POSITIVE_INFINITY,
    sleep = pause,
    random = Math.random,
    clock = () => performance.now(),
  }: RetryOptions,
): Promise<T> => {
  const started = clock();
  for (let n = 1; ; n++) {
    const attemptStarted = clock();
    try {
      return await attempt(n);
    } catch (error) {
      if (!(error instanceof VersionConflict)) throw error;
      const now = clock();
      const attemptMs = now - attemptStarted;
      const window = backoffWindow(n, attemptMs, backoffMs, maxBackoffMs);
      const drawn = random() * window;
      if (n >= attempts || !canStillWin(window, drawn, attemptMs, budgetMs - (now - started))) {
        throw onExhausted ? onExhausted(error, drawn) : error;
      }
      await sleep(drawn);
    }
  }
};
