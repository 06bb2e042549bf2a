import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { isConditionFailure } from '#lib/aws/conditional-writes';
import { dynamo } from '#lib/aws/dynamodb';
import { tableName } from '#lib/config';
import type { TableKey } from '#lib/entities/define-entity';
import { apiKeyEntity, clientEntity, clientUserEntity, organizationEntity } from '#lib/entities/tenancy';
import type { TenantStore } from './tenant-store.ts';

/** The record of `entity` that `values` name, if it exists. */
const get = async <R, V>(
  entity: { key(values: V): TableKey; fromItem(item: Record<string, unknown>): R },
  values: V,
): Promise<R | undefined> => {
  const { Item } = await dynamo.send(
    new GetCommand({ TableName: tableName(), Key: entity.key(values), ConsistentRead: true }),
  );
  return Item ? entity.fromItem(Item) : undefined;
};

const put = (item: Record<string, unknown>) => dynamo.send(new PutCommand({ TableName: tableName(), Item: item }));

export const dynamoTenantStore: TenantStore = {
  putClient: async (client) => {
    await put(clientEntity.toItem(client));
  },
  getClient: (clientId) => get(clientEntity, { clientId }),

  putApiKey: async (key) => {
    await put(apiKeyEntity.toItem(key));
  },
  findApiKey: (keyHash) => get(apiKeyEntity, { keyHash }),
  revokeApiKey: async (keyHash, revokedAt) => {
    try {
      await dynamo.send(
        new UpdateCommand({
          TableName: tableName(),
          Key: apiKeyEntity.key({ keyHash }),
          UpdateExpression: 'SET revokedAt = :at, updatedAt = :at ADD version :one',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':at': revokedAt, ':one': 1 },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  },

  putOrganization: async (organization) => {
    await put(organizationEntity.toItem(organization));
  },
  getOrganization: (clientId, organizationId) => get(organizationEntity, { clientId, organizationId }),

  putClientUser: async (user) => {
    await put(clientUserEntity.toItem(user));
  },
  getClientUser: (clientId, clientUserId) => get(clientUserEntity, { clientId, clientUserId }),
};
