import {
  type AttributeValue,
  BatchWriteItemCommand,
  CreateTableCommand,
  DeleteTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  ResourceInUseException,
  ResourceNotFoundException,
  ScanCommand,
  type ScanCommandOutput,
  waitUntilTableExists,
  waitUntilTableNotExists,
} from '@aws-sdk/client-dynamodb';
import { TABLE_KEY, tableIndexes } from '#lib/table';

/**
 * The service table on whatever DynamoDB the local stack or a test uses (the embedded dynalite, DynamoDB
 * Local, a real table): created with lib/table.ts's keys and indexes, re-created when an index is missing,
 * dropped. The CDK stack declares the same table in infra/.
 */

export const localCredentials = {
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'S3RVER',
  AWS_SECRET_ACCESS_KEY: 'S3RVER',
} as const;

const tableClient = (endpoint: string) =>
  new DynamoDBClient({
    endpoint,
    region: localCredentials.AWS_REGION,
    credentials: {
      accessKeyId: localCredentials.AWS_ACCESS_KEY_ID,
      secretAccessKey: localCredentials.AWS_SECRET_ACCESS_KEY,
    },
  });

/** Creates the table with the keys and indexes of lib/table.ts; false if it already exists. */
const createTable = async (client: DynamoDBClient, tableName: string) => {
  const string = (name: string) => ({ AttributeName: name, AttributeType: 'S' as const });
  try {
    await client.send(
      new CreateTableCommand({
        TableName: tableName,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [
          TABLE_KEY.partition,
          TABLE_KEY.sort,
          ...tableIndexes.flatMap((index) => [index.partition, index.sort]),
        ].map(string),
        KeySchema: [
          { AttributeName: TABLE_KEY.partition, KeyType: 'HASH' },
          { AttributeName: TABLE_KEY.sort, KeyType: 'RANGE' },
        ],
        GlobalSecondaryIndexes: tableIndexes.map((index) => ({
          IndexName: index.name,
          KeySchema: [
            { AttributeName: index.partition, KeyType: 'HASH' as const },
            { AttributeName: index.sort, KeyType: 'RANGE' as const },
          ],
          Projection: { ProjectionType: 'ALL' as const },
        })),
      }),
    );
  } catch (error) {
    if (error instanceof ResourceInUseException) return false;
    throw error;
  }
  await waitUntilTableExists({ client, maxWaitTime: 30, minDelay: 0.1, maxDelay: 1 }, { TableName: tableName });
  return true;
};

/** Every item of the table, as stored. */
const scanAll = async (client: DynamoDBClient, tableName: string) => {
  const items: Record<string, AttributeValue>[] = [];
  let start: Record<string, AttributeValue> | undefined;
  do {
    const page: ScanCommandOutput = await client.send(
      new ScanCommand({ TableName: tableName, ...(start ? { ExclusiveStartKey: start } : {}) }),
    );
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start);
  return items;
};

/**
 * Creates the table unless it exists. A table kept in a state directory from before an index of
 * lib/table.ts existed is re-created with its items (dynalite cannot add an index to a table), and
 * `recreated` tells the caller to backfill the index attributes (docs/data-model.md).
 */
export const ensureTable = async (endpoint: string, tableName: string) => {
  const client = tableClient(endpoint);
  try {
    if (await createTable(client, tableName)) return { recreated: false };
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    const present = new Set((Table?.GlobalSecondaryIndexes ?? []).map((index) => index.IndexName));
    if (tableIndexes.every((index) => present.has(index.name))) return { recreated: false };
    const items = await scanAll(client, tableName);
    await dropTable(endpoint, tableName);
    await createTable(client, tableName);
    for (let i = 0; i < items.length; i += 25) {
      let requests = items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } }));
      while (requests.length > 0) {
        const { UnprocessedItems } = await client.send(
          new BatchWriteItemCommand({ RequestItems: { [tableName]: requests } }),
        );
        requests = (UnprocessedItems?.[tableName] ?? []) as typeof requests;
      }
    }
    return { recreated: true };
  } finally {
    client.destroy();
  }
};

/** Deletes the table if it exists and waits until it is gone. */
export const dropTable = async (endpoint: string, tableName: string) => {
  const client = tableClient(endpoint);
  try {
    await client.send(new DeleteTableCommand({ TableName: tableName }));
    await waitUntilTableNotExists({ client, maxWaitTime: 60, minDelay: 0.1, maxDelay: 1 }, { TableName: tableName });
  } catch (error) {
    if (!(error instanceof ResourceNotFoundException)) throw error;
  } finally {
    client.destroy();
  }
};
