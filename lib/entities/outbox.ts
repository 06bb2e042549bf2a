import { shardOf, tableShards } from '#lib/table-shards';
import { attr, defineEntity } from './define-entity.ts';
import type { EventType, ServiceEvent } from './service-event.ts';

/** An outbox item, as outboxEntity stores it (the port: lib/events/outbox.ts). */
export interface OutboxItem {
  clientId: string;
  eventId: string;
  type: EventType;
  occurredAt: string;
  /** The event as written: ids, codes and statuses only. */
  event: ServiceEvent;
  /** Epoch seconds: DynamoDB's TTL deletes the item some time after (OUTBOX_RETENTION_SECONDS). */
  expiration: number;
  /** When the local relay handed it to delivery; pending until then. */
  relayedAt?: string;
  version: number;
  createdAt: string;
  updatedAt: string;
}

/**
 * An outbox item (docs/events.md): the event a change of the same transaction tells of, keyed under its
 * client. Each event is its own partition (writes spread, whatever a client's volume). Pending items are
 * in gsi1, oldest first, spread over the table's shards (`OUTBOX#PENDING#<shard>`, by client and event):
 * the local relay's Queries (no Scan), a sparse index its mark empties (REMOVE gsi1pk, gsi1sk). On AWS
 * the stream relays them; they leave the index by TTL.
 */
export const outboxEntity = defineEntity<OutboxItem>()({
  name: 'OutboxEvent',
  keys: {
    pk: 'CLIENT#<clientId>#EVENT#<eventId>',
    sk: 'OUTBOX',
    gsi1pk: 'OUTBOX#PENDING#<shard>',
    gsi1sk: '<occurredAt>#<eventId>',
    // A client's events by time, relayed or not, for the item's whole life: what replay-events reads.
    gsi2pk: 'CLIENT#<clientId>#EVENTS',
    gsi2sk: '<occurredAt>#<eventId>',
  },
  attributes: {
    clientId: attr.string(),
    eventId: attr.string(),
    type: attr.string<EventType>(),
    occurredAt: attr.string(),
    event: attr.map<ServiceEvent>(),
    expiration: attr.number(),
    relayedAt: attr.optional(attr.string()),
    version: attr.number(),
    createdAt: attr.string(),
    updatedAt: attr.string(),
  },
  derived: { shard: (item) => shardOf(item.clientId, item.eventId) },
});

/**
 * Every partition of pending items: each shard's, then the one partition they all shared before the index was
 * sharded, whose items (written before, kept 7 days) the relay still reads until each is relayed or expired.
 */
export const outboxPendingPartitions: readonly string[] = [
  ...tableShards.map((shard) => outboxEntity.keys.gsi1pk.render({ shard })),
  'OUTBOX#PENDING',
];
