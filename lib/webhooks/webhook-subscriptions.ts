import { retryOnConflict } from '#lib/concurrency';
import type { StoredWebhook, SubscribableEventType } from '#lib/entities/webhook';
import { uuidv7 } from '#lib/ids';
import { log } from '#lib/observability/logger';
import type { Scope } from '#lib/tenancy/scope';
import { newSigningSecret } from './signing-secrets.ts';
import { checkWebhookUrl } from './target-address.ts';
import { ids, load, visibleTo, type WebhookContext } from './webhook-context.ts';

/*
 * A client's subscriptions: created, listed, deleted, their secret rotated. The signing secret is shown
 * once, in the answer that made it (create, rotate-secret), and stored sealed; it is never logged nor
 * returned again.
 */

/** After a rotation the previous secret keeps signing beside the new one this long (Standard Webhooks allows several signatures). */
const PREVIOUS_SECRET_GRACE_MS = 24 * 60 * 60 * 1000;

export interface WebhookInput {
  url: string;
  events: SubscribableEventType[];
  description?: string;
}

export async function create(ctx: WebhookContext, scope: Scope, input: WebhookInput) {
  const url = checkWebhookUrl(input.url, ctx.policy).href;
  const at = ctx.now();
  const webhookId = uuidv7(at.getTime());
  const secret = newSigningSecret();
  const webhook: StoredWebhook = {
    clientId: scope.clientId,
    webhookId,
    organizationId: scope.organizationId ?? null,
    url,
    events: [...new Set(input.events)],
    description: input.description ?? null,
    status: 'active',
    failingSince: null,
    secret: await ctx.sealer({ clientId: scope.clientId, webhookId }, secret),
    previousSecret: null,
    previousSecretExpiresAt: null,
    secretCreatedAt: at.toISOString(),
    version: 1,
    createdAt: at.toISOString(),
    updatedAt: at.toISOString(),
  };
  await ctx.store.create(webhook, ctx.maxPerClient);
  log.info('Webhook created', { ...ids(webhook), organizationId: webhook.organizationId ?? undefined });
  return { webhook, secret };
}

export async function list(ctx: WebhookContext, scope: Scope): Promise<StoredWebhook[]> {
  return (await ctx.store.list(scope.clientId)).filter((webhook) => visibleTo(scope, webhook));
}

export function remove(ctx: WebhookContext, scope: Scope, webhookId: string): Promise<void> {
  return retryOnConflict(
    async () => {
      const webhook = await load(ctx, scope, webhookId);
      await ctx.store.remove(webhook);
      log.info('Webhook deleted', ids(webhook));
    },
    { attempts: 3 },
  );
}

/** A new secret; the one it replaces signs beside it for PREVIOUS_SECRET_GRACE_MS (an older one stops at once). */
export async function rotateSecret(ctx: WebhookContext, scope: Scope, webhookId: string) {
  const secret = newSigningSecret();
  const sealed = await ctx.sealer({ clientId: scope.clientId, webhookId }, secret);
  const webhook = await retryOnConflict(
    async () => {
      const current = await load(ctx, scope, webhookId);
      const at = ctx.now();
      const next: StoredWebhook = {
        ...current,
        secret: sealed,
        previousSecret: current.secret,
        previousSecretExpiresAt: new Date(at.getTime() + PREVIOUS_SECRET_GRACE_MS).toISOString(),
        secretCreatedAt: at.toISOString(),
        version: current.version + 1,
        updatedAt: at.toISOString(),
      };
      await ctx.store.update(next);
      return next;
    },
    { attempts: 3 },
  );
  log.info('Webhook secret rotated', ids(webhook));
  return { webhook, secret };
}
