import { GetCommand, PutCommand, QueryCommand, ScanCommand, type ScanCommandOutput } from '@aws-sdk/lib-dynamodb';
import { isConditionFailure } from '#lib/aws/conditional-writes';
import { dynamo } from '#lib/aws/dynamodb';
import { tableName } from '#lib/config/resources';
import { portalAccountEntity, type StoredPortalAccount } from '#lib/entities/portal-account';
import { GSI2, TABLE_KEY } from '#lib/table';
import { indexSearchText } from './dynamo-portal-account-grams.ts';
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

/** Whether an account's item collection holds search index entries (it has, once indexed with a trigram). */
const hasSearchEntries = async (item: Record<string, unknown>) => {
  const { Count } = await dynamo.send(
    new QueryCommand({
      TableName: tableName(),
      KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :gram)',
      ExpressionAttributeNames: { '#pk': TABLE_KEY.partition, '#sk': TABLE_KEY.sort },
      ExpressionAttributeValues: { ':pk': item[TABLE_KEY.partition], ':gram': 'GRAM#' },
      Select: 'COUNT',
      Limit: 1,
    }),
  );
  return (Count ?? 0) > 0;
};

/** Rewrites one account written before the filter indexes (conditional on its version); false if it changed. */
const rewriteWithIndexes = async (account: StoredPortalAccount) => {
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
    if (isConditionFailure(error)) return false;
    throw error;
  }
  await putPayerEntries(account);
  return true;
};

/**
 * Brings the portal accounts written before the filter indexes (they lack `gsi2pk`) or before the
 * search index (no trigram entries) up to date: their index attributes and payer entries, their
 * trigram entries and counts. A Scan of the whole table (and, per account, a one-item Query of its
 * item collection), run once by operators (admin `backfill-portal-account-indexes`) and by the local
 * stack when it re-creates an older table. An account rewritten meanwhile already carries them.
 */
export const backfillPortalAccountIndexes = async () => {
  let scanned = 0;
  let rewritten = 0;
  let searchIndexed = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const page: ScanCommandOutput = await dynamo.send(
      new ScanCommand({
        TableName: tableName(),
        FilterExpression: '#entity = :entity',
        ExpressionAttributeNames: { '#entity': 'entity' },
        ExpressionAttributeValues: { ':entity': portalAccountEntity.name },
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    scanned += page.ScannedCount ?? 0;
    for (const item of page.Items ?? []) {
      const account = fromItem(item);
      if (item[GSI2.partition] === undefined && (await rewriteWithIndexes(account))) rewritten++;
      if (!(await hasSearchEntries(item))) {
        await indexSearchText(undefined, account);
        searchIndexed++;
      }
    }
    start = page.LastEvaluatedKey;
  } while (start);
  return { scanned, rewritten, searchIndexed };
};
