import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { isConditionFailure } from '#lib/aws/conditional-writes';
import { dynamo } from '#lib/aws/dynamodb';
import { type TransactItem, transactWriteOrReasons } from '#lib/aws/transactions';
import { tableName } from '#lib/config/resources';
import { authorizationChangeEntity } from '#lib/entities/authorization-history';
import { type DecisionDeadline, decisionDeadlineEntity } from '#lib/entities/decision-deadline';
import { outboxPutsOf } from '#lib/events/dynamo-outbox-store';
import type { DeadlineStore } from './deadline-store.ts';
import { dueOnIndex } from './due-on-index.ts';

/** The transaction item that starts watching a request's deadline (with the change that records it). */
export const deadlinePutOf = (deadline: DecisionDeadline): TransactItem => ({
  Put: { TableName: tableName(), Item: decisionDeadlineEntity.toItem(deadline) },
});

/** The transaction item that ends the watch (with the change that decides it); nothing when there was none. */
export const deadlineDeleteOf = (ref: { clientId: string; externalId: string }): TransactItem => ({
  Delete: { TableName: tableName(), Key: decisionDeadlineEntity.key(ref) },
});

/** As read: the same version of the same deadline (a new submission writes its own at version 1). */
const asRead = (deadline: DecisionDeadline) => ({
  ConditionExpression: '#version = :version AND #due = :due',
  ExpressionAttributeNames: { '#version': 'version', '#due': 'decisionDueAt' },
  ExpressionAttributeValues: { ':version': deadline.version, ':due': deadline.decisionDueAt },
});

export const dynamoDeadlineStore: DeadlineStore = {
  due: async (shard, upTo, limit) =>
    (await dueOnIndex(decisionDeadlineEntity.keys.gsi1pk.render({ shard }), upTo, limit))
      .filter(decisionDeadlineEntity.matches)
      .map(decisionDeadlineEntity.fromItem),

  fire: async (deadline, { entry, event }) => {
    const reasons = await transactWriteOrReasons([
      // Only while it is as read: a second dispatcher, or the change that decided the request, got there first.
      { Delete: { TableName: tableName(), Key: decisionDeadlineEntity.key(deadline), ...asRead(deadline) } },
      {
        Put: {
          TableName: tableName(),
          Item: authorizationChangeEntity.toItem(entry),
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
      ...outboxPutsOf([event]),
    ]);
    // Cancelled: it changed or is gone (nothing written), or another write held it (the next tick reads it again).
    return reasons === undefined;
  },

  end: async (deadline) => {
    try {
      await dynamo.send(
        new DeleteCommand({ TableName: tableName(), Key: decisionDeadlineEntity.key(deadline), ...asRead(deadline) }),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  },
};
