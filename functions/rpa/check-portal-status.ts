import type { Context } from 'aws-lambda';
import { observed } from '#lib/observability/invocation';
import { worker } from '#lib/portal/worker-service';

/**
 * CheckPortalStatus (an item of CheckAuthStatusBatch): logs in, reads the request's authorization
 * status on the portal and updates the request. Invoked by a state machine's Task with ids only;
 * returns ids and the outcome (docs/rpa.md).
 */
export const handler = observed('CheckPortalStatus', (input: unknown, context: Context) =>
  worker.checkPortalStatus(input, context),
);
