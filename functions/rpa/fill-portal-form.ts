import type { Context } from 'aws-lambda';
import { observed } from '#lib/observability/invocation';
import { worker } from '#lib/portal/worker-service';

/**
 * FillPortalForm (ViewOnPage): logs in to the payer's portal with the organization's portal account,
 * fills the request's prior-authorization form, captures it and stops before submitting. Invoked by
 * a state machine's Task with ids only; returns ids and the outcome (docs/rpa.md).
 */
export const handler = observed('FillPortalForm', (input: unknown, context: Context) =>
  worker.fillPortalForm(input, context),
);
