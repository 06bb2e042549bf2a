import type { Scope } from '#lib/tenancy/scope';
import { type DeliveriesPageRequest, deliveries, getDelivery, redeliver, sendTest } from './subscription-deliveries.ts';
import { contextOf, load, type WebhookDependencies } from './webhook-context.ts';
import { create, list, remove, rotateSecret, type WebhookInput } from './webhook-subscriptions.ts';

/**
 * Webhook subscriptions, independent of HTTP and storage (docs/webhooks.md), each in the module of its
 * job: subscriptions and their secrets (webhook-subscriptions.ts), their deliveries as the client sees
 * them (subscription-deliveries.ts).
 * - Scope (#lib/tenancy/scope): a subscription made with an organization-restricted key is that
 *   organization's; such a key sees and changes its organization's subscriptions only, an unrestricted
 *   key all of its client's. Anything else is a 404, as if it did not exist (webhook-context.ts).
 */
export const webhookService = (deps: WebhookDependencies) => {
  const ctx = contextOf(deps);
  return {
    create: (scope: Scope, input: WebhookInput) => create(ctx, scope, input),
    list: (scope: Scope) => list(ctx, scope),
    get: (scope: Scope, webhookId: string) => load(ctx, scope, webhookId),
    remove: (scope: Scope, webhookId: string) => remove(ctx, scope, webhookId),
    rotateSecret: (scope: Scope, webhookId: string) => rotateSecret(ctx, scope, webhookId),
    sendTest: (scope: Scope, webhookId: string) => sendTest(ctx, scope, webhookId),
    deliveries: (scope: Scope, webhookId: string, request: DeliveriesPageRequest) =>
      deliveries(ctx, scope, webhookId, request),
    getDelivery: (scope: Scope, webhookId: string, deliveryId: string) =>
      getDelivery(ctx, scope, webhookId, deliveryId),
    redeliver: (scope: Scope, webhookId: string, deliveryId: string) => redeliver(ctx, scope, webhookId, deliveryId),
  };
};
