import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { conditionalPut, conditionalUpdate, isConditionFailure } from '#lib/aws/conditional-writes';
import { dynamo } from '#lib/aws/dynamodb';
import { type TransactItem, transactWrite } from '#lib/aws/transactions';
import { tableName } from '#lib/config/resources';
import { authorizationChangeEntity } from '#lib/entities/authorization-history';
import { requestEntity } from '#lib/entities/request';
import { outboxPutsOf } from '#lib/events/dynamo-outbox-store';
import { deadlineDeleteOf, deadlinePutOf } from '#lib/rechecks/dynamo-deadline-store';
import { recheckDeleteOf, recheckPutOf } from '#lib/rechecks/dynamo-recheck-store';
import type { RequestStore } from './request-store.ts';

const { toItem, fromItem } = requestEntity;

/** A change's history entry, event and what it does to the re-checks (AuthorizationWrite's change). */
const changeItemsOf = (
  clientId: string,
  externalId: string,
  change: NonNullable<Parameters<RequestStore['setAuthorization']>[0]['change']>,
): TransactItem[] => {
  const entry = {
    TableName: tableName(),
    Item: authorizationChangeEntity.toItem(change.entry),
    ConditionExpression: 'attribute_not_exists(pk)',
  };
  const recheck = change.recheck;
  return [
    { Put: entry },
    ...outboxPutsOf(change.events),
    ...(recheck ? ['start' in recheck ? recheckPutOf(recheck.start) : recheckDeleteOf({ clientId, externalId })] : []),
  ];
};

export const dynamoRequestStore: RequestStore = {
  get: async (clientId, externalId) => {
    const { Item } = await dynamo.send(
      new GetCommand({
        TableName: tableName(),
        Key: requestEntity.key({ clientId, externalId }),
        ConsistentRead: true,
      }),
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
          Key: requestEntity.key({ clientId, externalId }),
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
            ':document': requestEntity.attributes.document.write(document),
            ':now': now,
            ':authorization': initialAuthorization,
            ':entity': requestEntity.name,
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
  setAuthorization: async ({ clientId, externalId, authorization, version, now, change, deadline }) => {
    const update = {
      TableName: tableName(),
      Key: requestEntity.key({ clientId, externalId }),
      UpdateExpression: 'SET #authorization = :authorization, #updatedAt = :now ADD #version :one',
      ConditionExpression: '#entity = :entity AND #version = :version',
      ExpressionAttributeNames: {
        '#authorization': 'authorization',
        '#updatedAt': 'updatedAt',
        '#version': 'version',
        '#entity': 'entity',
      },
      ExpressionAttributeValues: {
        ':authorization': requestEntity.attributes.authorization.write(authorization),
        ':now': now,
        ':one': 1,
        ':entity': requestEntity.name,
        ':version': version,
      },
    };
    if (!change && !deadline) {
      await conditionalUpdate(update);
      return;
    }
    const watch = deadline
      ? ['start' in deadline ? deadlinePutOf(deadline.start) : deadlineDeleteOf({ clientId, externalId })]
      : [];
    await transactWrite([{ Update: update }, ...(change ? changeItemsOf(clientId, externalId, change) : []), ...watch]);
  },
};
