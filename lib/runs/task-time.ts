/** What a task reads of its invocation (the Lambda context): the time it has left. */
export interface Invocation {
  getRemainingTimeInMillis(): number;
}

/**
 * The time a Task state's invocation really has: the sooner of its Lambda's end (the context) and the
 * Task's own timeout counted from now, the invocation's start. The two differ on AWS: a browser
 * function's Lambda timeout (150 s) outlasts its Task's (120 s), so that a late worker can still close
 * its browser, and a payer function's (75 s) its Task's (60 s). Past the Task's timeout the state
 * machine has given up on the invocation and its Catch ends the runs still going, so no work that
 * should count may start or run past it. Locally the Lambda context ends with the Task.
 */
export const taskTime = (
  invocation: Invocation | undefined,
  taskTimeoutSeconds: number,
  now: () => number = Date.now,
): Invocation => {
  const taskEnds = now() + taskTimeoutSeconds * 1000;
  return {
    getRemainingTimeInMillis: () =>
      Math.max(0, Math.min(invocation?.getRemainingTimeInMillis() ?? Number.POSITIVE_INFINITY, taskEnds - now())),
  };
};
