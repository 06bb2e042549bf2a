import { DeleteCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { isConditionFailure } from '#lib/aws/conditional-writes';
import { dynamo } from '#lib/aws/dynamodb';
import { VersionConflict } from '#lib/concurrency';
import { tableName } from '#lib/config';
import { portalAccountEntity } from '#lib/entities/portal-account';
import { GSI1 } from '#lib/table';
import type { Page, PageQuery, PortalAccountStore } from './portal-account-store.ts';

/*
 * Items and keys are declared in lib/entities/portal-account.ts. GSI1 pages an organization's
 * accounts in their stable order; filters match the normalized displayNameSearch/usernameSearch.
 */
const { toItem, fromItem } = portalAccountEntity;

/** FilterExpression for the criteria (applied by DynamoDB after Limit: see page()). */
const filterOf = (criteria: PageQuery['criteria']) => {
  const clauses: string[] = [];
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  if (criteria.portalId !== undefined) {
    clauses.push('portalId = :portalId');
    values[':portalId'] = criteria.portalId;
  }
  if (criteria.payerId !== undefined) {
    clauses.push('contains(payerIds, :payerId)');
    values[':payerId'] = criteria.payerId;
  }
  if (criteria.status !== undefined) {
    clauses.push('#status = :status');
    names['#status'] = 'status';
    values[':status'] = criteria.status;
  }
  if (criteria.search !== undefined) {
    clauses.push('(contains(displayNameSearch, :search) OR contains(usernameSearch, :search))');
    values[':search'] = criteria.search;
  }
  return { expression: clauses.join(' AND '), names, values };
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
   * DynamoDB applies Limit before FilterExpression, so one query can return fewer matches than
   * asked (even none) while more remain. Keep querying from the last evaluated position until the
   * page is full (one extra match tells whether another page exists), the partition is exhausted,
   * or the evaluation budget is spent (then the page is short and `next` is the last position read).
   */
  page: async ({ clientId, organizationId, criteria, after, limit, maxEvaluated }): Promise<Page> => {
    const filter = filterOf(criteria);
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
          IndexName: GSI1.name,
          KeyConditionExpression: position ? '#pk = :pk AND #sk > :after' : '#pk = :pk',
          ...(filtered ? { FilterExpression: filter.expression } : {}),
          ExpressionAttributeNames: {
            '#pk': GSI1.partition,
            ...(position ? { '#sk': GSI1.sort } : {}),
            ...filter.names,
          },
          ExpressionAttributeValues: {
            ':pk': portalAccountEntity.keys.gsi1pk.render({ clientId, organizationId }),
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
      position = String(out.LastEvaluatedKey[GSI1.sort]);
    }
    if (found.length > limit) {
      const items = found.slice(0, limit);
      return { items: items.map(fromItem), next: String(items.at(-1)![GSI1.sort]) };
    }
    return exhausted ? { items: found.map(fromItem) } : { items: found.map(fromItem), next: position };
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
