import type { StoredWebhook } from '#lib/entities/webhook';
import { NotFound } from '#lib/errors';
import type { Scope } from '#lib/tenancy/scope';
import type { SigningSecretSealer } from './signing-secrets.ts';
import type { UrlPolicy } from './target-address.ts';
import type { WebhookStore } from './webhook-store.ts';

export const MAX_WEBHOOKS_PER_CLIENT = 20;

export interface WebhookDependencies {
  store: WebhookStore;
  policy: UrlPolicy;
  /** Seals new secrets; only create and rotate-secret need it (service-with-secrets.ts). */
  sealer?: SigningSecretSealer;
  now?: () => Date;
  maxPerClient?: number;
}

/** The dependencies with their defaults filled in: what every subscription use case is given first. */
export type WebhookContext = Required<WebhookDependencies>;

const noSealer: SigningSecretSealer = () => {
  throw new Error('This webhook service was built without a sealer (see service-with-secrets.ts)');
};

export function contextOf(deps: WebhookDependencies): WebhookContext {
  return {
    ...deps,
    sealer: deps.sealer ?? noSealer,
    now: deps.now ?? (() => new Date()),
    maxPerClient: deps.maxPerClient ?? MAX_WEBHOOKS_PER_CLIENT,
  };
}

/** Whether the scope reaches a subscription: an organization's key, its organization's only. */
export const visibleTo = (scope: Scope, webhook: StoredWebhook) =>
  scope.organizationId === undefined || webhook.organizationId === scope.organizationId;

export const ids = (webhook: StoredWebhook) => ({ clientId: webhook.clientId, webhookId: webhook.webhookId });

/** A subscription the scope reaches; any other is not found, as if it did not exist. */
export async function load(ctx: WebhookContext, scope: Scope, webhookId: string): Promise<StoredWebhook> {
  const webhook = await ctx.store.get(scope.clientId, webhookId);
  if (!webhook || !visibleTo(scope, webhook)) throw new NotFound(`Webhook ${webhookId}`);
  return webhook;
}
