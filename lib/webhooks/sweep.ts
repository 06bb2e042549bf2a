import type { WebhookDelivery } from './delivery.ts';

/**
 * The retry sweep (docs/webhooks.md, "Retries"): the deliveries due now, a batch at a time, again while
 * a batch sent something (a full one may have more behind it) and `more()` allows, e.g. while the
 * invocation has time left. How many were sent. The local timer (local/webhook-deliveries.ts) and the
 * scheduled function on AWS (functions/webhooks/deliver-due-webhooks.ts) both run it.
 */
export const deliverAllDue = async (
  delivery: Pick<WebhookDelivery, 'deliverDue'>,
  more: () => boolean = () => true,
) => {
  let sent = 0;
  for (;;) {
    const batch = await delivery.deliverDue();
    sent += batch;
    if (batch === 0 || !more()) return sent;
  }
};
