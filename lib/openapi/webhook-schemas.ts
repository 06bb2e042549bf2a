import { EVENT_TYPES } from '#lib/entities/service-event';
import {
  DELIVERY_ERRORS,
  DELIVERY_STATUSES,
  type DeliveryAttempt,
  SUBSCRIBABLE_EVENT_TYPES,
  WEBHOOK_STATUSES,
} from '#lib/entities/webhook';
import {
  closed,
  type JsonSchema,
  type Members,
  nullable,
  ref,
  string,
  timestamp,
  uuid,
} from '#lib/openapi/schema-builders';
import { type DeliveryRepresentation, MAX_RECENT_ATTEMPTS } from '#lib/webhooks/delivery-records';
import type { webhookRepresentationOf } from '#lib/webhooks/webhook-representation';

/**
 * Webhook subscriptions and deliveries as the API answers them (docs/webhooks.md): exact, closed
 * schemas whose members are typed against the representations (`satisfies Members<…>`), so tsc fails
 * when one changes without the other. Imported at build time only (scripts/build-openapi.ts).
 */

const webhook = {
  id: uuid('A UUIDv7: subscriptions list in creation order'),
  url: string('Where deliveries are POSTed', { format: 'uri' }),
  events: {
    type: 'array',
    description: 'The event types it receives',
    items: { type: 'string', enum: [...SUBSCRIBABLE_EVENT_TYPES] },
  },
  description: nullable({ type: 'string' }),
  status: string(
    'active; failing: a delivery used up its retries since the last success; disabled: failing 3 days, receives no events until a test or redelivery succeeds',
    { enum: [...WEBHOOK_STATUSES] },
  ),
  organizationId: nullable(
    string("The organization of the restricted API key that created it; null: the whole client's"),
  ),
  failingSince: nullable(timestamp('When it started failing')),
  secretCreatedAt: timestamp('When the current signing secret was made'),
  previousSecretExpiresAt: nullable(
    timestamp('After a rotation: until when the previous secret signs too (a second v1 signature)'),
  ),
  createdAt: timestamp('When it was created'),
  updatedAt: timestamp('When it last changed'),
} satisfies Members<ReturnType<typeof webhookRepresentationOf>>;

const attempt = {
  at: timestamp('When it was sent'),
  durationMs: { type: 'integer', minimum: 0, description: 'Until the response headers, or the failure' },
  responseStatus: nullable({ type: 'integer', minimum: 100, maximum: 599, description: "The receiver's status" }),
  error: nullable(string('Why it failed, as a code (null: delivered)', { enum: [...DELIVERY_ERRORS] })),
} satisfies Members<DeliveryAttempt>;

const delivery = {
  id: uuid("The delivery's id: its event's UUID (one delivery per event and subscription)"),
  webhookId: uuid('The subscription'),
  eventId: string('The event, `evt_<UUIDv7>`: the webhook-id header of every attempt', {
    pattern: '^evt_[0-9a-f-]{36}$',
  }),
  eventType: string('The event type', { enum: [...EVENT_TYPES] }),
  trigger: string('What made it: an event, a test call, or a redelivery call', {
    enum: ['event', 'test', 'redelivery'],
  }),
  status: string('pending: an attempt is due (nextAttemptAt); delivered: a 2xx; failed: retries used up', {
    enum: [...DELIVERY_STATUSES],
  }),
  attempts: { type: 'integer', minimum: 0, description: 'Attempts in all' },
  nextAttemptAt: nullable(timestamp('pending: when the next attempt is due')),
  lastAttemptAt: nullable(timestamp('When the last attempt was sent')),
  lastResponseStatus: nullable({ type: 'integer', minimum: 100, maximum: 599 }),
  lastError: nullable(string('The last attempt’s error code', { enum: [...DELIVERY_ERRORS] })),
  deliveredAt: nullable(timestamp('When a 2xx answered')),
  recentAttempts: {
    type: 'array',
    maxItems: MAX_RECENT_ATTEMPTS,
    description: 'The last attempts, oldest first',
    items: closed('WebhookDeliveryAttempt', 'One attempt: when, how long, and what came back', attempt),
  },
  createdAt: timestamp('When it was recorded'),
  updatedAt: timestamp('When it last changed'),
} satisfies Members<DeliveryRepresentation>;

export const webhookSchemas: Record<string, JsonSchema> = {
  Webhook: closed('Webhook', 'A webhook subscription; never its signing secret', webhook),
  WebhookWithSecret: closed(
    'WebhookWithSecret',
    'A subscription as created or rotated: with its signing secret, shown in this answer only',
    {
      ...webhook,
      secret: string('The signing secret: whsec_ and base64 (Standard Webhooks). Keep it: it is not shown again', {
        pattern: '^whsec_[A-Za-z0-9+/]+={0,2}$',
      }),
    },
  ),
  WebhookList: closed('WebhookList', 'The subscriptions the API key reaches, oldest first', {
    items: { type: 'array', items: ref('Webhook') },
  }),
  WebhookDelivery: closed('WebhookDelivery', "One event's delivery to one subscription", delivery),
  WebhookDeliveryPage: closed('WebhookDeliveryPage', 'Deliveries, newest first', {
    items: { type: 'array', items: ref('WebhookDelivery') },
    pageSize: { type: 'integer', minimum: 1, maximum: 100 },
    nextCursor: nullable(uuid('Send it back as cursor for the next (older) page')),
  }),
};
