/*
 * Work a call owes its observability but its caller need not wait for: the X-Ray subsegment of an AWS call
 * (xray.ts) and the API call's EMF line (metrics.ts), built and written once the current turn of the event loop
 * is over. A handler's answer has then gone
 * on: the runtime posts it as soon as the handler's promise settles, in that turn, and asks for the next event
 * (when Lambda freezes the instance) only once the post is answered, in a later turn, so the work is done by
 * then. Each job is its own `setImmediate`, which keeps the async context it was queued in: where invocations
 * share the process (AWS_LAMBDA_MAX_CONCURRENCY), Powertools' per-invocation store is still the invocation's.
 */

/** Runs `job` after the current turn of the event loop (see above); what it throws is its own to handle. */
export const afterTheAnswer = (job: () => void): void => {
  setImmediate(job);
};
