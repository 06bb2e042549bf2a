import { QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { isConditionFailure } from '#lib/aws/conditional-writes';
import { dynamo } from '#lib/aws/dynamodb';
import { queryShardsInOrder } from '#lib/aws/sharded-query';
import type { TransactItem } from '#lib/aws/transactions';
import { tableName } from '#lib/config/resources';
import { outboxEntity, outboxPendingPartitions } from '#lib/entities/outbox';
import type { ServiceEvent } from '#lib/entities/service-event';
import { GSI1, GSI2 } from '#lib/table';
import { type OutboxStore, outboxItemOf } from './outbox.ts';

/**
 * The outbox on the table (docs/events.md, docs/data-model.md patterns 29–30). Stores that make a change
 * put its events with `outboxPutsOf` in the same transaction; the local relay reads and marks them here.
 */

/** The transaction items that write `events` to the outbox (each a new item: an event is written once). */
export const outboxPutsOf = (events: readonly ServiceEvent[]): TransactItem[] =>
  events.map((event) => ({
    Put: {
      TableName: tableName(),
      Item: outboxEntity.toItem(outboxItemOf(event)),
      ConditionExpression: 'attribute_not_exists(pk)',
    },
  }));

export const dynamoOutboxStore: OutboxStore = {
  pending: async (limit) => {
    const items = await queryShardsInOrder({ partitions: outboxPendingPartitions, limit });
    return items.map((item) => outboxEntity.fromItem(item).event);
  },

  markRelayed: async (event, at) => {
    try {
      await dynamo.send(
        new UpdateCommand({
          TableName: tableName(),
          Key: outboxEntity.key({ clientId: event.clientId, eventId: event.id }),
          // Out of the sparse index: never read as pending again.
          UpdateExpression: 'SET #relayedAt = :at, #updatedAt = :at ADD #version :one REMOVE #gsiPk, #gsiSk',
          ConditionExpression: 'attribute_exists(#gsiPk)',
          ExpressionAttributeNames: {
            '#relayedAt': 'relayedAt',
            '#updatedAt': 'updatedAt',
            '#version': 'version',
            '#gsiPk': GSI1.partition,
            '#gsiSk': GSI1.sort,
          },
          ExpressionAttributeValues: { ':at': at, ':one': 1 },
        }),
      );
    } catch (error) {
      // Relayed already (a second relay, an index read that lagged) or expired: nothing to do.
      if (!isConditionFailure(error)) throw error;
    }
  },

  markPending: async (event, at) => {
    // The pending index's keys as the outbox item was written with them (outboxEntity), so the relay reads it again.
    const written = outboxEntity.toItem(outboxItemOf(event));
    try {
      await dynamo.send(
        new UpdateCommand({
          TableName: tableName(),
          Key: outboxEntity.key({ clientId: event.clientId, eventId: event.id }),
          UpdateExpression: 'SET #gsiPk = :pk, #gsiSk = :sk, #updatedAt = :at ADD #version :one REMOVE #relayedAt',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeNames: {
            '#gsiPk': GSI1.partition,
            '#gsiSk': GSI1.sort,
            '#updatedAt': 'updatedAt',
            '#version': 'version',
            '#relayedAt': 'relayedAt',
          },
          ExpressionAttributeValues: { ':pk': written.gsi1pk, ':sk': written.gsi1sk, ':at': at, ':one': 1 },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  },

  since: (clientId, since) => eventsSince(clientId, since),
};

/** Outbox items read per Query of a client's events (each ~1 KB: a page is well under DynamoDB's 1 MB). */
const EVENTS_PAGE = 100;

/** gsi2: a client's events in `<occurredAt>#<eventId>` order, from `since` on. */
async function* eventsSince(clientId: string, since: string): AsyncGenerator<ServiceEvent[]> {
  let start: Record<string, unknown> | undefined;
  do {
    const page = await dynamo.send(
      new QueryCommand({
        TableName: tableName(),
        IndexName: GSI2.name,
        KeyConditionExpression: '#pk = :pk AND #sk >= :since',
        ExpressionAttributeNames: { '#pk': GSI2.partition, '#sk': GSI2.sort },
        ExpressionAttributeValues: { ':pk': outboxEntity.keys.gsi2pk.render({ clientId }), ':since': since },
        Limit: EVENTS_PAGE,
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    const events = (page.Items ?? []).filter(outboxEntity.matches).map((item) => outboxEntity.fromItem(item).event);
    if (events.length > 0) yield events;
    start = page.LastEvaluatedKey;
  } while (start);
}
