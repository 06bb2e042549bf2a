import { observed } from '#lib/observability/invocation';
import { keepPayerSubscriptions } from '#lib/payer-subscriptions/subscription-service';

/**
 * KeepPayerSubscriptions (every 5 minutes; locally a timer): renews the connections' PAS subscriptions
 * before their end, asks `$status` of one whose heartbeat is missing, and makes one again that the payer
 * reports `error` or `off` (docs/payer-api.md, "Subscriptions"). Ids and counts only.
 */
export const handler = observed('KeepPayerSubscriptions', async () => ({ kept: await keepPayerSubscriptions() }));
