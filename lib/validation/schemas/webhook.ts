import { SUBSCRIBABLE_EVENT_TYPES } from '#lib/entities/webhook';
import { DRAFT, text } from './common.ts';

/** Webhook subscriptions (docs/webhooks.md): bodies and queries of ours, not the spec's, so compiled but not served. */
const MAX_WEBHOOK_URL_LENGTH = 2048;
const MAX_DELIVERIES_PAGE = 100;

/** Body of POST …/Webhooks. The URL's scheme, user info and addresses are checked by the service (lib/webhooks/target-address.ts). */
export const webhookSubscriptionSchema = {
  $schema: DRAFT,
  $id: 'WebhookSubscription',
  title: 'WebhookSubscription',
  type: 'object',
  additionalProperties: false,
  required: ['url', 'events'],
  properties: {
    url: {
      type: 'string',
      minLength: 1,
      maxLength: MAX_WEBHOOK_URL_LENGTH,
      pattern: '^[Hh][Tt][Tt][Pp][Ss]?://',
      description:
        'Where deliveries are POSTed: https, and every address of its host public (locally also http and loopback)',
    },
    events: {
      type: 'array',
      description: 'The event types it receives (a `webhook.test` reaches it whatever this lists)',
      minItems: 1,
      maxItems: SUBSCRIBABLE_EVENT_TYPES.length,
      uniqueItems: true,
      items: { type: 'string', enum: [...SUBSCRIBABLE_EVENT_TYPES] },
    },
    description: text(200, 'For the client: what the subscription is for'),
  },
} as const;

/** Query of GET …/Webhooks/{webhookId}/deliveries: a page size, and the last delivery id of the page before. */
export const webhookDeliveryListQuerySchema = {
  $schema: DRAFT,
  $id: 'WebhookDeliveryListQuery',
  title: 'WebhookDeliveryListQuery',
  type: 'object',
  properties: {
    pageSize: {
      type: 'integer',
      minimum: 1,
      maximum: MAX_DELIVERIES_PAGE,
      description: `Deliveries per page, 1–${MAX_DELIVERIES_PAGE} (default 25)`,
    },
    cursor: {
      type: 'string',
      pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$',
      description: "The previous page's nextCursor: the page starts after (older than) that delivery",
    },
  },
} as const;
