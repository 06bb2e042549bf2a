import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import {
  CreateTableCommand,
  DynamoDBClient,
  PutItemCommand,
  QueryCommand,
  ScanCommand,
  waitUntilTableExists,
} from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { type Emulator, startDynalite } from '#local/emulators';
import { localCredentials } from '#local/table';
import { watchLevelStore } from '#test/support/level-store';

/*
 * A long-running local stack keeps what is stored, at about its size (local/dynalite-memory.ts; the
 * figures under load: docs/local-stack.md, "Memory"). Measured after a full GC, through the real SDK.
 */
const TableName = 'memory';
const MiB = 1024 * 1024;

let db: Emulator;
let client: DynamoDBClient;
const level = watchLevelStore();

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const retained = async () => {
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((resolve) => setImmediate(resolve));
  }
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return heapUsed + arrayBuffers;
};
const growthOf = async (work: () => Promise<void>) => {
  const before = await retained();
  await work();
  return (await retained()) - before;
};

const clientOf = (endpoint: string) =>
  new DynamoDBClient({
    endpoint,
    region: localCredentials.AWS_REGION,
    credentials: {
      accessKeyId: localCredentials.AWS_ACCESS_KEY_ID,
      secretAccessKey: localCredentials.AWS_SECRET_ACCESS_KEY,
    },
  });

/** Creates the table and waits until it is ACTIVE: dynalite answers CreateTable before the table is there. */
const createTable = async (on: DynamoDBClient) => {
  await on.send(
    new CreateTableCommand({
      TableName,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [
        { AttributeName: 'pk', AttributeType: 'S' },
        { AttributeName: 'sk', AttributeType: 'S' },
        { AttributeName: 'gsi1pk', AttributeType: 'S' },
      ],
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
      GlobalSecondaryIndexes: [
        {
          IndexName: 'gsi1',
          KeySchema: [{ AttributeName: 'gsi1pk', KeyType: 'HASH' }],
          Projection: { ProjectionType: 'ALL' },
        },
      ],
    }),
  );
  await waitUntilTableExists({ client: on, maxWaitTime: 30, minDelay: 0.1, maxDelay: 1 }, { TableName });
};

beforeAll(async () => {
  db = await startDynalite({});
  client = clientOf(db.endpoint);
  await createTable(client);
});

afterAll(async () => {
  client?.destroy();
  await db?.close();
});

/*
 * dynalite closed no storage iterator of a Query or Scan, and each open one kept the version of the
 * in-memory tree it started on, so every item version overwritten after it stayed. One large item is
 * overwritten again and again, each time followed by the reads the service makes (a Query, a paged
 * Query of an index, a paged Scan). Before: about 36 MiB for 60 rounds.
 */
const ROUNDS = 60;
/** Near DynamoDB's 400 KB item limit: each version left behind shows. */
const LARGE_VALUE_BYTES = 300_000;

const round = async (n: number, on = client) => {
  await on.send(
    new PutItemCommand({
      TableName,
      Item: {
        pk: { S: 'REQUEST#1' },
        sk: { S: 'REQUEST' },
        gsi1pk: { S: 'CLIENT#1' },
        body: { S: String(n % 10).repeat(LARGE_VALUE_BYTES) },
      },
    }),
  );
  const key = { ':pk': { S: 'REQUEST#1' } };
  await on.send(new QueryCommand({ TableName, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: key }));
  await on.send(
    new QueryCommand({
      TableName,
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :pk',
      ExpressionAttributeValues: { ':pk': { S: 'CLIENT#1' } },
      Limit: 1,
    }),
  );
  await on.send(new ScanCommand({ TableName, Limit: 1 }));
};

it('keeps about one version of an item overwritten between reads, however many rounds', async () => {
  for (let n = 0; n < 5; n++) await round(n);
  const grown = await growthOf(async () => {
    for (let n = 0; n < ROUNDS; n++) await round(n);
  });
  // One item and its index copy are 0.6 MB.
  expect(grown, `${(grown / MiB).toFixed(1)} MiB after ${ROUNDS} rounds`).toBeLessThan(8 * MiB);
});

/*
 * memory-level kept each key and value as the Buffer it was handed: under 4 KB, a slice of one of Node's
 * shared 8 KB pool slabs, which lives while any of its slices does. Before: about 9.4 MiB for these
 * 2,000 items of some 330 bytes (0.7 MB of keys and values).
 */
const SMALL_ITEMS = 2000;

it('keeps small items at about their size, not a pool slab each', async () => {
  const put = (n: number) =>
    client.send(
      new PutItemCommand({
        TableName,
        Item: { pk: { S: `SMALL#${n}` }, sk: { S: 'ITEM' }, body: { S: 'x'.repeat(300) } },
      }),
    );
  for (let n = 0; n < 50; n++) await put(n);
  const grown = await growthOf(async () => {
    for (let n = 50; n < 50 + SMALL_ITEMS; n++) await put(n);
  });
  // About 2.6 MiB with the tree's nodes and each entry's own Buffer objects.
  expect(grown, `${(grown / MiB).toFixed(1)} MiB for ${SMALL_ITEMS} items`).toBeLessThan(5 * MiB);
});

/*
 * On disk (`npm start` keeps its table in .local/), each open iterator held a native LevelDB iterator and
 * what it pins, outside the V8 heap: there the count of open iterators is what can be seen. Before: two
 * per Query and Scan, never closed.
 */
it('closes every storage iterator of an on-disk table once its read is answered', async () => {
  const directory = mkdtempSync(join(tmpdir(), 'local-table-memory-'));
  const onDisk = await startDynalite({ path: directory });
  const diskClient = clientOf(onDisk.endpoint);
  try {
    await createTable(diskClient);
    const before = level.openIterators;
    for (let n = 0; n < 10; n++) await round(n, diskClient);
    await vi.waitFor(() => expect(level.openIterators).toBe(before));
  } finally {
    diskClient.destroy();
    await onDisk.close();
    rmSync(directory, { recursive: true, force: true });
  }
});
