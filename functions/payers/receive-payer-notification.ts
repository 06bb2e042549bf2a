import { endpoint } from '#lib/http/endpoint';
import { header } from '#lib/http/path';
import { badRequest } from '#lib/http/problem';
import { json } from '#lib/http/response';
import { NOTIFICATION_MAX_BYTES, SUBSCRIPTION_ID_PATTERN } from '#lib/payer-subscriptions/notification-limits';
import { payerNotifications } from '#lib/payer-subscriptions/notification-service';

const subscriptionIdPattern = new RegExp(SUBSCRIPTION_ID_PATTERN);

/**
 * POST /api/external/v1.1/Payers/notifications/{subscriptionId}: a payer's notification on our PAS subscription
 * (R4 Subscriptions Backport, rest-hook), public: the payer authenticates with the subscription's channel secret
 * (`Authorization: Bearer`, checked in constant time). Handshake and heartbeat → 200; an event → 202 once the
 * `$inquire` of the claims it names has started. Every refusal (404, 401, 400, 409, 422) stores nothing.
 */
export const handler = endpoint<unknown>(
  async (event) => {
    const subscriptionId = event.pathParameters?.subscriptionId;
    if (!subscriptionId || !subscriptionIdPattern.test(subscriptionId)) {
      throw badRequest('subscriptionId must be 16 to 64 characters: letters, digits, - and _.', {
        parameter: 'subscriptionId',
      });
    }
    const authorization = header(event, 'authorization');
    const { status, type } = await payerNotifications.receive({ subscriptionId, authorization, body: event.body });
    return json(status, { received: type });
  },
  { json: { mediaTypes: ['application/fhir+json'], maxBytes: NOTIFICATION_MAX_BYTES } },
);
