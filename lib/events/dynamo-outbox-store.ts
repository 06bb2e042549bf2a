import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { isConditionFailure } from '#lib/aws/conditional-writes';
import { dynamo } from '#lib/aws/dynamodb';
import { queryShardsInOrder } from '#lib/aws/sharded-query';
import type { TransactItem } from '#lib/aws/transactions';
import { tableName } from '#lib/config/resources';
import { outboxEntity, outboxPendingPartitions } from '#lib/entities/outbox';
import type { ServiceEvent } from '#lib/entities/service-event';
import { GSI1 } from '#lib/table';
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
};
