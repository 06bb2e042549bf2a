import { ScanCommand, type ScanCommandOutput, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { isConditionFailure } from '#lib/aws/conditional-writes';
import { dynamo } from '#lib/aws/dynamodb';
import { tableName } from '#lib/config/resources';
import { outboxEntity } from '#lib/entities/outbox';
import { clientEntity } from '#lib/entities/tenancy';
import { GSI1, GSI2, TABLE_KEY } from '#lib/table';

/** Sets an index's two keys on an item that still exists; false when it is gone (an outbox item's TTL). */
async function setIndexKeys(key: Record<string, unknown>, index: typeof GSI1 | typeof GSI2, pk: string, sk: string) {
  try {
    await dynamo.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: { [TABLE_KEY.partition]: key[TABLE_KEY.partition], [TABLE_KEY.sort]: key[TABLE_KEY.sort] },
        UpdateExpression: 'SET #pk = :pk, #sk = :sk',
        ConditionExpression: 'attribute_exists(#key)',
        ExpressionAttributeNames: { '#pk': index.partition, '#sk': index.sort, '#key': TABLE_KEY.partition },
        ExpressionAttributeValues: { ':pk': pk, ':sk': sk },
      }),
    );
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}

/**
 * What replay-events reads, for items written before it (docs/events.md, "Replaying events"): outbox
 * items without a client's-events-by-time key (gsi2) and clients outside the client directory (gsi1). A
 * Scan of the table (the key attributes and the few that make the keys: no event's data), run once by
 * operators after deploying (admin `backfill-replay-indexes`; again after an interruption: it skips what
 * is done) and by the local stack at its start. The keys set are the entities' own, so the next write of
 * an item (every write of these items is whole or leaves them alone) agrees with them.
 */
export const backfillReplayIndexes = async () => {
  let scanned = 0;
  let eventsIndexed = 0;
  let clientsIndexed = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const page: ScanCommandOutput = await dynamo.send(
      new ScanCommand({
        TableName: tableName(),
        FilterExpression:
          '(#entity = :outbox AND attribute_not_exists(#gsi2pk)) OR (#entity = :client AND attribute_not_exists(#gsi1pk))',
        ProjectionExpression: '#pkName, #skName, #entity, clientId, eventId, occurredAt',
        ExpressionAttributeNames: {
          '#pkName': TABLE_KEY.partition,
          '#skName': TABLE_KEY.sort,
          '#entity': 'entity',
          '#gsi1pk': GSI1.partition,
          '#gsi2pk': GSI2.partition,
        },
        ExpressionAttributeValues: { ':outbox': outboxEntity.name, ':client': clientEntity.name },
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    scanned += page.ScannedCount ?? 0;
    for (const item of page.Items ?? []) {
      const { clientId, eventId, occurredAt } = item as Record<string, string>;
      if (item.entity === outboxEntity.name) {
        const pk = outboxEntity.keys.gsi2pk.render({ clientId: clientId! });
        const sk = outboxEntity.keys.gsi2sk.render({ occurredAt: occurredAt!, eventId: eventId! });
        if (await setIndexKeys(item, GSI2, pk, sk)) eventsIndexed++;
      } else {
        const pk = clientEntity.keys.gsi1pk.render({});
        if (await setIndexKeys(item, GSI1, pk, clientEntity.keys.gsi1sk.render({ clientId: clientId! }))) {
          clientsIndexed++;
        }
      }
    }
    start = page.LastEvaluatedKey;
  } while (start);
  return { scanned, eventsIndexed, clientsIndexed };
};
