import {
  CreateTableCommand,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  TransactGetItemsCommand,
  TransactionCanceledException,
  TransactWriteItemsCommand,
} from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Emulator, startDynalite } from '#local/emulators';
import { localCredentials } from '#local/table';

/*
 * dynalite has no transactions; the local stack's stand-in (local/dynalite-transactions.ts) gives it
 * TransactWriteItems and TransactGetItems, used here through the real SDK as the service uses them.
 */
const TableName = 'transactions';
let db: Emulator;
let client: DynamoDBClient;

const key = (pk: string, sk = 'ITEM') => ({ pk: { S: pk }, sk: { S: sk } });
const read = async (pk: string, sk = 'ITEM') =>
  (await client.send(new GetItemCommand({ TableName, Key: key(pk, sk), ConsistentRead: true }))).Item;
const counterOf = async (pk: string) => Number((await read(pk))?.n?.N ?? 0);
const increment = (pk: string, expected: number) => ({
  Update: {
    TableName,
    Key: key(pk),
    UpdateExpression: 'SET n = :next',
    ConditionExpression: 'attribute_not_exists(n) OR n = :expected',
    ExpressionAttributeValues: { ':next': { N: String(expected + 1) }, ':expected': { N: String(expected) } },
  },
});

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
  await client.send(
    new CreateTableCommand({
      TableName,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [
        { AttributeName: 'pk', AttributeType: 'S' },
        { AttributeName: 'sk', AttributeType: 'S' },
      ],
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
    }),
  );
});
afterAll(async () => {
  client?.destroy();
  await db?.close();
});

describe('transactions on the local table', () => {
  it('writes every item of a transaction: a put, an update, a delete, a condition that holds', async () => {
    await client.send(new PutItemCommand({ TableName, Item: { ...key('doomed'), v: { S: 'x' } } }));
    await client.send(new PutItemCommand({ TableName, Item: { ...key('guard'), open: { BOOL: true } } }));
    await client.send(
      new TransactWriteItemsCommand({
        TransactItems: [
          { Put: { TableName, Item: { ...key('change', 'OUTBOX#1'), type: { S: 'changed' } } } },
          increment('change', 0),
          { Delete: { TableName, Key: key('doomed') } },
          {
            ConditionCheck: {
              TableName,
              Key: key('guard'),
              ConditionExpression: '#open = :yes',
              ExpressionAttributeNames: { '#open': 'open' },
              ExpressionAttributeValues: { ':yes': { BOOL: true } },
            },
          },
        ],
      }),
    );
    expect(await read('change', 'OUTBOX#1')).toEqual({ ...key('change', 'OUTBOX#1'), type: { S: 'changed' } });
    expect(await counterOf('change')).toBe(1);
    expect(await read('doomed')).toBeUndefined();
    expect(await read('guard')).toEqual({ ...key('guard'), open: { BOOL: true } });
  });

  it('writes nothing when one condition fails, and says which item with a reason per item', async () => {
    await client.send(new PutItemCommand({ TableName, Item: { ...key('stays'), v: { S: 'before' } } }));
    await client.send(new PutItemCommand({ TableName, Item: { ...key('never'), n: { N: '1' } } }));
    const refused = client.send(
      new TransactWriteItemsCommand({
        TransactItems: [
          { Put: { TableName, Item: { ...key('stays'), v: { S: 'after' } } } },
          { Put: { TableName, Item: { ...key('never', 'OUTBOX#2') } } },
          increment('never', 5),
          { ConditionCheck: { TableName, Key: key('absent'), ConditionExpression: 'attribute_exists(pk)' } },
        ],
      }),
    );
    await expect(refused).rejects.toBeInstanceOf(TransactionCanceledException);
    const error = (await refused.catch((caught: unknown) => caught)) as TransactionCanceledException;
    expect(error.CancellationReasons?.map((reason) => reason.Code)).toEqual([
      'None',
      'None',
      'ConditionalCheckFailed',
      'None',
    ]);
    expect(await read('stays')).toEqual({ ...key('stays'), v: { S: 'before' } });
    expect(await read('never', 'OUTBOX#2')).toBeUndefined();
    expect(await counterOf('never')).toBe(1);
    expect(await read('absent')).toBeUndefined();
  });

  it('refuses a condition check on a missing item without creating it', async () => {
    const refused = client.send(
      new TransactWriteItemsCommand({
        TransactItems: [
          { Put: { TableName, Item: key('with-check') } },
          { ConditionCheck: { TableName, Key: key('missing'), ConditionExpression: 'attribute_exists(pk)' } },
        ],
      }),
    );
    await expect(refused).rejects.toBeInstanceOf(TransactionCanceledException);
    expect(await read('missing')).toBeUndefined();
    expect(await read('with-check')).toBeUndefined();
  });

  it('refuses two operations on one item, as DynamoDB does', async () => {
    await expect(
      client.send(new TransactWriteItemsCommand({ TransactItems: [increment('twice', 0), increment('twice', 1)] })),
    ).rejects.toThrow(/multiple operations on one item/);
    expect(await read('twice')).toBeUndefined();
  });

  it('serializes concurrent transactions: conditional increments lose none and apply none twice', async () => {
    const attempts = await Promise.allSettled(
      Array.from({ length: 20 }, () =>
        client.send(new TransactWriteItemsCommand({ TransactItems: [increment('race', 0)] })),
      ),
    );
    expect(attempts.filter((attempt) => attempt.status === 'fulfilled')).toHaveLength(1);
    expect(await counterOf('race')).toBe(1);
  });

  it('reads several items at once (TransactGetItems)', async () => {
    await client.send(new PutItemCommand({ TableName, Item: { ...key('a'), v: { S: '1' } } }));
    const { Responses } = await client.send(
      new TransactGetItemsCommand({
        TransactItems: [{ Get: { TableName, Key: key('a') } }, { Get: { TableName, Key: key('nothing') } }],
      }),
    );
    expect(Responses).toEqual([{ Item: { ...key('a'), v: { S: '1' } } }, {}]);
  });
});
