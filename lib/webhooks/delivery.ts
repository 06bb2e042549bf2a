import { Webhook } from 'standardwebhooks';
import { retryOnConflict, VersionConflict } from '#lib/concurrency';
import type { ServiceEvent } from '#lib/entities/service-event';
import type { DeliveryRef, DeliveryStatus, StoredDelivery, StoredWebhook } from '#lib/entities/webhook';
import { log } from '#lib/observability/logger';
import { recordWebhookStatus } from '#lib/observability/metrics';
import { afterAttempt, endedUnsent, healthAfter, heldForAttempt, isDue, newDelivery } from './delivery-records.ts';
import type { SigningSecretOpener } from './signing-secrets.ts';
import type { Transport } from './transport.ts';
import type { WebhookStore } from './webhook-store.ts';

/**
 * Delivery (docs/webhooks.md, "Delivery"): an event fans out to its client's subscriptions, one
 * recorded delivery each, and each is attempted, signed with the Standard Webhooks scheme by the
 * `standardwebhooks` package. The same three calls serve every host: the local stack's relay and timer
 * call them in-process; on AWS a queue-driven function calls them per message (docs/webhooks.md, "On AWS").
 */
export interface DeliveryDependencies {
  store: WebhookStore;
  openSecret: SigningSecretOpener;
  transport: Transport;
  now?: () => Date;
  random?: () => number;
  /** Attempts `deliverDue` runs at once. */
  concurrency?: number;
}

export interface AttemptOutcome {
  /** `absent`: no such delivery (expired, or its subscription's partition is gone). */
  status: DeliveryStatus | 'absent';
  /** Whether this call sent it (false: not due, or another process holds it). */
  attempted: boolean;
  /** Pending: when it is due next. A queue consumer makes its message visible again then. */
  nextAttemptAt: string | null;
}

const USER_AGENT = 'service-review-webhooks/1';
/** Due deliveries one `deliverDue` call takes on. */
const DUE_BATCH = 25;

/** Whether `webhook` receives `event`: its own test, or a type it lists of an organization it may see. */
const receives = (webhook: StoredWebhook, event: ServiceEvent): boolean => {
  if (event.type === 'webhook.test') {
    return (event as ServiceEvent<'webhook.test'>).data.webhookId === webhook.webhookId;
  }
  if (webhook.status === 'disabled' || !(webhook.events as string[]).includes(event.type)) return false;
  return (
    webhook.organizationId === null ||
    event.organizationId === undefined ||
    event.organizationId === webhook.organizationId
  );
};

const outcomeOf = (delivery: StoredDelivery | undefined, attempted: boolean): AttemptOutcome => ({
  status: delivery?.status ?? 'absent',
  attempted,
  nextAttemptAt: delivery?.status === 'pending' ? delivery.scheduledAt : null,
});

export const webhookDelivery = ({
  store,
  openSecret,
  transport,
  now = () => new Date(),
  random = Math.random,
  concurrency = 4,
}: DeliveryDependencies) => {
  /** `v1,<base64>` per secret that signs now: the current one, and the previous one during its grace period. */
  const signatureOf = async (webhook: StoredWebhook, delivery: StoredDelivery, at: Date) => {
    const sealed = [webhook.secret];
    if (
      webhook.previousSecret &&
      webhook.previousSecretExpiresAt &&
      webhook.previousSecretExpiresAt > at.toISOString()
    ) {
      sealed.push(webhook.previousSecret);
    }
    const signatures = [];
    for (const secret of sealed) {
      signatures.push(new Webhook(await openSecret(webhook, secret)).sign(delivery.eventId, at, delivery.payload));
    }
    return signatures.join(' ');
  };

  /** The subscription's health after a delivery ended (retried: a concurrent delivery may update it too). */
  const recordHealth = (ref: Pick<StoredWebhook, 'clientId' | 'webhookId'>, ended: 'delivered' | 'failed') =>
    retryOnConflict(
      async () => {
        const current = await store.get(ref.clientId, ref.webhookId);
        const next = current && healthAfter(current, ended, now());
        if (!next) return;
        await store.update(next);
        // A metric per change (the alarms on failing and disabled subscriptions), and a line to find which.
        recordWebhookStatus(next.status);
        log.info('Webhook subscription status changed', {
          clientId: next.clientId,
          webhookId: next.webhookId,
          status: next.status,
        });
      },
      { attempts: 5 },
    );

  const send = async (webhook: StoredWebhook, held: StoredDelivery): Promise<StoredDelivery> => {
    const at = now();
    const headers = {
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      'webhook-id': held.eventId,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': await signatureOf(webhook, held, at),
    };
    const result = await transport(webhook.url, headers, held.payload);
    const attempt = { at: at.toISOString(), ...result };
    log.info('Webhook delivery attempted', {
      clientId: held.clientId,
      webhookId: held.webhookId,
      deliveryId: held.deliveryId,
      eventType: held.eventType,
      attempt: held.attempts + 1,
      responseStatus: result.responseStatus ?? undefined,
      reason: result.error ?? undefined,
      durationMs: result.durationMs,
    });
    return afterAttempt(held, attempt, now(), random);
  };

  /**
   * One attempt of a delivery, if it is due: held first (a conditional write, so two processes never
   * send it at once; one that crashes leaves it due again after ATTEMPT_HOLD_MS), sent, then recorded.
   * `known` is what the caller has just read or written (deliverEvent), so it is not read again.
   */
  const attemptOf = async (
    ref: DeliveryRef,
    delivery: StoredDelivery | undefined,
    known?: StoredWebhook,
  ): Promise<AttemptOutcome> => {
    if (!delivery || !isDue(delivery, now())) return outcomeOf(delivery, false);
    const held = heldForAttempt(delivery, now());
    try {
      await store.updateDelivery(held);
    } catch (error) {
      if (error instanceof VersionConflict) return outcomeOf(await store.getDelivery(ref), false);
      throw error;
    }
    const webhook = known ?? (await store.get(ref.clientId, ref.webhookId));
    let ended: StoredDelivery;
    if (!webhook) ended = endedUnsent(held, 'subscription_deleted', now());
    else if (webhook.status === 'disabled' && held.trigger === 'event') {
      ended = endedUnsent(held, 'subscription_disabled', now());
    } else ended = await send(webhook, held);
    await store.updateDelivery(ended);
    // Read again and written only when what this attempt knows of the subscription says its health changes.
    if (webhook && ended.status !== 'pending' && healthAfter(webhook, ended.status, now())) {
      await recordHealth(webhook, ended.status);
    }
    return outcomeOf(ended, true);
  };

  const attempt = async (ref: DeliveryRef) => attemptOf(ref, await store.getDelivery(ref));

  /** Records one delivery per receiving subscription (an event handed over again records none twice). */
  const recordWith = async (event: ServiceEvent) => {
    const webhooks = (await store.list(event.clientId)).filter((webhook) => receives(webhook, event));
    const at = now();
    const recorded: Array<{ delivery: StoredDelivery; webhook: StoredWebhook }> = [];
    for (const webhook of webhooks) {
      const delivery = newDelivery(event, webhook, 'event', at);
      if (await store.createDelivery(delivery)) recorded.push({ delivery, webhook });
    }
    return recorded;
  };

  const refOf = ({ clientId, webhookId, deliveryId }: DeliveryRef): DeliveryRef => ({
    clientId,
    webhookId,
    deliveryId,
  });

  /** Runs `work` on each, `concurrency` at a time; the outcomes in order. */
  const inTurns = async <T>(items: T[], work: (item: T) => Promise<AttemptOutcome>) => {
    const outcomes: AttemptOutcome[] = [];
    for (let i = 0; i < items.length; i += concurrency) {
      outcomes.push(...(await Promise.all(items.slice(i, i + concurrency).map(work))));
    }
    return outcomes;
  };

  return {
    /** Records the event's deliveries without sending them (for a caller that queues each one). */
    record: async (event: ServiceEvent) => (await recordWith(event)).map(({ delivery }) => refOf(delivery)),
    attempt,
    /**
     * The seam the relay calls (lib/events): fan out, record, and attempt each delivery once now. Per
     * receiving subscription: three writes (record, hold, result) besides the one Query of the client's
     * subscriptions, and the secret opened once (twice during a rotation).
     */
    deliverEvent: async (event: ServiceEvent) => {
      const recorded = await recordWith(event);
      await inTurns(recorded, ({ delivery, webhook }) => attemptOf(refOf(delivery), delivery, webhook));
      return recorded.map(({ delivery }) => refOf(delivery));
    },
    /** The retry timer's call: attempts the deliveries due now (at most DUE_BATCH); how many it sent. */
    deliverDue: async (limit = DUE_BATCH) => {
      const outcomes = await inTurns(await store.dueDeliveries(now().toISOString(), limit), attempt);
      return outcomes.filter((outcome) => outcome.attempted).length;
    },
  };
};

export type WebhookDelivery = ReturnType<typeof webhookDelivery>;
