import { DeleteCommand, GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { isConditionFailure } from '#lib/aws/conditional-writes';
import { dynamo } from '#lib/aws/dynamodb';
import { VersionConflict } from '#lib/concurrency';
import { tableName } from '#lib/config';
import { keys } from '#lib/keys';
import { GSI1 } from '#lib/table';
import {
  normalizeSearchText,
  type Page,
  type PageQuery,
  type PortalAccountStore,
  type StoredPortalAccount,
} from './portal-account-store.ts';

/*
 * Item: pk CLIENT#<clientId>#PACC#<externalId>, sk PACC; GSI1 gsi1pk CLIENT#<clientId>#ORG#<orgId>#PACC,
 * gsi1sk <createdAt>#<externalId> (unique and never changes, so paging order is stable).
 * Secrets are stored only as sealed envelopes (passwordEnvelope, totpSecretEnvelope).
 * displayNameSearch/usernameSearch are lower-cased copies for case-insensitive filtering.
 */
const ENTITY = 'PortalAccount';

const toItem = (account: StoredPortalAccount) => ({
  ...keys.portalAccount(account.clientId, account.externalId),
  gsi1pk: keys.portalAccountsOfOrganization(account.clientId, account.organizationId),
  gsi1sk: keys.portalAccountOrder(account.createdAt, account.externalId),
  entity: ENTITY,
  clientId: account.clientId,
  organizationId: account.organizationId,
  externalId: account.externalId,
  clientUserId: account.clientUserId,
  portalId: account.portalId,
  payerIds: account.payerIds,
  displayName: account.displayName,
  displayNameSearch: normalizeSearchText(account.displayName),
  username: account.username,
  usernameSearch: normalizeSearchText(account.username),
  status: account.status,
  lastLogin: account.lastLogin ?? undefined,
  passwordEnvelope: account.password,
  passwordChangedAt: account.passwordChangedAt,
  totpSecretEnvelope: account.totpSecret ?? undefined,
  totpSecretChangedAt: account.totpSecretChangedAt ?? undefined,
  version: account.version,
  createdAt: account.createdAt,
  updatedAt: account.updatedAt,
});

// biome-ignore lint/suspicious/noExplicitAny: a raw DynamoDB item
const fromItem = (item: Record<string, any>): StoredPortalAccount => ({
  clientId: item.clientId,
  organizationId: item.organizationId,
  externalId: item.externalId,
  clientUserId: item.clientUserId,
  portalId: item.portalId,
  payerIds: item.payerIds ?? [],
  displayName: item.displayName,
  username: item.username,
  status: item.status,
  lastLogin: item.lastLogin ?? null,
  password: item.passwordEnvelope,
  passwordChangedAt: item.passwordChangedAt,
  totpSecret: item.totpSecretEnvelope ?? null,
  totpSecretChangedAt: item.totpSecretChangedAt ?? null,
  version: item.version,
  createdAt: item.createdAt,
  updatedAt: item.updatedAt,
});

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
      new GetCommand({ TableName: tableName(), Key: keys.portalAccount(clientId, externalId), ConsistentRead: true }),
    );
    return Item?.entity === ENTITY ? fromItem(Item) : undefined;
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
          Key: keys.portalAccount(clientId, externalId),
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
            ':pk': keys.portalAccountsOfOrganization(clientId, organizationId),
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
});

export const dynamoPortalAccountStore = createDynamoPortalAccountStore();
