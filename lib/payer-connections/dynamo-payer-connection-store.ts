import { DeleteCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { conditionalPut, orVersionConflict } from '#lib/aws/conditional-writes';
import { dynamo } from '#lib/aws/dynamodb';
import { tableName } from '#lib/config/resources';
import { payerConnectionEntity } from '#lib/entities/payer-connection';
import { GSI1, GSI2, TABLE_KEY } from '#lib/table';
import { markAttention } from './dynamo-payer-connection-attention.ts';
import { getConnection, putConnection } from './dynamo-payer-connection-items.ts';
import type { PayerConnectionPage, PayerConnectionPageQuery, PayerConnectionStore } from './payer-connection-store.ts';

/*
 * The payer-connection store on DynamoDB (keys: lib/entities/payer-connection.ts): one item per
 * connection, every write conditional on its version. The item's read and versioned put are in
 * dynamo-payer-connection-items.ts, the automation's attention mark in dynamo-payer-connection-attention.ts.
 */
const { key, keys, toItem, fromItem } = payerConnectionEntity;

async function deleteConnection(clientId: string, externalId: string, expectedVersion: number): Promise<void> {
  await orVersionConflict(
    dynamo.send(
      new DeleteCommand({
        TableName: tableName(),
        Key: key({ clientId, externalId }),
        ConditionExpression: 'version = :expected',
        ExpressionAttributeValues: { ':expected': expectedVersion },
      }),
    ),
  );
}

/** Entries of the organization's active partition for the payer read per query (the first is almost always it). */
const ACTIVE_CANDIDATES = 5;

/**
 * gsi2's partition of the organization's active connections to the payer, oldest first; each entry is
 * read again consistently (an index lags its table), and the first still active there is the answer.
 */
async function findActive(clientId: string, organizationId: string, payerId: string) {
  const partition = keys.gsi2pk.render({ clientId, organizationId, payerId, status: 'active' });
  let start: Record<string, unknown> | undefined;
  do {
    const out = await dynamo.send(
      new QueryCommand({
        TableName: tableName(),
        IndexName: GSI2.name,
        KeyConditionExpression: '#pk = :pk',
        ExpressionAttributeNames: { '#pk': GSI2.partition, '#externalId': 'externalId' },
        ExpressionAttributeValues: { ':pk': partition },
        ProjectionExpression: '#externalId',
        Limit: ACTIVE_CANDIDATES,
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    for (const entry of out.Items ?? []) {
      const connection = await getConnection(clientId, String(entry.externalId));
      const current =
        connection?.status === 'active' &&
        connection.organizationId === organizationId &&
        connection.payerId === payerId;
      if (current) return connection;
    }
    start = out.LastEvaluatedKey;
  } while (start);
  return undefined;
}

/** gsi1 from a position: one item more than the page, to tell whether another page follows. */
async function page({
  clientId,
  organizationId,
  after,
  limit,
}: PayerConnectionPageQuery): Promise<PayerConnectionPage> {
  const out = await dynamo.send(
    new QueryCommand({
      TableName: tableName(),
      IndexName: GSI1.name,
      KeyConditionExpression: after === undefined ? '#pk = :pk' : '#pk = :pk AND #sk > :after',
      ExpressionAttributeNames: { '#pk': GSI1.partition, ...(after === undefined ? {} : { '#sk': GSI1.sort }) },
      ExpressionAttributeValues: {
        ':pk': keys.gsi1pk.render({ clientId, organizationId }),
        ...(after === undefined ? {} : { ':after': after }),
      },
      Limit: limit + 1,
    }),
  );
  const found = (out.Items ?? []).filter(payerConnectionEntity.matches);
  if (found.length <= limit) return { items: found.map(fromItem) };
  const items = found.slice(0, limit);
  return { items: items.map(fromItem), next: String(items.at(-1)![GSI1.sort]) };
}

export const dynamoPayerConnectionStore: PayerConnectionStore = {
  get: getConnection,
  findActive,
  create: (connection) => conditionalPut(toItem(connection), `attribute_not_exists(${TABLE_KEY.partition})`),
  update: putConnection,
  delete: deleteConnection,
  page,
  markAttention,
};
