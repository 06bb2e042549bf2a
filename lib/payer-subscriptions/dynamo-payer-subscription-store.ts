import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { isConditionFailure } from '#lib/aws/conditional-writes';
import { dynamo } from '#lib/aws/dynamodb';
import { transactWriteOrReasons } from '#lib/aws/transactions';
import { retryOnConflict, VersionConflict } from '#lib/concurrency';
import { tableName } from '#lib/config/resources';
import {
  payerConnectionSubscriptionEntity,
  payerSubscriptionEntity,
  type StoredPayerSubscription,
} from '#lib/entities/payer-subscription';
import { dueOnIndex } from '#lib/rechecks/due-on-index';
import type { PayerSubscriptionStore, ReceivedNotification } from './payer-subscription-store.ts';

const onVersion = (version: number) => ({
  ConditionExpression: '#version = :version',
  ExpressionAttributeNames: { '#version': 'version' },
  ExpressionAttributeValues: { ':version': version },
});

const getSubscription = async (subscriptionId: string) => {
  const { Item } = await dynamo.send(
    new GetCommand({
      TableName: tableName(),
      Key: payerSubscriptionEntity.key({ subscriptionId }),
      ConsistentRead: true,
    }),
  );
  return Item && payerSubscriptionEntity.matches(Item) ? payerSubscriptionEntity.fromItem(Item) : undefined;
};

/** Puts the next version of a subscription on the one read (its due index key moves with `checkDueAt`). */
const putOnVersion = async (current: StoredPayerSubscription, next: StoredPayerSubscription) => {
  try {
    await dynamo.send(
      new PutCommand({
        TableName: tableName(),
        Item: payerSubscriptionEntity.toItem(next),
        ...onVersion(current.version),
      }),
    );
    return next;
  } catch (error) {
    if (isConditionFailure(error)) return undefined;
    throw error;
  }
};

/** The pointer's write: new, or moved from the subscription it pointed to. */
const pointerPutOf = (subscription: StoredPayerSubscription, replacing: StoredPayerSubscription | undefined) => ({
  Put: {
    TableName: tableName(),
    Item: payerConnectionSubscriptionEntity.toItem({
      clientId: subscription.clientId,
      payerConnectionId: subscription.payerConnectionId,
      subscriptionId: subscription.subscriptionId,
      version: 1,
      createdAt: subscription.createdAt,
      updatedAt: subscription.createdAt,
    }),
    ...(replacing
      ? {
          ConditionExpression: '#subscriptionId = :replaced',
          ExpressionAttributeNames: { '#subscriptionId': 'subscriptionId' },
          ExpressionAttributeValues: { ':replaced': replacing.subscriptionId },
        }
      : { ConditionExpression: 'attribute_not_exists(pk)' }),
  },
});

/** Records one notification on the subscription as read; VersionConflict when it changed meanwhile. */
async function recordOnce(subscriptionId: string, notification: ReceivedNotification) {
  const current = await getSubscription(subscriptionId);
  if (!current) return 'not_found' as const;
  const { at, status, eventNumber } = notification;
  if (eventNumber !== undefined && eventNumber <= current.lastEventNumber) return 'replayed' as const;
  const next: StoredPayerSubscription = {
    ...current,
    status,
    lastNotifiedAt: at,
    lastEventNumber: eventNumber ?? current.lastEventNumber,
    version: current.version + 1,
    updatedAt: at,
  };
  if (!(await putOnVersion(current, next))) throw new VersionConflict();
  return 'recorded' as const;
}

export const dynamoPayerSubscriptionStore: PayerSubscriptionStore = {
  get: getSubscription,

  currentOf: async (clientId, payerConnectionId) => {
    const { Item } = await dynamo.send(
      new GetCommand({
        TableName: tableName(),
        Key: payerConnectionSubscriptionEntity.key({ clientId, payerConnectionId }),
        ConsistentRead: true,
      }),
    );
    if (!Item || !payerConnectionSubscriptionEntity.matches(Item)) return undefined;
    return getSubscription(payerConnectionSubscriptionEntity.fromItem(Item).subscriptionId);
  },

  create: async (subscription, replacing) => {
    const at = subscription.createdAt;
    const reasons = await transactWriteOrReasons([
      {
        Put: {
          TableName: tableName(),
          Item: payerSubscriptionEntity.toItem(subscription),
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
      pointerPutOf(subscription, replacing),
      ...(replacing
        ? [
            {
              Put: {
                TableName: tableName(),
                Item: payerSubscriptionEntity.toItem({
                  ...replacing,
                  status: 'off' as const,
                  version: replacing.version + 1,
                  updatedAt: at,
                }),
                ...onVersion(replacing.version),
              },
            },
          ]
        : []),
    ]);
    return reasons === undefined;
  },

  update: (current, changes, at) =>
    putOnVersion(current, { ...current, ...changes, version: current.version + 1, updatedAt: at }),

  // Heartbeats and events may race the keeper's writes: each is read and written again on its version.
  recordNotification: (subscriptionId, notification) =>
    retryOnConflict(() => recordOnce(subscriptionId, notification), { attempts: 5 }),

  due: async (shard, upTo, limit) =>
    (await dueOnIndex(payerSubscriptionEntity.keys.gsi1pk.render({ shard }), upTo, limit))
      .filter(payerSubscriptionEntity.matches)
      .map(payerSubscriptionEntity.fromItem),
};
