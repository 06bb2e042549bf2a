import { DeleteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { isConditionFailure } from '#lib/aws/conditional-writes';
import { dynamo } from '#lib/aws/dynamodb';
import { tableName } from '#lib/config/resources';
import { portalAccountLeaseEntity } from '#lib/entities/rpa';
import type { AccountLeases } from './account-lease.ts';

/** The lease as one conditional put (take or renew) and one conditional delete (give back). */
export const dynamoAccountLeases = (now: () => Date = () => new Date()): AccountLeases => ({
  acquire: async (clientId, portalAccountId, holder, seconds) => {
    const at = now();
    const expires = new Date(at.getTime() + seconds * 1000);
    try {
      await dynamo.send(
        new PutCommand({
          TableName: tableName(),
          Item: portalAccountLeaseEntity.toItem({
            clientId,
            portalAccountId,
            holder,
            expiresAt: expires.toISOString(),
            expiration: Math.ceil(expires.getTime() / 1000),
            version: 1,
            createdAt: at.toISOString(),
            updatedAt: at.toISOString(),
          }),
          ConditionExpression: 'attribute_not_exists(pk) OR expiresAt < :now OR holder = :holder',
          ExpressionAttributeValues: { ':now': at.toISOString(), ':holder': holder },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  },

  release: async (clientId, portalAccountId, holder) => {
    try {
      await dynamo.send(
        new DeleteCommand({
          TableName: tableName(),
          Key: portalAccountLeaseEntity.key({ clientId, portalAccountId }),
          ConditionExpression: 'holder = :holder',
          ExpressionAttributeValues: { ':holder': holder },
        }),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  },
});
