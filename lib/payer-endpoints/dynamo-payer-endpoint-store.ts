import { DeleteCommand, GetCommand, PutCommand, QueryCommand, type QueryCommandOutput } from '@aws-sdk/lib-dynamodb';
import { conditionalPut, isConditionFailure, orVersionConflict } from '#lib/aws/conditional-writes';
import { dynamo } from '#lib/aws/dynamodb';
import { tableName } from '#lib/config/resources';
import { payerEndpointEntity, type StoredPayerEndpoint } from '#lib/entities/payer-endpoint';
import { GSI1 } from '#lib/table';
import type { PayerEndpointStore } from './payer-endpoint-store.ts';

/*
 * The payer endpoint directory on DynamoDB: one item per payer (docs/data-model.md), conditional writes
 * on its version; the list reads gsi1's one partition, page after page (never a Scan).
 */
const { key, toItem, fromItem, keys } = payerEndpointEntity;

async function getEndpoint(payerId: string): Promise<StoredPayerEndpoint | undefined> {
  const { Item } = await dynamo.send(
    new GetCommand({ TableName: tableName(), Key: key({ payerId }), ConsistentRead: true }),
  );
  return Item && payerEndpointEntity.matches(Item) ? fromItem(Item) : undefined;
}

async function updateEndpoint(endpoint: StoredPayerEndpoint, expectedVersion: number): Promise<void> {
  await orVersionConflict(
    dynamo.send(
      new PutCommand({
        TableName: tableName(),
        Item: toItem(endpoint),
        ConditionExpression: 'version = :expected',
        ExpressionAttributeValues: { ':expected': expectedVersion },
      }),
    ),
  );
}

async function deleteEndpoint(payerId: string): Promise<boolean> {
  try {
    await dynamo.send(
      new DeleteCommand({
        TableName: tableName(),
        Key: key({ payerId }),
        ConditionExpression: 'attribute_exists(pk) AND entity = :entity',
        ExpressionAttributeValues: { ':entity': payerEndpointEntity.name },
      }),
    );
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}

async function listEndpoints(): Promise<StoredPayerEndpoint[]> {
  const endpoints: StoredPayerEndpoint[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page: QueryCommandOutput = await dynamo.send(
      new QueryCommand({
        TableName: tableName(),
        IndexName: GSI1.name,
        KeyConditionExpression: '#pk = :pk',
        ExpressionAttributeNames: { '#pk': GSI1.partition },
        ExpressionAttributeValues: { ':pk': keys.gsi1pk.render({}) },
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    endpoints.push(...(page.Items ?? []).filter(payerEndpointEntity.matches).map(fromItem));
    start = page.LastEvaluatedKey;
  } while (start);
  return endpoints;
}

export const dynamoPayerEndpointStore: PayerEndpointStore = {
  get: getEndpoint,
  create: (endpoint) => conditionalPut(toItem(endpoint), 'attribute_not_exists(pk)'),
  update: updateEndpoint,
  delete: deleteEndpoint,
  list: listEndpoints,
};
