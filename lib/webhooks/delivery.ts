import type { ServiceEvent } from '#lib/entities/service-event';
import type { DeliveryRef } from '#lib/entities/webhook';
import { type AttemptOutcome, attempt, attemptOf } from './delivery-attempts.ts';
import { contextOf, type DeliveryContext, type DeliveryDependencies } from './delivery-context.ts';
import { recordDeliveries, refOf } from './delivery-fan-out.ts';

/** Due deliveries one `deliverDue` call takes on. */
const DUE_BATCH = 25;

/** Runs `work` on each, `concurrency` at a time; the outcomes in order. */
async function inTurns<T>(ctx: DeliveryContext, items: T[], work: (item: T) => Promise<AttemptOutcome>) {
  const outcomes: AttemptOutcome[] = [];
  for (let i = 0; i < items.length; i += ctx.concurrency) {
    outcomes.push(...(await Promise.all(items.slice(i, i + ctx.concurrency).map(work))));
  }
  return outcomes;
}

/**
 * The seam the relay calls (lib/events): fan out, record, and attempt each delivery once now. Per
 * receiving subscription: three writes (record, hold, result) besides the one Query of the client's
 * subscriptions, and the secret opened once (twice during a rotation).
 */
async function deliverEvent(ctx: DeliveryContext, event: ServiceEvent): Promise<DeliveryRef[]> {
  const recorded = await recordDeliveries(ctx, event);
  await inTurns(ctx, recorded, ({ delivery, webhook }) => attemptOf(ctx, refOf(delivery), delivery, webhook));
  return recorded.map(({ delivery }) => refOf(delivery));
}

/** The retry timer's call: attempts the deliveries due now (at most DUE_BATCH); how many it sent. */
async function deliverDue(ctx: DeliveryContext, limit = DUE_BATCH): Promise<number> {
  const due = await ctx.store.dueDeliveries(ctx.now().toISOString(), limit);
  const outcomes = await inTurns(ctx, due, (ref) => attempt(ctx, ref));
  return outcomes.filter((outcome) => outcome.attempted).length;
}

/**
 * Delivery (docs/webhooks.md, "Delivery"): an event fans out to its client's subscriptions, one
 * recorded delivery each (delivery-fan-out.ts), and each is attempted (delivery-attempts.ts), signed
 * with the Standard Webhooks scheme (delivery-signing.ts). The same three calls serve every host: the
 * local stack's relay and timer call them in-process; on AWS a queue-driven function calls them per
 * message (docs/webhooks.md, "On AWS").
 */
export const webhookDelivery = (deps: DeliveryDependencies) => {
  const ctx = contextOf(deps);
  return {
    /** Records the event's deliveries without sending them (for a caller that queues each one). */
    record: async (event: ServiceEvent) => (await recordDeliveries(ctx, event)).map(({ delivery }) => refOf(delivery)),
    attempt: (ref: DeliveryRef) => attempt(ctx, ref),
    deliverEvent: (event: ServiceEvent) => deliverEvent(ctx, event),
    deliverDue: (limit?: number) => deliverDue(ctx, limit),
  };
};

export type WebhookDelivery = ReturnType<typeof webhookDelivery>;
