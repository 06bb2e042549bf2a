import type { PortalSession } from './drivers/driver.ts';

/*
 * Each status lookup of a batch's group has its own deadline inside the group's task (docs/rpa.md, "A
 * hung lookup"): a portal that never answers one request costs that request its deadline, and the
 * group's next lookups go on in the same session.
 */

/**
 * What a lookup on a slow but working portal takes at most: the home page, the lookup form, its answer
 * and a screenshot, each a page load of a few seconds. No lookup is given less, and none starts (but a
 * task's first) unless this much of the task is left.
 */
export const MIN_LOOKUP_MS = 10_000;

/**
 * Kept free at the end of the task: the session and its browser context closed, the lease given back,
 * the result returned before the Task's timeout (whose clock also ran during a cold start).
 */
export const CLOSING_MS = 5_000;

/**
 * A lookup's deadline, in ms from now: its share of what the task has left (less CLOSING_MS) among the
 * lookups the invocation may still make, at least MIN_LOOKUP_MS, at most the per-call timeout, and never
 * past the task's end. A share, so that one that hangs leaves the others their time; at least the
 * minimum, so that a slow portal is not cut short: the lookups that no longer fit are the next
 * invocation's (the state machine calls again for them).
 */
export function lookupDeadlineMs(taskLeftMs: number, lookupsLeft: number, callTimeoutMs: number): number {
  const usable = taskLeftMs - CLOSING_MS;
  const share = Math.floor(usable / Math.max(1, lookupsLeft));
  return Math.max(1, Math.min(callTimeoutMs, usable, Math.max(MIN_LOOKUP_MS, share)));
}

/** Kept of a lookup's deadline for the screenshot of its answer (one capture takes well under a second). */
const SCREENSHOT_MS = 3_000;

/**
 * The session with every call bounded by what is left until `deadline` (epoch ms); the portal's own calls
 * end SCREENSHOT_MS sooner, so that an answer that came late still gets its screenshot and is recorded.
 */
export function sessionUntil(session: PortalSession, deadline: number): PortalSession {
  const left = (kept = 0) => ({ timeoutMs: Math.max(1, deadline - kept - Date.now()) });
  return {
    fillPriorAuthorization: (form) => session.fillPriorAuthorization(form, left(SCREENSHOT_MS)),
    readAuthorizationStatus: (query) => session.readAuthorizationStatus(query, left(SCREENSHOT_MS)),
    screenshot: (label) => session.screenshot(label, left()),
    close: () => session.close(),
  };
}
