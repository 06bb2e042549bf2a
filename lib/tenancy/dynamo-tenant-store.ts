import { GetCommand, PutCommand, QueryCommand, UpdateCommand, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { isConditionFailure } from '#lib/aws/conditional-writes';
import { dynamo } from '#lib/aws/dynamodb';
import { tableName } from '#lib/config/resources';
import type { TableKey } from '#lib/entities/define-entity';
import type { ApiKeyRecord } from '#lib/entities/tenancy';
import {
  apiKeyEntity,
  clientEntity,
  clientSettingsAttributes,
  clientUserEntity,
  organizationEntity,
} from '#lib/entities/tenancy';
import { GSI1 } from '#lib/table';
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

/** An UpdateItem under its ConditionExpression: false when the condition fails (no such item, or its state differs). */
const updatedIf = async (update: Omit<UpdateCommandInput, 'TableName'> & { ConditionExpression: string }) => {
  try {
    await dynamo.send(new UpdateCommand({ TableName: tableName(), ...update }));
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
};

/** Access pattern 2: a client's keys through gsi1, every page (a client has a handful). */
const listApiKeys = async (clientId: string): Promise<ApiKeyRecord[]> => {
  const keys: ApiKeyRecord[] = [];
  let after: Record<string, unknown> | undefined;
  do {
    const page = await dynamo.send(
      new QueryCommand({
        TableName: tableName(),
        IndexName: GSI1.name,
        KeyConditionExpression: '#pk = :pk',
        ExpressionAttributeNames: { '#pk': GSI1.partition },
        ExpressionAttributeValues: { ':pk': apiKeyEntity.keys.gsi1pk.render({ clientId }) },
        ExclusiveStartKey: after,
      }),
    );
    keys.push(...(page.Items ?? []).map((item) => apiKeyEntity.fromItem(item)));
    after = page.LastEvaluatedKey;
  } while (after);
  return keys;
};

/** Sets `fields` of a Client item to `values`, removing those without one; false when there is no such client. */
const replaceClientFields = async <F extends string>(
  clientId: string,
  fields: readonly F[],
  values: Partial<Record<F, number | string>>,
): Promise<boolean> => {
  const set = fields.filter((field) => values[field] !== undefined);
  const removed = fields.filter((field) => values[field] === undefined);
  return updatedIf({
    Key: clientEntity.key({ clientId }),
    UpdateExpression:
      `SET ${['updatedAt = :at', ...set.map((field) => `${field} = :${field}`)].join(', ')} ADD version :one` +
      (removed.length ? ` REMOVE ${removed.join(', ')}` : ''),
    ConditionExpression: 'attribute_exists(pk)',
    ExpressionAttributeValues: {
      ':at': new Date().toISOString(),
      ':one': 1,
      ...Object.fromEntries(set.map((field) => [`:${field}`, values[field]])),
    },
  });
};

/** ProjectionExpression of an API key's record fields (names by placeholder: some are reserved words). */
const recordFields = Object.entries(apiKeyEntity.attributes).map(([field, attribute]) => attribute.storedAs ?? field);
const API_KEY_PROJECTION = {
  ProjectionExpression: recordFields.map((_, i) => `#f${i}`).join(', '),
  ExpressionAttributeNames: Object.fromEntries(recordFields.map((name, i) => [`#f${i}`, name])),
};

/** ProjectionExpression of a client's settings: every record field but its usage plan key. */
const CLIENT_SETTINGS_PROJECTION = {
  ProjectionExpression: clientSettingsAttributes.map((_, i) => `#f${i}`).join(', '),
  ExpressionAttributeNames: Object.fromEntries(clientSettingsAttributes.map((name, i) => [`#f${i}`, name])),
};

/**
 * Access pattern 2 for one key: its gsi1 entry (keyIds are unique per client), the record's
 * attributes only. The key's own item is addressed by the key's hash, which a token must not carry.
 */
const getApiKeyById = async (clientId: string, keyId: string): Promise<ApiKeyRecord | undefined> => {
  const { Items } = await dynamo.send(
    new QueryCommand({
      TableName: tableName(),
      IndexName: GSI1.name,
      KeyConditionExpression: '#pk = :pk AND #sk = :sk',
      ExpressionAttributeNames: {
        ...API_KEY_PROJECTION.ExpressionAttributeNames,
        '#pk': GSI1.partition,
        '#sk': GSI1.sort,
      },
      ExpressionAttributeValues: {
        ':pk': apiKeyEntity.keys.gsi1pk.render({ clientId }),
        ':sk': apiKeyEntity.keys.gsi1sk.render({ keyId }),
      },
      ProjectionExpression: API_KEY_PROJECTION.ProjectionExpression,
    }),
  );
  const [item] = Items ?? [];
  return item ? apiKeyEntity.fromItem(item) : undefined;
};

/** The client directory (gsi1 `CLIENTS`), every page, in client-id order: the ids only. */
async function* clientIds(): AsyncGenerator<string> {
  let after: Record<string, unknown> | undefined;
  do {
    const page = await dynamo.send(
      new QueryCommand({
        TableName: tableName(),
        IndexName: GSI1.name,
        KeyConditionExpression: '#pk = :clients',
        ExpressionAttributeNames: { '#pk': GSI1.partition, '#clientId': 'clientId' },
        ExpressionAttributeValues: { ':clients': clientEntity.keys.gsi1pk.render({}) },
        ProjectionExpression: '#clientId',
        ...(after ? { ExclusiveStartKey: after } : {}),
      }),
    );
    for (const item of page.Items ?? []) yield item.clientId as string;
    after = page.LastEvaluatedKey;
  } while (after);
}

const put = (item: Record<string, unknown>) => dynamo.send(new PutCommand({ TableName: tableName(), Item: item }));

export const dynamoTenantStore: TenantStore = {
  putClient: async (client) => {
    await put(clientEntity.toItem(client));
  },
  getClient: (clientId) => get(clientEntity, { clientId }),
  getClientSettings: async (clientId) => {
    const { Item } = await dynamo.send(
      new GetCommand({
        TableName: tableName(),
        Key: clientEntity.key({ clientId }),
        ConsistentRead: true,
        ...CLIENT_SETTINGS_PROJECTION,
      }),
    );
    // A projection of an item without those attributes is `{}`, of no item none: clientId is always there.
    return Item?.clientId ? clientEntity.fromItem(Item) : undefined;
  },
  clientIds,
  getUsageIdentifierKey: async (clientId) => {
    const { Item } = await dynamo.send(
      new GetCommand({
        TableName: tableName(),
        Key: clientEntity.key({ clientId }),
        ProjectionExpression: '#usageKey',
        ExpressionAttributeNames: { '#usageKey': 'usageIdentifierKey' },
      }),
    );
    return typeof Item?.usageIdentifierKey === 'string' ? Item.usageIdentifierKey : undefined;
  },
  setUsageIdentifierKey: (clientId, usageIdentifierKey) =>
    updatedIf({
      Key: clientEntity.key({ clientId }),
      UpdateExpression: 'SET usageIdentifierKey = :key, updatedAt = :at ADD version :one',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeValues: { ':key': usageIdentifierKey, ':at': new Date().toISOString(), ':one': 1 },
    }),
  markClientDeleted: (clientId, deletedAt) =>
    updatedIf({
      Key: clientEntity.key({ clientId }),
      UpdateExpression: 'SET deletedAt = :at, updatedAt = :at ADD version :one',
      ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(deletedAt)',
      ExpressionAttributeValues: { ':at': deletedAt, ':one': 1 },
    }),
  setClientLimits: (clientId, limits) =>
    replaceClientFields(clientId, ['rateLimit', 'burstLimit', 'quotaPerDay'], limits),
  setStorageQuotas: (clientId, quotas) =>
    replaceClientFields(clientId, ['attachmentBytesQuota', 'portalAccountsQuota', 'payerConnectionsQuota'], quotas),
  setAutomationQuotas: (clientId, quotas) =>
    replaceClientFields(clientId, ['automationRunsPerHour', 'automationRunsPerDay', 'automationRunsInFlight'], quotas),
  setRecheckSettings: (clientId, settings) =>
    replaceClientFields(clientId, ['rechecks', 'recheckIntervalSeconds'], settings),

  putApiKey: async (key) => {
    await put(apiKeyEntity.toItem(key));
  },
  // The authorizer's read, on every uncached call: the record's attributes only, not keys or bookkeeping.
  findApiKey: async (keyHash) => {
    const { Item } = await dynamo.send(
      new GetCommand({
        TableName: tableName(),
        Key: apiKeyEntity.key({ keyHash }),
        ConsistentRead: true,
        ...API_KEY_PROJECTION,
      }),
    );
    return Item ? apiKeyEntity.fromItem(Item) : undefined;
  },
  listApiKeys,
  getApiKeyById,
  revokeApiKey: (keyHash, revokedAt) =>
    updatedIf({
      Key: apiKeyEntity.key({ keyHash }),
      UpdateExpression: 'SET revokedAt = :at, updatedAt = :at ADD version :one',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeValues: { ':at': revokedAt, ':one': 1 },
    }),
  // Touches lastUsedAt alone (not version or updatedAt): the authorizer's IAM allows no other attribute.
  recordApiKeyUse: (keyHash, usedAt, staleBefore) =>
    updatedIf({
      Key: apiKeyEntity.key({ keyHash }),
      UpdateExpression: 'SET lastUsedAt = :at',
      ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(lastUsedAt) OR lastUsedAt < :stale)',
      ExpressionAttributeValues: { ':at': usedAt, ':stale': staleBefore },
    }),

  putOrganization: async (organization) => {
    await put(organizationEntity.toItem(organization));
  },
  getOrganization: (clientId, organizationId) => get(organizationEntity, { clientId, organizationId }),

  putClientUser: async (user) => {
    await put(clientUserEntity.toItem(user));
  },
  getClientUser: (clientId, clientUserId) => get(clientUserEntity, { clientId, clientUserId }),
};
