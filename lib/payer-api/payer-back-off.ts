/*
 * How long a run waits before it calls a payer again that did not answer in time or answered 429/5xx:
 * the payer's Retry-After when it gave one (bounded, so a payer cannot park a run for a day), else an
 * exponential back-off with full jitter, as AWS's guidance on retries recommends.
 */

/** The first wait, and the longest a payer's Retry-After is honoured (the execution has 15 minutes). */
const FIRST_WAIT_SECONDS = 5;
const MAX_WAIT_SECONDS = 120;

/**
 * Seconds to wait before attempt `attempt + 1` (attempt: calls made so far, from 1); at least 1, since a
 * Wait state of 0 seconds would spin.
 */
export function waitSecondsBefore(
  attempt: number,
  retryAfterSeconds: number | null,
  random: () => number = Math.random,
): number {
  if (retryAfterSeconds !== null && retryAfterSeconds >= 0) {
    return Math.max(1, Math.min(MAX_WAIT_SECONDS, Math.ceil(retryAfterSeconds)));
  }
  const ceiling = Math.min(MAX_WAIT_SECONDS, FIRST_WAIT_SECONDS * 2 ** Math.max(0, attempt - 1));
  return Math.max(1, Math.ceil(random() * ceiling));
}
