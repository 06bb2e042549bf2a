import { closed, type JsonSchema, oneOf } from '#lib/openapi/schema-builders';
import { NOTIFICATION_TYPES } from '#lib/payer-subscriptions/notification-bundle';

/**
 * A payer's notification on our PAS subscription, and our answer (docs/payer-api.md, "Notifications"). The
 * notification is FHIR (R4 Subscriptions Backport): a resource's members are the payer's to add, so only what
 * the route reads is described and the rest stays open; the answer is ours, closed.
 */
export const payerNotificationSchemas: Record<string, JsonSchema> = {
  PayerNotification: {
    title: 'PayerNotification',
    description:
      'A notification Bundle (`type: history`): entry[0] a SubscriptionStatus Parameters (`subscription` = Subscription/<the payer’s id>, `type`, `events-since-subscription-start`, a `notification-event` per event with `event-number` and `focus`); for an event with full-resource content, the PAS Response Bundles follow, each ClaimResponse identified by the claim identifier we sent.',
    type: 'object',
    required: ['resourceType', 'type', 'entry'],
    properties: {
      resourceType: { type: 'string', const: 'Bundle' },
      type: { type: 'string', const: 'history' },
      entry: {
        type: 'array',
        minItems: 1,
        items: { type: 'object', properties: { fullUrl: { type: 'string' }, resource: { type: 'object' } } },
      },
    },
  },
  PayerNotificationReceipt: closed('PayerNotificationReceipt', 'What the notification was taken as', {
    received: oneOf(NOTIFICATION_TYPES, 'The notification’s type'),
  }),
};
