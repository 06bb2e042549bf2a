import type { OutboxItem } from '#lib/events/outbox';
import type { EventType, ServiceEvent } from '#lib/events/service-event';
import { attr, defineEntity } from './define-entity.ts';

/**
 * An outbox item (docs/events.md): the event a change of the same transaction tells of, keyed under its
 * client. Each event is its own partition (writes spread, whatever a client's volume). Pending items are
 * in gsi1's `OUTBOX#PENDING` partition, oldest first: the local relay's Query (no Scan), a sparse index
 * its mark empties (REMOVE gsi1pk, gsi1sk). On AWS the stream relays them; they leave the index by TTL.
 */
export const outboxEntity = defineEntity<OutboxItem>()({
  name: 'OutboxEvent',
  keys: {
    pk: 'CLIENT#<clientId>#EVENT#<eventId>',
    sk: 'OUTBOX',
    gsi1pk: 'OUTBOX#PENDING',
    gsi1sk: '<occurredAt>#<eventId>',
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
});
