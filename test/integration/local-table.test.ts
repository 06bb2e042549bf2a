import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  PutItemCommand,
  ScanCommand,
} from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { GSI1, TABLE_KEY, tableIndexes } from '#lib/table';
import { type Emulator, startDynalite } from '#local/emulators';
import { ensureTable, localCredentials } from '#local/table';

/*
 * A state directory kept from before an index existed holds a table without it, and dynalite cannot
 * add an index to a table: the local stack re-creates the table with its items (then backfills the
 * portal accounts' index attributes: portal-accounts-indexes.test.ts).
 */
let db: Emulator;
let client: DynamoDBClient;
beforeAll(async () => {
  db = await startDynalite({});
  client = new DynamoDBClient({
    endpoint: db.endpoint,
    region: localCredentials.AWS_REGION,
    credentials: {
      accessKeyId: localCredentials.AWS_ACCESS_KEY_ID,
      secretAccessKey: localCredentials.AWS_SECRET_ACCESS_KEY,
    },
  });
});
afterAll(async () => {
  client?.destroy();
  await db?.close();
});

it('re-creates a table from before an index existed, keeping every item, and leaves a current one alone', async () => {
  const TableName = 'before-indexes';
  const keys = [TABLE_KEY.partition, TABLE_KEY.sort, GSI1.partition, GSI1.sort];
  await client.send(
    new CreateTableCommand({
      TableName,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: keys.map((name) => ({ AttributeName: name, AttributeType: 'S' })),
      KeySchema: [
        { AttributeName: TABLE_KEY.partition, KeyType: 'HASH' },
        { AttributeName: TABLE_KEY.sort, KeyType: 'RANGE' },
      ],
      GlobalSecondaryIndexes: [
        {
          IndexName: GSI1.name,
          KeySchema: [
            { AttributeName: GSI1.partition, KeyType: 'HASH' },
            { AttributeName: GSI1.sort, KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        },
      ],
    }),
  );
  // More than one BatchWriteItem's worth (25).
  const items = Array.from({ length: 60 }, (_, i) => ({
    pk: { S: `ITEM#${i}` },
    sk: { S: 'ITEM' },
    gsi1pk: { S: 'ITEMS' },
    gsi1sk: { S: String(i).padStart(3, '0') },
    payload: { M: { n: { N: String(i) }, tags: { L: [{ S: 'a' }] } } },
  }));
  for (const Item of items) await client.send(new PutItemCommand({ TableName, Item }));

  expect(await ensureTable(db.endpoint, TableName)).toEqual({ recreated: true });
  const { Table } = await client.send(new DescribeTableCommand({ TableName }));
  expect(Table?.GlobalSecondaryIndexes?.map((index) => index.IndexName).sort()).toEqual(
    tableIndexes.map((index) => index.name).sort(),
  );
  const { Items = [] } = await client.send(new ScanCommand({ TableName }));
  const byKey = (item: Record<string, any>) => item.pk.S as string;
  expect([...Items].sort((a, b) => byKey(a).localeCompare(byKey(b)))).toEqual(
    [...items].sort((a, b) => byKey(a).localeCompare(byKey(b))),
  );

  expect(await ensureTable(db.endpoint, TableName)).toEqual({ recreated: false });
});
