import { log } from '#lib/observability/logger';
import type { ServiceEvent } from './service-event.ts';

/**
 * The seam between the outbox and whoever delivers events (docs/events.md): the local relay hands
 * each outbox event to one; on AWS EventBridge does the same job. Throws when the event could not be
 * handed over, so the relay keeps it and tries again (at-least-once); a subscriber's own failure is
 * the delivery's to retry, not a reason to throw.
 */
export interface EventDelivery {
  deliver(event: ServiceEvent): Promise<void>;
}

/** Until webhook delivery is wired in: each event's id and type in the log (never its data). */
export const loggingDelivery: EventDelivery = {
  deliver: async (event) => {
    log.info('Event relayed', { eventId: event.id, eventType: event.type, clientId: event.clientId });
  },
};
