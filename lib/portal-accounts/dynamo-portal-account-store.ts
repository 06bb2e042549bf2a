import { GetCommand, PutCommand, ScanCommand, type ScanCommandOutput } from '@aws-sdk/lib-dynamodb';
import { isConditionFailure } from '#lib/aws/conditional-writes';
import { dynamo } from '#lib/aws/dynamodb';
import { tableName } from '#lib/config/resources';
import { portalAccountEntity, type StoredPortalAccount } from '#lib/entities/portal-account';
import { GSI2 } from '#lib/table';
import { page } from './dynamo-portal-account-pages.ts';
import { putPayerEntries } from './dynamo-portal-account-payers.ts';
import { createAccount, deleteAccount, setLastLogin, updateAccount } from './dynamo-portal-account-writes.ts';
import type { PortalAccountStore } from './portal-account-store.ts';

/*
 * The portal-account store on DynamoDB: reads here, pages in dynamo-portal-account-pages.ts, writes in
 * dynamo-portal-account-writes.ts, the payer index entries in dynamo-portal-account-payers.ts.
 */
const { toItem, fromItem } = portalAccountEntity;

async function getAccount(clientId: string, externalId: string): Promise<StoredPortalAccount | undefined> {
  const { Item } = await dynamo.send(
    new GetCommand({
      TableName: tableName(),
      Key: portalAccountEntity.key({ clientId, externalId }),
      ConsistentRead: true,
    }),
  );
  return Item && portalAccountEntity.matches(Item) ? fromItem(Item) : undefined;
}

export interface DynamoStoreOptions {
  /** Items read per query when a filter may drop most of them (a test can make it tiny). */
  filteredBatch?: number;
}

export const createDynamoPortalAccountStore = ({
  filteredBatch = 100,
}: DynamoStoreOptions = {}): PortalAccountStore => ({
  get: getAccount,
  create: createAccount,
  update: updateAccount,
  delete: deleteAccount,
  page: (query) => page(query, filteredBatch),
  setLastLogin,
});

export const dynamoPortalAccountStore = createDynamoPortalAccountStore();

/**
 * Rewrites the portal accounts written before the filter indexes existed (they lack `gsi2pk`) with
 * their index attributes and payer entries: a Scan of the whole table, run once by operators (admin
 * `backfill-portal-account-indexes`) and by the local stack when it re-creates an older table. Each
 * rewrite is conditional on the version it read: a write meanwhile already carries them.
 */
export const backfillPortalAccountIndexes = async () => {
  let scanned = 0;
  let rewritten = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const page: ScanCommandOutput = await dynamo.send(
      new ScanCommand({
        TableName: tableName(),
        FilterExpression: '#entity = :entity AND attribute_not_exists(#indexed)',
        ExpressionAttributeNames: { '#entity': 'entity', '#indexed': GSI2.partition },
        ExpressionAttributeValues: { ':entity': portalAccountEntity.name },
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    scanned += page.ScannedCount ?? 0;
    for (const item of page.Items ?? []) {
      const account = fromItem(item);
      try {
        await dynamo.send(
          new PutCommand({
            TableName: tableName(),
            Item: toItem(account),
            ConditionExpression: 'version = :version',
            ExpressionAttributeValues: { ':version': account.version },
          }),
        );
      } catch (error) {
        if (isConditionFailure(error)) continue;
        throw error;
      }
      await putPayerEntries(account);
      rewritten++;
    }
    start = page.LastEvaluatedKey;
  } while (start);
  return { scanned, rewritten };
};
