import { webhookUrlPolicy } from '#lib/config/settings';
import { webhookDelivery } from './delivery.ts';
import { dynamoWebhookStore } from './dynamo-webhook-store.ts';
import { signingSecretOpener } from './open-signing-secret.ts';
import { webhookTransport } from './transport.ts';

/**
 * Delivery on DynamoDB with the configured secrets keyring (it opens signing secrets) and the process's
 * URL policy (WEBHOOK_URL_POLICY): what the local relay and timer call in-process, and what a
 * queue-driven function calls on AWS (docs/webhooks.md, "On AWS"). Built on first use.
 */
let delivery: ReturnType<typeof webhookDelivery> | undefined;

export const webhookDeliveries = () => {
  delivery ??= webhookDelivery({
    store: dynamoWebhookStore,
    openSecret: signingSecretOpener(),
    transport: webhookTransport({ policy: webhookUrlPolicy() }),
  });
  return delivery;
};

/** The seam for the event relay: every receiving subscription of the event's client gets it. */
export const deliverEvent = (event: Parameters<ReturnType<typeof webhookDelivery>['deliverEvent']>[0]) =>
  webhookDeliveries().deliverEvent(event);
