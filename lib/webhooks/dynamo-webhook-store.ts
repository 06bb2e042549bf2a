import { GetCommand, QueryCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { conditionalPut } from '#lib/aws/conditional-writes';
import { dynamo } from '#lib/aws/dynamodb';
import { queryShardsInOrder } from '#lib/aws/sharded-query';
import { VersionConflict } from '#lib/concurrency';
import { tableName } from '#lib/config/resources';
import {
  dueDeliveryPartitions,
  webhookDeliveryEntity,
  webhookEntity,
  webhooksUsageEntity,
} from '#lib/entities/webhook';
import { LimitReached } from '#lib/errors';
import type { WebhookStore } from './webhook-store.ts';

/** The reasons DynamoDB gives, one per item, when it cancels a transaction. */
const cancellationCodes = (error: unknown): string[] | undefined =>
  (error as Error | undefined)?.name === 'TransactionCanceledException'
    ? ((error as { CancellationReasons?: Array<{ Code?: string }> }).CancellationReasons ?? []).map(
        (reason) => reason.Code ?? 'None',
      )
    : undefined;

/** The counter's update: created by its first use, bounded by `condition`. */
const countUpdate = (clientId: string, delta: 1 | -1, at: string, condition?: { limit: number }) => ({
  TableName: tableName(),
  Key: webhooksUsageEntity.key({ clientId }),
  UpdateExpression:
    'SET entity = :entity, clientId = :clientId, createdAt = if_not_exists(createdAt, :at), updatedAt = :at ADD webhooks :delta, version :one',
  ...(condition ? { ConditionExpression: 'attribute_not_exists(webhooks) OR webhooks < :limit' } : {}),
  ExpressionAttributeValues: {
    ':entity': webhooksUsageEntity.name,
    ':clientId': clientId,
    ':at': at,
    ':delta': delta,
    ':one': 1,
    ...(condition ? { ':limit': condition.limit } : {}),
  },
});

/**
 * Keys and items are declared in lib/entities/webhook.ts. A subscription is created and deleted in one
 * transaction with its client's count, so the limit holds whatever runs concurrently; every other
 * write is a conditional single-item put on the version read.
 */
export const dynamoWebhookStore: WebhookStore = {
  create: async (webhook, limit) => {
    try {
      await dynamo.send(
        new TransactWriteCommand({
          TransactItems: [
            { Update: countUpdate(webhook.clientId, 1, webhook.createdAt, { limit }) },
            {
              Put: {
                TableName: tableName(),
                Item: webhookEntity.toItem(webhook),
                ConditionExpression: 'attribute_not_exists(pk)',
              },
            },
          ],
        }),
      );
    } catch (error) {
      const codes = cancellationCodes(error);
      if (codes?.[0] === 'ConditionalCheckFailed') {
        throw new LimitReached(`A client has at most ${limit} webhook subscriptions.`, { limit });
      }
      if (codes?.[1] === 'ConditionalCheckFailed') throw new VersionConflict();
      throw error;
    }
  },

  get: async (clientId, webhookId) => {
    const { Item } = await dynamo.send(
      new GetCommand({ TableName: tableName(), Key: webhookEntity.key({ clientId, webhookId }), ConsistentRead: true }),
    );
    return Item && webhookEntity.matches(Item) ? webhookEntity.fromItem(Item) : undefined;
  },

  list: async (clientId) => {
    const { Items } = await dynamo.send(
      new QueryCommand({
        TableName: tableName(),
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: {
          ':pk': webhookEntity.keys.pk.render({ clientId }),
          ':prefix': webhookEntity.keys.sk.prefix,
        },
        ConsistentRead: true,
      }),
    );
    return (Items ?? []).filter(webhookEntity.matches).map(webhookEntity.fromItem);
  },

  update: (webhook) =>
    conditionalPut(webhookEntity.toItem(webhook), 'version = :previous', { ':previous': webhook.version - 1 }),

  remove: async (webhook) => {
    try {
      await dynamo.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Delete: {
                TableName: tableName(),
                Key: webhookEntity.key(webhook),
                ConditionExpression: 'version = :version',
                ExpressionAttributeValues: { ':version': webhook.version },
              },
            },
            { Update: countUpdate(webhook.clientId, -1, new Date().toISOString()) },
          ],
        }),
      );
    } catch (error) {
      if (cancellationCodes(error)?.[0] === 'ConditionalCheckFailed') throw new VersionConflict();
      throw error;
    }
  },

  createDelivery: async (delivery) => {
    try {
      await conditionalPut(webhookDeliveryEntity.toItem(delivery), 'attribute_not_exists(pk)');
      return true;
    } catch (error) {
      if (error instanceof VersionConflict) return false;
      throw error;
    }
  },

  getDelivery: async (ref) => {
    const { Item } = await dynamo.send(
      new GetCommand({ TableName: tableName(), Key: webhookDeliveryEntity.key(ref), ConsistentRead: true }),
    );
    return Item && webhookDeliveryEntity.matches(Item) ? webhookDeliveryEntity.fromItem(Item) : undefined;
  },

  updateDelivery: (delivery) =>
    conditionalPut(webhookDeliveryEntity.toItem(delivery), 'version = :previous', {
      ':previous': delivery.version - 1,
    }),

  listDeliveries: async (clientId, webhookId, { limit, before }) => {
    const { pk } = webhookDeliveryEntity.key({ clientId, webhookId, deliveryId: '' });
    const { Items, LastEvaluatedKey } = await dynamo.send(
      new QueryCommand({
        TableName: tableName(),
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': pk, ':prefix': webhookDeliveryEntity.keys.sk.prefix },
        // A position needs no item there: a delivery expired meanwhile still marks where the page ended.
        ...(before
          ? { ExclusiveStartKey: webhookDeliveryEntity.key({ clientId, webhookId, deliveryId: before }) }
          : {}),
        ScanIndexForward: false,
        Limit: limit,
        ConsistentRead: true,
      }),
    );
    const items = (Items ?? []).filter(webhookDeliveryEntity.matches).map(webhookDeliveryEntity.fromItem);
    return { items, next: LastEvaluatedKey && items.length > 0 ? items.at(-1)!.deliveryId : null };
  },

  dueDeliveries: async (now, limit) => {
    // Every key due at `now` sorts before `<now>~`: `<scheduledAt>#…`.
    const items = await queryShardsInOrder({ partitions: dueDeliveryPartitions, limit, below: `${now}~` });
    return items.filter(webhookDeliveryEntity.matches).map((item) => {
      const { clientId, webhookId, deliveryId } = webhookDeliveryEntity.fromItem(item);
      return { clientId, webhookId, deliveryId };
    });
  },
};
