import { DeleteCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { isConditionFailure } from '#lib/aws/conditional-writes';
import { dynamo } from '#lib/aws/dynamodb';
import { VersionConflict } from '#lib/concurrency';
import { tableName } from '#lib/config';
import { portalAccountEntity } from '#lib/entities/portal-account';
import { GSI1, GSI2, GSI3, GSI4 } from '#lib/table';
import type { Page, PageQuery, PortalAccountStore } from './portal-account-store.ts';

/*
 * Items and keys are declared in lib/entities/portal-account.ts. Every index pages accounts in the
 * same stable order (sort key `<createdAt>#<externalId>`), so a position is valid on any of them.
 */
const { toItem, fromItem } = portalAccountEntity;
const { keys } = portalAccountEntity;

type Criteria = PageQuery['criteria'];

/**
 * The index and partition whose key condition covers the most criteria: portal and status
 * together, either one, or the whole organization (docs/data-model.md, patterns 10 and 19–21).
 * What the key condition does not cover is left to the FilterExpression.
 */
const keyConditionOf = (clientId: string, organizationId: string, criteria: Criteria) => {
  const { portalId, status, ...rest } = criteria;
  if (portalId !== undefined && status !== undefined) {
    return { index: GSI4, partition: keys.gsi4pk.render({ clientId, organizationId, portalId, status }), rest };
  }
  if (portalId !== undefined) {
    return { index: GSI2, partition: keys.gsi2pk.render({ clientId, organizationId, portalId }), rest };
  }
  if (status !== undefined) {
    return { index: GSI3, partition: keys.gsi3pk.render({ clientId, organizationId, status }), rest };
  }
  return { index: GSI1, partition: keys.gsi1pk.render({ clientId, organizationId }), rest };
};

/** FilterExpression for the criteria no key condition covers (applied by DynamoDB after Limit: see page()). */
const filterOf = (criteria: Pick<Criteria, 'payerId' | 'search'>) => {
  const clauses: string[] = [];
  const values: Record<string, unknown> = {};
  if (criteria.payerId !== undefined) {
    clauses.push('contains(payerIds, :payerId)');
    values[':payerId'] = criteria.payerId;
  }
  if (criteria.search !== undefined) {
    clauses.push('(contains(displayNameSearch, :search) OR contains(usernameSearch, :search))');
    values[':search'] = criteria.search;
  }
  return { expression: clauses.join(' AND '), values };
};

export interface DynamoStoreOptions {
  /** Items read per query when a filter may drop most of them (a test can make it tiny). */
  filteredBatch?: number;
}

export const createDynamoPortalAccountStore = ({
  filteredBatch = 100,
}: DynamoStoreOptions = {}): PortalAccountStore => ({
  get: async (clientId, externalId) => {
    const { Item } = await dynamo.send(
      new GetCommand({
        TableName: tableName(),
        Key: portalAccountEntity.key({ clientId, externalId }),
        ConsistentRead: true,
      }),
    );
    return Item && portalAccountEntity.matches(Item) ? fromItem(Item) : undefined;
  },

  create: async (account) => {
    try {
      await dynamo.send(
        new PutCommand({
          TableName: tableName(),
          Item: toItem(account),
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
    } catch (error) {
      if (isConditionFailure(error)) throw new VersionConflict();
      throw error;
    }
  },

  update: async (account, expectedVersion) => {
    try {
      await dynamo.send(
        new PutCommand({
          TableName: tableName(),
          Item: toItem(account),
          ConditionExpression: 'version = :expected',
          ExpressionAttributeValues: { ':expected': expectedVersion },
        }),
      );
    } catch (error) {
      if (isConditionFailure(error)) throw new VersionConflict();
      throw error;
    }
  },

  delete: async (clientId, externalId, expectedVersion) => {
    try {
      await dynamo.send(
        new DeleteCommand({
          TableName: tableName(),
          Key: portalAccountEntity.key({ clientId, externalId }),
          ConditionExpression: 'version = :expected',
          ExpressionAttributeValues: { ':expected': expectedVersion },
        }),
      );
    } catch (error) {
      if (isConditionFailure(error)) throw new VersionConflict();
      throw error;
    }
  },

  /*
   * The key condition narrows the read to the accounts of the criteria it covers (portal, status);
   * the rest (payer, text) is a FilterExpression, which DynamoDB applies after Limit, so one query
   * can return fewer matches than asked (even none) while more remain. Keep querying from the last
   * evaluated position until the page is full (one extra match tells whether another page exists),
   * the partition is exhausted, or the read bound is reached: then the page is `partial`, and `next`
   * is the last position read.
   */
  page: async ({ clientId, organizationId, criteria, after, limit, maxEvaluated }): Promise<Page> => {
    const { index, partition, rest } = keyConditionOf(clientId, organizationId, criteria);
    const filter = filterOf(rest);
    const filtered = filter.expression !== '';
    const wanted = limit + 1;
    const found: Record<string, unknown>[] = [];
    let position = after;
    let evaluated = 0;
    let exhausted = false;
    while (found.length < wanted && evaluated < maxEvaluated) {
      const batch = Math.min(maxEvaluated - evaluated, filtered ? Math.max(filteredBatch, 1) : wanted - found.length);
      const out = await dynamo.send(
        new QueryCommand({
          TableName: tableName(),
          IndexName: index.name,
          KeyConditionExpression: position ? '#pk = :pk AND #sk > :after' : '#pk = :pk',
          ...(filtered ? { FilterExpression: filter.expression } : {}),
          ExpressionAttributeNames: { '#pk': index.partition, ...(position ? { '#sk': index.sort } : {}) },
          ExpressionAttributeValues: {
            ':pk': partition,
            ...(position ? { ':after': position } : {}),
            ...filter.values,
          },
          Limit: batch,
        }),
      );
      evaluated += out.ScannedCount ?? 0;
      found.push(...(out.Items ?? []));
      if (!out.LastEvaluatedKey) {
        exhausted = true;
        break;
      }
      position = String(out.LastEvaluatedKey[index.sort]);
    }
    if (found.length > limit) {
      const items = found.slice(0, limit);
      return { items: items.map(fromItem), next: String(items.at(-1)![index.sort]), partial: false };
    }
    return exhausted
      ? { items: found.map(fromItem), partial: false }
      : { items: found.map(fromItem), next: position!, partial: true };
  },

  setLastLogin: async (clientId, externalId, lastLogin) => {
    try {
      await dynamo.send(
        new UpdateCommand({
          TableName: tableName(),
          Key: portalAccountEntity.key({ clientId, externalId }),
          UpdateExpression: 'SET lastLogin = :lastLogin, updatedAt = :at ADD version :one',
          ConditionExpression: 'attribute_exists(pk) AND entity = :entity',
          ExpressionAttributeValues: {
            ':lastLogin': portalAccountEntity.attributes.lastLogin.write(lastLogin),
            ':at': lastLogin.at,
            ':one': 1,
            ':entity': portalAccountEntity.name,
          },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  },
});

export const dynamoPortalAccountStore = createDynamoPortalAccountStore();
