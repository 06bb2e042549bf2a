import { DeleteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { isConditionFailure } from '#lib/aws/conditional-writes';
import { dynamo } from '#lib/aws/dynamodb';
import type { TransactItem } from '#lib/aws/transactions';
import { tableName } from '#lib/config/resources';
import type { ScheduledRecheck } from '#lib/entities/recheck';
import { recheckEntity } from '#lib/entities/recheck';
import { dueOnIndex } from './due-on-index.ts';
import type { RecheckStore } from './recheck-store.ts';

/** The transaction item that starts a request's re-checks (with the change that made it undecided). */
export const recheckPutOf = (recheck: ScheduledRecheck): TransactItem => ({
  Put: { TableName: tableName(), Item: recheckEntity.toItem(recheck) },
});

/** The transaction item that ends them (with the change that decided it); nothing when there were none. */
export const recheckDeleteOf = (ref: { clientId: string; externalId: string }): TransactItem => ({
  Delete: { TableName: tableName(), Key: recheckEntity.key(ref) },
});

/** A write conditional on the re-check being as read; false when it changed since or is gone. */
const ifUnchanged = async (write: () => Promise<unknown>) => {
  try {
    await write();
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
};

const unchanged = { ConditionExpression: '#version = :version', ExpressionAttributeNames: { '#version': 'version' } };

export const dynamoRecheckStore: RecheckStore = {
  due: async (shard, upTo, limit) =>
    (await dueOnIndex(recheckEntity.keys.gsi1pk.render({ shard }), upTo, limit))
      .filter(recheckEntity.matches)
      .map(recheckEntity.fromItem),

  reschedule: (recheck, { checksDone, dueAt, now }) =>
    ifUnchanged(() =>
      dynamo.send(
        new PutCommand({
          TableName: tableName(),
          Item: recheckEntity.toItem({ ...recheck, checksDone, dueAt, version: recheck.version + 1, updatedAt: now }),
          ...unchanged,
          ExpressionAttributeValues: { ':version': recheck.version },
        }),
      ),
    ),

  end: (recheck) =>
    ifUnchanged(() =>
      dynamo.send(
        new DeleteCommand({
          TableName: tableName(),
          Key: recheckEntity.key(recheck),
          ...unchanged,
          ExpressionAttributeValues: { ':version': recheck.version },
        }),
      ),
    ),
};
