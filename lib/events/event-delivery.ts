import type { ServiceEvent } from '#lib/entities/service-event';

/**
 * The seam between the outbox and whoever delivers events (docs/events.md): the local relay hands
 * each outbox event to one; on AWS EventBridge does the same job. Throws when the event could not be
 * handed over, so the relay keeps it and tries again (at-least-once); a subscriber's own failure is
 * the delivery's to retry, not a reason to throw.
 */
export interface EventDelivery {
  deliver(event: ServiceEvent): Promise<void>;
}
