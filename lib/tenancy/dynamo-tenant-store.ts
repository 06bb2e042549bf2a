import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { isConditionFailure } from '#lib/aws/conditional-writes';
import { dynamo } from '#lib/aws/dynamodb';
import { tableName } from '#lib/config';
import { keys } from '#lib/keys';
import type { ApiKeyRecord, ClientRecord, ClientUserRecord, OrganizationRecord, TenantStore } from './tenant-store.ts';

const get = async <T>(key: { pk: string; sk: string }): Promise<T | undefined> => {
  const { Item } = await dynamo.send(new GetCommand({ TableName: tableName(), Key: key, ConsistentRead: true }));
  return Item as T | undefined;
};

const put = (item: Record<string, unknown>) => dynamo.send(new PutCommand({ TableName: tableName(), Item: item }));

const strip = <T extends object>(
  item: (T & Record<string, unknown>) | undefined,
  fields: (keyof T)[],
): T | undefined =>
  item
    ? (Object.fromEntries(fields.filter((f) => item[f as string] !== undefined).map((f) => [f, item[f]])) as T)
    : undefined;

export const dynamoTenantStore: TenantStore = {
  putClient: async (client) => {
    await put({
      ...keys.client(client.clientId),
      entity: 'Client',
      version: 1,
      updatedAt: client.createdAt,
      ...client,
    });
  },
  getClient: async (clientId) =>
    strip<ClientRecord>(await get(keys.client(clientId)), ['clientId', 'name', 'createdAt']),

  putApiKey: async (key) => {
    await put({
      ...keys.apiKey(key.keyHash),
      ...keys.apiKeyByClient(key.clientId, key.keyId),
      entity: 'ApiKey',
      version: 1,
      updatedAt: key.createdAt,
      ...key,
    });
  },
  findApiKey: async (keyHash) =>
    strip<ApiKeyRecord>(await get(keys.apiKey(keyHash)), ['keyHash', 'keyId', 'clientId', 'createdAt', 'revokedAt']),
  revokeApiKey: async (keyHash, revokedAt) => {
    try {
      await dynamo.send(
        new UpdateCommand({
          TableName: tableName(),
          Key: keys.apiKey(keyHash),
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
    await put({
      ...keys.organization(organization.clientId, organization.organizationId),
      entity: 'Organization',
      version: 1,
      updatedAt: organization.createdAt,
      ...organization,
    });
  },
  getOrganization: async (clientId, organizationId) =>
    strip<OrganizationRecord>(await get(keys.organization(clientId, organizationId)), [
      'clientId',
      'organizationId',
      'name',
      'createdAt',
    ]),

  putClientUser: async (user) => {
    await put({
      ...keys.clientUser(user.clientId, user.clientUserId),
      entity: 'ClientUser',
      version: 1,
      updatedAt: user.createdAt,
      ...user,
    });
  },
  getClientUser: async (clientId, clientUserId) =>
    strip<ClientUserRecord>(await get(keys.clientUser(clientId, clientUserId)), [
      'clientId',
      'clientUserId',
      'organizationId',
      'createdAt',
    ]),
};
