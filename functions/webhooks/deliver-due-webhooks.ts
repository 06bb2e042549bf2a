import type { Context } from 'aws-lambda';
import { observed } from '#lib/observability/invocation';
import { webhookDeliveries } from '#lib/webhooks/delivery-service';
import { deliverAllDue } from '#lib/webhooks/sweep';

/**
 * A sweep stops taking batches with less time left than this: one batch of due deliveries is at most 25
 * attempts, 4 at a time, each within the 10-second timeout (lib/webhooks/delivery.ts).
 */
export const SWEEP_RESERVE_MS = 90_000;

/**
 * DeliverDueWebhooks (every minute, docs/webhooks.md "On AWS"): the deliveries due now, what the local
 * retry timer runs: retries, test calls and redeliveries. How many it sent.
 */
export const handler = observed('DeliverDueWebhooks', async (_event: unknown, context: Context) => ({
  sent: await deliverAllDue(
    webhookDeliveries(),
    () => (context.getRemainingTimeInMillis?.() ?? Number.POSITIVE_INFINITY) > SWEEP_RESERVE_MS,
  ),
}));
