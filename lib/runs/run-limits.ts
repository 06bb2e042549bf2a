import { MAX_BATCH_REQUESTS } from '#lib/validation/schemas/rpa';

/** A batch checks 1 to 25 requests (its schema's bound: a group's lookups fit one invocation, so one login per account). */
export const MAX_BATCH_ITEMS = MAX_BATCH_REQUESTS;
/** The scraper session shows the request's latest runs, newest first. */
export const SESSION_RUNS = 10;
/** …and the latest changes of its authorization, newest first. */
export const SESSION_HISTORY = 10;
/** Presigned screenshot URLs of the session live this long (the page refreshes every 5 s while a run is active). */
export const SCREENSHOT_URL_SECONDS = 60;
/**
 * A run (or batch) whose execution cannot be found is lost only once it is this old: DescribeExecution
 * may not see an execution in the moment after StartExecution returned it.
 */
export const LOST_AFTER_MS = 60_000;
