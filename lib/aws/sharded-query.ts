import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { tableName } from '#lib/config/resources';
import { firstInOrder } from '#lib/shard-merge';
import { GSI1 } from '#lib/table';
import { dynamo } from './dynamodb.ts';

type Item = Record<string, unknown>;

/**
 * The first `limit` items of several gsi1 partitions (a queue's shards, lib/table-shards.ts) in gsi1sk
 * order, as one Query of one partition would give them; `below`: only sort keys before it. Eventually
 * consistent, as every index read.
 */
export const queryShardsInOrder = ({
  partitions,
  limit,
  below,
}: {
  partitions: readonly string[];
  limit: number;
  below?: string;
}): Promise<Item[]> =>
  firstInOrder<Item, Item>(
    partitions,
    limit,
    async (partition, pageLimit, start) => {
      const { Items, LastEvaluatedKey } = await dynamo.send(
        new QueryCommand({
          TableName: tableName(),
          IndexName: GSI1.name,
          KeyConditionExpression: below === undefined ? '#pk = :pk' : '#pk = :pk AND #sk < :below',
          ExpressionAttributeNames: { '#pk': GSI1.partition, ...(below === undefined ? {} : { '#sk': GSI1.sort }) },
          ExpressionAttributeValues: { ':pk': partition, ...(below === undefined ? {} : { ':below': below }) },
          Limit: pageLimit,
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      );
      return { items: Items ?? [], ...(LastEvaluatedKey ? { next: LastEvaluatedKey } : {}) };
    },
    (item) => String(item[GSI1.sort]),
  );
