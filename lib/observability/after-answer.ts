/*
 * Work a call owes its observability but its caller need not wait for: the X-Ray subsegment of an AWS call
 * (xray.ts) and the API call's EMF line (metrics.ts), built and written once the current turn of the event loop
 * is over. A handler's answer has then gone on, and the instance is not frozen yet: the Lambda runtime interface
 * client posts the answer as soon as the handler's promise settles, in that turn (RAPIDClient.js
 * `postInvocationResponse`, a blocking native call), and asks for the next event, when Lambda freezes the
 * instance, from a `setImmediate` it queues only then (Runtime.js `scheduleIteration`), so after these: immediates
 * run in the order queued, with their promise jobs and ticks (the subsegment's send) in between. Each job is its
 * own `setImmediate`, which keeps the async context it was queued in: where invocations share the process
 * (AWS_LAMBDA_MAX_CONCURRENCY), Powertools' per-invocation store is still the invocation's.
 */

/** Runs `job` after the current turn of the event loop (see above); what it throws is its own to handle. */
export const afterTheAnswer = (job: () => void): void => {
  setImmediate(job);
};
