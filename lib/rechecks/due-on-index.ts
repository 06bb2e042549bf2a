import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '#lib/aws/dynamodb';
import { tableName } from '#lib/config/resources';
import { GSI1 } from '#lib/table';

/**
 * At most `limit` items of one gsi1 partition of a due-time queue (the re-checks, the decision deadlines:
 * sort keys `<due time>#<ids>`) that are due at `upTo` or before, soonest first, as stored.
 */
export const dueOnIndex = async (partition: string, upTo: string, limit: number) => {
  const { Items } = await dynamo.send(
    new QueryCommand({
      TableName: tableName(),
      IndexName: GSI1.name,
      // `~` sorts after every id character: every key whose due time is upTo or before.
      KeyConditionExpression: '#pk = :partition AND #sk <= :upTo',
      ExpressionAttributeNames: { '#pk': GSI1.partition, '#sk': GSI1.sort },
      ExpressionAttributeValues: { ':partition': partition, ':upTo': `${upTo}#~` },
      Limit: limit,
    }),
  );
  return Items ?? [];
};
