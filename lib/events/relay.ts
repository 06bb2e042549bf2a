import { log } from '#lib/observability/logger';
import type { EventDelivery } from './event-delivery.ts';
import type { OutboxStore } from './outbox.ts';

/*
 * The local relay (docs/events.md): where the table has no stream (dynalite), it does what the stream
 * and EventBridge Pipes do on AWS. It reads the pending outbox items, oldest first, hands each event
 * to the delivery seam and then marks it relayed: at-least-once, since an event whose hand-off fails,
 * or whose mark is lost with the process, is handed over again on a later poll.
 */

export interface RelayOptions {
  outbox: OutboxStore;
  delivery: EventDelivery;
  /** The pause between two polls that found nothing more to do (default 250 ms). */
  pollIntervalMs?: number;
  /** Events read per poll (default 25). */
  batchSize?: number;
  now?: () => Date;
}

export interface OutboxRelay {
  /** Stops polling; resolves once the poll under way, if any, has finished. */
  close(): Promise<void>;
}

const DEFAULT_RELAY_INTERVAL_MS = 250;
const DEFAULT_BATCH_SIZE = 25;

export const startOutboxRelay = ({
  outbox,
  delivery,
  pollIntervalMs = DEFAULT_RELAY_INTERVAL_MS,
  batchSize = DEFAULT_BATCH_SIZE,
  now = () => new Date(),
}: RelayOptions): OutboxRelay => {
  let closed = false;
  let timer: NodeJS.Timeout | undefined;
  // The poll under way, which close waits for.
  let chain: Promise<unknown> = Promise.resolve();
  const serialized = <T>(work: () => Promise<T>): Promise<T> => {
    const next = chain.then(work, work);
    chain = next.catch(() => undefined);
    return next;
  };

  const relayOnce = async () => {
    let handed = 0;
    for (const event of await outbox.pending(batchSize)) {
      try {
        await delivery.deliver(event);
      } catch (error) {
        // Kept pending: the next poll hands it over again.
        log.warn('Event not relayed; it stays pending', {
          eventId: event.id,
          eventType: event.type,
          errorName: (error as Error | undefined)?.name,
        });
        continue;
      }
      await outbox.markRelayed(event, now().toISOString());
      // Ids only: the event's data (a request's id, a decision) stays out of the log.
      log.info('Event relayed', { eventId: event.id, eventType: event.type, clientId: event.clientId });
      handed++;
    }
    return handed;
  };

  const tick = async () => {
    const handed = await serialized(relayOnce).catch((error: unknown) => {
      log.error('Outbox relay poll failed', { errorName: (error as Error | undefined)?.name });
      return 0;
    });
    // A full batch may have more behind it: poll again at once rather than after the pause.
    if (!closed) timer = setTimeout(tick, handed >= batchSize ? 0 : pollIntervalMs);
  };

  timer = setTimeout(tick, 0);
  return {
    close: async () => {
      closed = true;
      clearTimeout(timer);
      await chain;
    },
  };
};
