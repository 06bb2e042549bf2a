import { EVENT_TYPES } from '#lib/entities/service-event';
import { EVENT_DOCS } from '#lib/events/event-schemas';

/**
 * The document's `webhooks` (OpenAPI 3.1): what the service POSTs to a client's subscribed URL, one
 * operation per event type, the event's payload (lib/events/event-schemas.ts) as the request body,
 * signed with the Standard Webhooks headers (docs/events.md).
 */
const signatureHeader = (name: string, description: string) => ({
  name,
  in: 'header',
  required: true,
  description,
  schema: { type: 'string' },
});

const SIGNATURE_HEADERS = [
  signatureHeader('webhook-id', "The event's id: the same on every delivery of it (de-duplicate on it)"),
  signatureHeader('webhook-timestamp', 'When this delivery was signed, in Unix seconds'),
  signatureHeader(
    'webhook-signature',
    "`v1,<base64 HMAC-SHA256 of id.timestamp.body>` under the subscription's secret",
  ),
];

const operationIdOf = (type: string) =>
  `on${type
    .split(/[._]/)
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('')}`;

export const webhooksOf = () =>
  Object.fromEntries(
    EVENT_TYPES.map((type) => [
      type,
      {
        post: {
          operationId: operationIdOf(type),
          summary: EVENT_DOCS[type].summary,
          description: `${EVENT_DOCS[type].description} Delivered to each subscription of the client's for \`${type}\`.`,
          tags: ['Events'],
          // The receiver authenticates the call by its signature, not by a key of ours.
          security: [],
          parameters: SIGNATURE_HEADERS,
          requestBody: {
            required: true,
            content: { 'application/json': { schema: { $ref: `#/components/schemas/${EVENT_DOCS[type].schema}` } } },
          },
          responses: {
            '200': { description: 'Received: any 2xx acknowledges the delivery; anything else is retried' },
          },
        },
      },
    ]),
  );
