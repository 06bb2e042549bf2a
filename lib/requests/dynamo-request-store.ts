import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '#lib/aws/clients';
import { tableName } from '#lib/config';
import { keys } from '#lib/keys';
import { type RequestStore, type StoredRequest, VersionConflict } from './request-store.ts';

/*
 * The request document is stored as a JSON string: it round-trips exactly what the client sent
 * (key order, number precision) without DynamoDB's type mapping getting in the way.
 */
const toItem = (request: StoredRequest) => ({
  ...keys.request(request.clientId, request.externalId),
  entity: 'Request',
  clientId: request.clientId,
  externalId: request.externalId,
  document: JSON.stringify(request.document),
  authorization: request.authorization,
  version: request.version,
  createdAt: request.createdAt,
  updatedAt: request.updatedAt,
});

const conditionalPut = async (item: Record<string, unknown>, condition: string, values?: Record<string, unknown>) => {
  try {
    await dynamo.send(
      new PutCommand({
        TableName: tableName(),
        Item: item,
        ConditionExpression: condition,
        ...(values ? { ExpressionAttributeValues: values } : {}),
      }),
    );
  } catch (error) {
    if ((error as Error).name === 'ConditionalCheckFailedException') throw new VersionConflict();
    throw error;
  }
};

export const dynamoRequestStore: RequestStore = {
  get: async (clientId, externalId) => {
    const { Item } = await dynamo.send(
      new GetCommand({ TableName: tableName(), Key: keys.request(clientId, externalId), ConsistentRead: true }),
    );
    if (!Item) return undefined;
    return {
      clientId: Item.clientId,
      externalId: Item.externalId,
      document: JSON.parse(Item.document),
      authorization: Item.authorization,
      version: Item.version,
      createdAt: Item.createdAt,
      updatedAt: Item.updatedAt,
    };
  },
  create: (request) => conditionalPut(toItem(request), 'attribute_not_exists(pk)'),
  update: (request) => conditionalPut(toItem(request), 'version = :previous', { ':previous': request.version - 1 }),
};
