import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { conditionalUpdate } from '#lib/aws/conditional-writes';
import { dynamo } from '#lib/aws/dynamodb';
import { VersionConflict } from '#lib/concurrency';
import { tableName } from '#lib/config/resources';
import type { TableKey } from '#lib/entities/define-entity';
import {
  attachmentBytesUsageEntity,
  payerConnectionsUsageEntity,
  portalAccountsUsageEntity,
} from '#lib/entities/storage-usage';
import type { StorageUsageStore } from './storage-usage.ts';

const refusedAsFalse = (error: unknown) => {
  if (error instanceof VersionConflict) return false;
  throw error;
};

export interface Counter {
  key: TableKey;
  entity: string;
  /** The attribute that counts. */
  count: string;
  /** The record's id fields (and its TTL, if any), written with every change so that the item reads back whole. */
  ids: Record<string, string | number>;
}

/**
 * The UpdateItem that adds `amount` (negative: takes it off) to a counter, created on first use. The
 * condition is the quota: DynamoDB conditions cannot add, so "count + amount ≤ quota" is sent as
 * "count ≤ quota − amount"; a release is "count ≥ amount", so a count never goes below zero. Sent
 * alone here, or as an item of a transaction (the automation's runs in flight).
 */
export const counterChange = (
  { key, entity, count, ids }: Counter,
  amount: number,
  condition: string,
  bound: number,
  at: string,
) => ({
  Key: key,
  UpdateExpression:
    'SET #entity = :entity, #createdAt = if_not_exists(#createdAt, :at), #updatedAt = :at' +
    Object.keys(ids)
      .map((field) => `, #${field} = :${field}`)
      .join('') +
    ' ADD #count :amount, #version :one',
  ConditionExpression: condition,
  ExpressionAttributeNames: {
    '#entity': 'entity',
    '#createdAt': 'createdAt',
    '#updatedAt': 'updatedAt',
    '#count': count,
    '#version': 'version',
    ...Object.fromEntries(Object.keys(ids).map((field) => [`#${field}`, field])),
  },
  ExpressionAttributeValues: {
    ':entity': entity,
    ':at': at,
    ':amount': amount,
    ':one': 1,
    ':bound': bound,
    ...Object.fromEntries(Object.entries(ids).map(([field, value]) => [`:${field}`, value])),
  },
});

/** Conditions of `counterChange`: under the quota, or not below zero. */
export const UNDER_QUOTA = 'attribute_not_exists(#count) OR #count <= :bound';
export const NOT_BELOW_ZERO = '#count >= :bound';

const change = (counter: Counter, amount: number, condition: string, bound: number, at: string) =>
  conditionalUpdate(counterChange(counter, amount, condition, bound, at)).then(() => true, refusedAsFalse);

/** Counts `amount` more unless that would pass `quota`; false then. */
export const reserve = (counter: Counter, amount: number, quota: number, at: string) =>
  quota - amount < 0 ? Promise.resolve(false) : change(counter, amount, UNDER_QUOTA, quota - amount, at);

/** Takes `amount` off, never below zero; false when the count was lower. */
export const release = (counter: Counter, amount: number, at: string) =>
  change(counter, -amount, NOT_BELOW_ZERO, amount, at);

const bytesCounter = (clientId: string): Counter => ({
  key: attachmentBytesUsageEntity.key({ clientId }),
  entity: attachmentBytesUsageEntity.name,
  count: 'attachmentBytes',
  ids: { clientId },
});

const accountsCounter = (clientId: string, organizationId: string): Counter => ({
  key: portalAccountsUsageEntity.key({ clientId, organizationId }),
  entity: portalAccountsUsageEntity.name,
  count: 'portalAccounts',
  ids: { clientId, organizationId },
});

const connectionsCounter = (clientId: string, organizationId: string): Counter => ({
  key: payerConnectionsUsageEntity.key({ clientId, organizationId }),
  entity: payerConnectionsUsageEntity.name,
  count: 'payerConnections',
  ids: { clientId, organizationId },
});

const get = async (key: TableKey) =>
  (await dynamo.send(new GetCommand({ TableName: tableName(), Key: key, ConsistentRead: true }))).Item;

export const dynamoStorageUsageStore: StorageUsageStore = {
  getAttachmentBytes: async (clientId) => {
    const item = await get(attachmentBytesUsageEntity.key({ clientId }));
    return item ? attachmentBytesUsageEntity.fromItem(item) : undefined;
  },
  reserveAttachmentBytes: (clientId, bytes, quota, at) => reserve(bytesCounter(clientId), bytes, quota, at),
  releaseAttachmentBytes: (clientId, bytes, at) => release(bytesCounter(clientId), bytes, at),

  getPortalAccounts: async (clientId, organizationId) => {
    const item = await get(portalAccountsUsageEntity.key({ clientId, organizationId }));
    return item ? portalAccountsUsageEntity.fromItem(item) : undefined;
  },
  reservePortalAccount: (clientId, organizationId, quota, at) =>
    reserve(accountsCounter(clientId, organizationId), 1, quota, at),
  releasePortalAccount: (clientId, organizationId, at) => release(accountsCounter(clientId, organizationId), 1, at),

  getPayerConnections: async (clientId, organizationId) => {
    const item = await get(payerConnectionsUsageEntity.key({ clientId, organizationId }));
    return item ? payerConnectionsUsageEntity.fromItem(item) : undefined;
  },
  reservePayerConnection: (clientId, organizationId, quota, at) =>
    reserve(connectionsCounter(clientId, organizationId), 1, quota, at),
  releasePayerConnection: (clientId, organizationId, at) =>
    release(connectionsCounter(clientId, organizationId), 1, at),
};
