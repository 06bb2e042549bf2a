import { retryOnConflict, VersionConflict } from '#lib/concurrency';
import type { StoredDelivery, StoredWebhook, SubscribableEventType } from '#lib/entities/webhook';
import { Conflict, NotFound } from '#lib/errors';
import { newEvent } from '#lib/events/events';
import { uuidv7 } from '#lib/ids';
import { log } from '#lib/observability/logger';
import type { Scope } from '#lib/tenancy/scope';
import { newDelivery, redelivered } from './delivery-records.ts';
import { newSigningSecret, type SigningSecretSealer } from './signing-secrets.ts';
import { checkWebhookUrl, type UrlPolicy } from './target-address.ts';
import type { WebhookStore } from './webhook-store.ts';

/**
 * Webhook subscriptions, independent of HTTP and storage (docs/webhooks.md):
 * - Scope (#lib/tenancy/scope): a subscription made with an organization-restricted key is that
 *   organization's; such a key sees and changes its organization's subscriptions only, an unrestricted
 *   key all of its client's. Anything else is a 404, as if it did not exist.
 * - The signing secret is shown once, in the answer that made it (create, rotate-secret), and stored
 *   sealed; it is never logged nor returned again.
 * - A test and a redelivery are recorded as due now; the delivery itself is the worker's (delivery.ts).
 */
export const MAX_WEBHOOKS_PER_CLIENT = 20;
/** After a rotation the previous secret keeps signing beside the new one this long (Standard Webhooks allows several signatures). */
const PREVIOUS_SECRET_GRACE_MS = 24 * 60 * 60 * 1000;
const DEFAULT_DELIVERIES_PAGE = 25;

export interface WebhookInput {
  url: string;
  events: SubscribableEventType[];
  description?: string;
}

export interface DeliveriesPageRequest {
  pageSize?: number;
  cursor?: string;
}

/** What clients read of a subscription: never its secret. */
export const webhookRepresentationOf = (webhook: StoredWebhook) => ({
  id: webhook.webhookId,
  url: webhook.url,
  events: webhook.events,
  description: webhook.description,
  status: webhook.status,
  organizationId: webhook.organizationId,
  failingSince: webhook.failingSince,
  secretCreatedAt: webhook.secretCreatedAt,
  previousSecretExpiresAt: webhook.previousSecretExpiresAt,
  createdAt: webhook.createdAt,
  updatedAt: webhook.updatedAt,
});

export interface WebhookDependencies {
  store: WebhookStore;
  policy: UrlPolicy;
  /** Seals new secrets; only create and rotate-secret need it (service-with-secrets.ts). */
  sealer?: SigningSecretSealer;
  now?: () => Date;
  maxPerClient?: number;
}

const noSealer: SigningSecretSealer = () => {
  throw new Error('This webhook service was built without a sealer (see service-with-secrets.ts)');
};

/** Whether the scope reaches a subscription: an organization's key, its organization's only. */
const visibleTo = (scope: Scope, webhook: StoredWebhook) =>
  scope.organizationId === undefined || webhook.organizationId === scope.organizationId;

const ids = (webhook: StoredWebhook) => ({ clientId: webhook.clientId, webhookId: webhook.webhookId });

export const webhookService = ({
  store,
  policy,
  sealer = noSealer,
  now = () => new Date(),
  maxPerClient = MAX_WEBHOOKS_PER_CLIENT,
}: WebhookDependencies) => {
  const load = async (scope: Scope, webhookId: string) => {
    const webhook = await store.get(scope.clientId, webhookId);
    if (!webhook || !visibleTo(scope, webhook)) throw new NotFound(`Webhook ${webhookId}`);
    return webhook;
  };

  const loadDelivery = async (scope: Scope, webhookId: string, deliveryId: string) => {
    await load(scope, webhookId);
    const delivery = await store.getDelivery({ clientId: scope.clientId, webhookId, deliveryId });
    if (!delivery) throw new NotFound(`Delivery ${deliveryId}`);
    return delivery;
  };

  return {
    create: async (scope: Scope, input: WebhookInput) => {
      const url = checkWebhookUrl(input.url, policy).href;
      const at = now();
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
        secret: await sealer({ clientId: scope.clientId, webhookId }, secret),
        previousSecret: null,
        previousSecretExpiresAt: null,
        secretCreatedAt: at.toISOString(),
        version: 1,
        createdAt: at.toISOString(),
        updatedAt: at.toISOString(),
      };
      await store.create(webhook, maxPerClient);
      log.info('Webhook created', { ...ids(webhook), organizationId: webhook.organizationId ?? undefined });
      return { webhook, secret };
    },

    list: async (scope: Scope) => (await store.list(scope.clientId)).filter((webhook) => visibleTo(scope, webhook)),

    get: load,

    remove: (scope: Scope, webhookId: string) =>
      retryOnConflict(
        async () => {
          const webhook = await load(scope, webhookId);
          await store.remove(webhook);
          log.info('Webhook deleted', ids(webhook));
        },
        { attempts: 3 },
      ),

    /** A new secret; the one it replaces signs beside it for PREVIOUS_SECRET_GRACE_MS (an older one stops at once). */
    rotateSecret: async (scope: Scope, webhookId: string) => {
      const secret = newSigningSecret();
      const sealed = await sealer({ clientId: scope.clientId, webhookId }, secret);
      const webhook = await retryOnConflict(
        async () => {
          const current = await load(scope, webhookId);
          const at = now();
          const next: StoredWebhook = {
            ...current,
            secret: sealed,
            previousSecret: current.secret,
            previousSecretExpiresAt: new Date(at.getTime() + PREVIOUS_SECRET_GRACE_MS).toISOString(),
            secretCreatedAt: at.toISOString(),
            version: current.version + 1,
            updatedAt: at.toISOString(),
          };
          await store.update(next);
          return next;
        },
        { attempts: 3 },
      );
      log.info('Webhook secret rotated', ids(webhook));
      return { webhook, secret };
    },

    /** A `webhook.test` event for this subscription alone, recorded as due now (a disabled one included). */
    sendTest: async (scope: Scope, webhookId: string): Promise<StoredDelivery> => {
      const webhook = await load(scope, webhookId);
      const at = now();
      const event = newEvent(
        'webhook.test',
        webhook.clientId,
        at.toISOString(),
        { webhookId },
        webhook.organizationId ?? undefined,
      );
      const delivery = newDelivery(event, webhook, 'test', at);
      await store.createDelivery(delivery);
      return delivery;
    },

    deliveries: async (scope: Scope, webhookId: string, request: DeliveriesPageRequest) => {
      await load(scope, webhookId);
      const limit = request.pageSize ?? DEFAULT_DELIVERIES_PAGE;
      const page = await store.listDeliveries(scope.clientId, webhookId, {
        limit,
        ...(request.cursor ? { before: request.cursor } : {}),
      });
      return { items: page.items, pageSize: limit, nextCursor: page.next };
    },

    getDelivery: loadDelivery,

    /** A delivered or failed delivery goes out again, due now; a pending one is already going (409). */
    redeliver: async (scope: Scope, webhookId: string, deliveryId: string): Promise<StoredDelivery> => {
      const delivery = await loadDelivery(scope, webhookId, deliveryId);
      if (delivery.status === 'pending') {
        throw new Conflict('The delivery is pending already: its next attempt is scheduled.', {
          reason: 'delivery_pending',
        });
      }
      const next = redelivered(delivery, now());
      try {
        await store.updateDelivery(next);
      } catch (error) {
        if (error instanceof VersionConflict) throw new Conflict('The delivery changed meanwhile; retry.');
        throw error;
      }
      log.info('Webhook delivery scheduled again', { clientId: scope.clientId, webhookId, deliveryId });
      return next;
    },
  };
};
