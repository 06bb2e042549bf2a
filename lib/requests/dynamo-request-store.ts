import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { conditionalPut, isConditionFailure } from '#lib/aws/conditional-writes';
import { dynamo } from '#lib/aws/dynamodb';
import { tableName } from '#lib/config';
import { keys } from '#lib/keys';
import type { RequestStore, StoredRequest } from './request-store.ts';

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

const fromItem = (item: Record<string, unknown>): StoredRequest => ({
  clientId: item.clientId as string,
  externalId: item.externalId as string,
  document: JSON.parse(item.document as string),
  authorization: item.authorization as StoredRequest['authorization'],
  version: item.version as number,
  createdAt: item.createdAt as string,
  updatedAt: item.updatedAt as string,
});

export const dynamoRequestStore: RequestStore = {
  get: async (clientId, externalId) => {
    const { Item } = await dynamo.send(
      new GetCommand({ TableName: tableName(), Key: keys.request(clientId, externalId), ConsistentRead: true }),
    );
    return Item ? fromItem(Item) : undefined;
  },
  create: (request) => conditionalPut(toItem(request), 'attribute_not_exists(pk)'),
  update: (request) => conditionalPut(toItem(request), 'version = :previous', { ':previous': request.version - 1 }),
  putDocument: async (clientId, externalId, document, { mustExist, initialAuthorization, now }) => {
    try {
      const { Attributes } = await dynamo.send(
        new UpdateCommand({
          TableName: tableName(),
          Key: keys.request(clientId, externalId),
          // Every attribute by placeholder: several names here are DynamoDB reserved words.
          UpdateExpression:
            'SET #document = :document, #updatedAt = :now, #createdAt = if_not_exists(#createdAt, :now), ' +
            '#authorization = if_not_exists(#authorization, :authorization), #entity = :entity, ' +
            '#clientId = :clientId, #externalId = :externalId ADD #version :one',
          ...(mustExist ? { ConditionExpression: 'attribute_exists(pk)' } : {}),
          ExpressionAttributeNames: Object.fromEntries(
            ['document', 'updatedAt', 'createdAt', 'authorization', 'entity', 'clientId', 'externalId', 'version'].map(
              (name) => [`#${name}`, name],
            ),
          ),
          ExpressionAttributeValues: {
            ':document': JSON.stringify(document),
            ':now': now,
            ':authorization': initialAuthorization,
            ':entity': 'Request',
            ':clientId': clientId,
            ':externalId': externalId,
            ':one': 1,
          },
          ReturnValues: 'ALL_NEW',
        }),
      );
      return fromItem(Attributes!);
    } catch (error) {
      if (isConditionFailure(error)) return undefined;
      throw error;
    }
  },
};
