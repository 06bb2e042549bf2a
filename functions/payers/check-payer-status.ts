import type { Context } from 'aws-lambda';
import { observed } from '#lib/observability/invocation';
import { payerTasks } from '#lib/payer-api/payer-task-service';

/**
 * CheckPayerStatus (a group of CheckAuthStatusBatch): reads each request's authorization with the payer's
 * PAS API (`Claim/$inquire`) and updates the request; no browser. Invoked with ids only; returns the
 * group's requests it did not reach and how long to wait before it is called for them (docs/payer-api.md).
 */
export const handler = observed('CheckPayerStatus', (input: unknown, context: Context) =>
  payerTasks.check(input, context),
);
