import type { SQSEvent } from 'aws-lambda';
import { observed } from '#lib/observability/invocation';
import { deliverEvent } from '#lib/webhooks/delivery-service';
import { deliverQueuedEvents } from '#lib/webhooks/queued-events';

/**
 * DeliverWebhookEvents (the queue of the service-review bus's rule, docs/webhooks.md "On AWS"): each
 * message's event goes to `deliverEvent`, as the local relay hands it over: fanned out to the client's
 * subscriptions, recorded, and attempted once. Reports the messages that failed (partial batch response).
 */
export const handler = observed('DeliverWebhookEvents', (event: SQSEvent) => deliverQueuedEvents(deliverEvent)(event));
