import type { Context } from 'aws-lambda';
import { observed } from '#lib/observability/invocation';
import { payerTasks } from '#lib/payer-api/payer-task-service';

/**
 * SubmitPasClaim (SubmitToPayer's Task): one attempt at sending the request to the payer's PAS API
 * (`Claim/$submit`, or `Claim/$inquire` first when an earlier attempt may have reached it). Invoked with
 * ids only; returns the run's outcome and how long the state machine waits before the next attempt
 * (docs/payer-api.md).
 */
export const handler = observed('SubmitPasClaim', (input: unknown, _context: Context) => payerTasks.submit(input));
