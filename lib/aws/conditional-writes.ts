import { PutCommand, UpdateCommand, type UpdateCommandInput, type UpdateCommandOutput } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '#lib/aws/dynamodb';
import { VersionConflict } from '#lib/concurrency';
import { tableName } from '#lib/config/resources';

/*
 * Optimistic concurrency for every store: a write conditional on what it expects to find. The
 * stores map DynamoDB's refusal to VersionConflict (lib/concurrency.ts), so services retry or
 * answer 409/412 without knowing DynamoDB.
 */

export const isConditionFailure = (error: unknown) =>
  (error as Error | undefined)?.name === 'ConditionalCheckFailedException';

/** A conditional write's answer; DynamoDB's refusal of its condition becomes VersionConflict. */
export const orVersionConflict = async <T>(write: Promise<T>): Promise<T> => {
  try {
    return await write;
  } catch (error) {
    if (isConditionFailure(error)) throw new VersionConflict();
    throw error;
  }
};

/** PutItem under `condition`; a failed condition becomes VersionConflict. */
export const conditionalPut = async (
  item: Record<string, unknown>,
  condition: string,
  values?: Record<string, unknown>,
): Promise<void> => {
  await orVersionConflict(
    dynamo.send(
      new PutCommand({
        TableName: tableName(),
        Item: item,
        ConditionExpression: condition,
        ...(values ? { ExpressionAttributeValues: values } : {}),
      }),
    ),
  );
};

/** UpdateItem (its ConditionExpression required); a failed condition becomes VersionConflict. */
export const conditionalUpdate = (
  update: Omit<UpdateCommandInput, 'TableName' | 'ConditionExpression'> & { ConditionExpression: string },
): Promise<UpdateCommandOutput> =>
  orVersionConflict(dynamo.send(new UpdateCommand({ TableName: tableName(), ...update })));
