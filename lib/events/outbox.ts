import type { OutboxItem } from '#lib/entities/outbox';
import type { ServiceEvent } from '#lib/entities/service-event';

/**
 * Port: the transactional outbox (docs/events.md). An event is written as an outbox item by the very
 * transaction that makes the change it tells of (the stores' adapters add it: dynamo-outbox-store.ts),
 * so a change is never without its event, nor an event without its change. On AWS the table's stream
 * carries new outbox items to EventBridge; locally the relay (relay.ts) reads the pending ones here.
 */

/** Outbox items are kept 7 days: long enough to look into a delivery, short enough to carry no history. */
export const OUTBOX_RETENTION_SECONDS = 7 * 24 * 60 * 60;

/** The item that holds `event` until it is relayed. */
export const outboxItemOf = (event: ServiceEvent): OutboxItem => ({
  clientId: event.clientId,
  eventId: event.id,
  type: event.type,
  occurredAt: event.occurredAt,
  event,
  expiration: Math.floor(Date.parse(event.occurredAt) / 1000) + OUTBOX_RETENTION_SECONDS,
  version: 1,
  createdAt: event.occurredAt,
  updatedAt: event.occurredAt,
});

export interface OutboxStore {
  /** Events not yet relayed, oldest first, at most `limit` (every client's: the relay serves them all). */
  pending(limit: number): Promise<ServiceEvent[]>;
  /** Takes `event` off the pending ones; nothing happens for one already relayed or gone (expired). */
  markRelayed(event: ServiceEvent, at: string): Promise<void>;
  /** Puts a relayed `event` back among the pending ones (a local replay); false when its item is gone (expired). */
  markPending(event: ServiceEvent, at: string): Promise<boolean>;
  /** A client's events that occurred at or after `since` (ISO 8601, UTC), oldest first, a page at a time. */
  since(clientId: string, since: string): AsyncIterable<ServiceEvent[]>;
}
