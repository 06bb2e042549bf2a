import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { orVersionConflict } from '#lib/aws/conditional-writes';
import { dynamo } from '#lib/aws/dynamodb';
import { tableName } from '#lib/config/resources';
import { payerConnectionEntity, type StoredPayerConnection } from '#lib/entities/payer-connection';

/** One connection's item: a consistent read, and a put conditional on the version read. */
const { key, toItem, fromItem } = payerConnectionEntity;

export async function getConnection(clientId: string, externalId: string): Promise<StoredPayerConnection | undefined> {
  const { Item } = await dynamo.send(
    new GetCommand({ TableName: tableName(), Key: key({ clientId, externalId }), ConsistentRead: true }),
  );
  return Item && payerConnectionEntity.matches(Item) ? fromItem(Item) : undefined;
}

export async function putConnection(connection: StoredPayerConnection, expectedVersion: number): Promise<void> {
  await orVersionConflict(
    dynamo.send(
      new PutCommand({
        TableName: tableName(),
        Item: toItem(connection),
        ConditionExpression: 'version = :expected',
        ExpressionAttributeValues: { ':expected': expectedVersion },
      }),
    ),
  );
}
